// The line every report file carries so that `opmap signoff FILE` knows what it signs:
//   opmap-report kind=release baseline=r1 candidate=r2 verdict=rollback
// Markdown and HTML hold it in a comment (<!-- ... -->), JSON in the "marker" field.
// Values are percent-escaped (anything outside [A-Za-z0-9._:@/+-]), so a revision name
// can't end the comment or the JSON string.
#ifndef OPMAP_CLI_REPORT_MARKER_H_
#define OPMAP_CLI_REPORT_MARKER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace opmap::cli {

struct ReportMarker {
  std::string kind;       // "release" | "handoff" | "fit"
  std::string baseline;   // release: baseline arm; fit: the arms' key
  std::string candidate;  // release: candidate arm; handoff: the subject; fit: the values
  std::string verdict;    // release: the verdict; fit: the best arm
};

std::string FormatReportMarker(const ReportMarker& m);
// Finds the first marker in a report file's text. InvalidArgument when there is none
// ("no 'opmap-report' marker: not a report written by opmap report or opmap analyze")
// or it is malformed (naming the byte offset).
absl::StatusOr<ReportMarker> FindReportMarker(std::string_view text);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_REPORT_MARKER_H_
