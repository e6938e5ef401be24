#include "cli/query_command_parts.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/text/printable.h"
#include "common/text/units.h"

namespace opmap::cli::query_internal {

std::string QuantileName(double q) { return absl::StrFormat("p%g", q * 100); }

// Exact µs with 3 decimals from integer ns.
std::string UsFromNs(int64_t ns) { return text::FormatNanosAsMicros(ns); }
std::string UsFromNs(double ns) {
  if (!std::isfinite(ns)) return "unavailable";
  return absl::StrFormat("%.3f", ns / 1000.0);
}

std::string AccuracyText(double alpha) {
  if (alpha <= 0) return "percentiles exact";
  return absl::StrFormat("percentiles from DDSketch, relative error ≤ %.2f%%", alpha * 100);
}

// Prints `unavailable: <reason>` lines (stdout for tables, stderr for CSV so it stays
// one table); JSON carries them in its own array.
void PrintUnavailable(const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list,
                      Format format) {
  if (format == Format::kJson) return;
  std::ostream& out = format == Format::kCsv ? std::cerr : std::cout;
  for (const opmap::v1::Unavailable& u : list) {
    // What and why come from agents: shown printable (common/text/printable.h).
    out << "unavailable: " << (u.what().empty() ? "" : text::Printable(u.what()) + ": ")
        << text::Printable(u.reason()) << "\n";
  }
}

void UnavailableJson(text::JsonWriter& w,
                     const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list) {
  w.Key("unavailable").BeginArray();
  for (const opmap::v1::Unavailable& u : list) {
    w.BeginObject().Field("what", u.what()).Field("reason", u.reason()).EndObject();
  }
  w.EndArray();
}

// Closes a query's JSON object with its `unavailable` list and prints it on one line.
int FinishJson(text::JsonWriter& w,
               const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list) {
  UnavailableJson(w, list);
  w.EndObject();
  std::cout << w.str() << "\n";
  return std::cout.good() ? 0 : 1;
}




// The shared tail of every query subcommand: rows as CSV (header, then rows) or as an
// aligned table under a title line ("<empty_title>" when there are none), then the
// collector's `unavailable: <reason>` entries.
int PrintRows(const Args& args, std::vector<std::string> header, std::vector<bool> numeric,
              std::vector<std::vector<std::string>> rows, const std::string& empty_title,
              const std::string& title,
              const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& unavailable) {
  if (args.format == Format::kCsv) {
    std::cout << absl::StrJoin(header, ",") << "\n";
    for (const auto& row : rows) std::cout << absl::StrJoin(row, ",") << "\n";
  } else if (rows.empty()) {
    std::cout << empty_title << "\n";
  } else {
    std::cout << title << "\n";
    AlignedTable t(std::move(header), std::move(numeric));
    for (auto& row : rows) t.Add(std::move(row));
    std::cout << t.Render();
  }
  PrintUnavailable(unavailable, args.format);
  std::cout.flush();
  return std::cout.good() ? 0 : 1;
}

int CallFailed(const grpc::Status& status, const CollectorChannel& client,
               const std::string& endpoint, const char* command) {
  std::cerr << command << ": " << StatusLine(status) << AuthHint(status, client)
            << " (collector " << endpoint << ")\n";
  return ExitCodeFor(status);
}

}  // namespace opmap::cli::query_internal
