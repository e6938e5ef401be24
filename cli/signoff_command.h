// `opmap signoff REPORT --owner NAME --role ROLE`: records an owner's approval of a
// report file (opmap report / opmap analyze --report) in the collector's store, by the
// SHA-256 of the file's bytes. The report's marker line (report_marker.h) says what it
// is; `opmap report` lists the sign-offs of the same baseline and candidate.
#ifndef OPMAP_CLI_SIGNOFF_COMMAND_H_
#define OPMAP_CLI_SIGNOFF_COMMAND_H_

#include <string>
#include <vector>

namespace opmap::cli {

// 0 recorded (or already recorded); 2 bad usage, unreadable or unmarked report, refused
// call; 1 collector unreachable.
int RunSignoff(const std::vector<std::string>& args);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_SIGNOFF_COMMAND_H_
