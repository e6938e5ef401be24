// The pieces `opmap query`'s subcommands share (query_command.cc, query_counters.cc): the
// parsed arguments, number and text formatting, the aligned table / CSV printer, the JSON
// tail with the collector's `unavailable` entries, and the error line for a failed call.
#ifndef OPMAP_CLI_QUERY_COMMON_H_
#define OPMAP_CLI_QUERY_COMMON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/report/json_writer.h"
#include "cli/grpc_client.h"
#include "cli/selection_flags.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::cli::query_internal {

using analysis::JsonWriter;

enum class Format { kTable, kJson, kCsv };

struct Args {
  std::string what;  // latency | breakdown | kernels
  ConnectionFlags connection;
  SelectionFlags selection;
  Format format = Format::kTable;
  opmap::v1::LatencySubject subject = opmap::v1::LATENCY_SUBJECT_KERNEL;
  std::vector<opmap::v1::GroupBy> group_by;
  std::vector<std::string> group_names;
  std::vector<double> quantiles = {0.5, 0.95, 0.99};
  uint32_t limit = 0;
  uint32_t top = 20;
  bool latency_flag = false, kernels_flag = false, rows_flag = false;
  bool has_range = false;
};

// A simple aligned table: text columns left, numbers right.
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<bool> numeric)
      : header_(std::move(header)), numeric_(std::move(numeric)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const {
    std::vector<size_t> width(header_.size());
    for (size_t c = 0; c < header_.size(); ++c) {
      width[c] = header_[c].size();
      for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
    }
    std::string out;
    auto line = [&](const std::vector<std::string>& r) {
      std::string l;
      for (size_t c = 0; c < r.size(); ++c) {
        if (c) l += "  ";
        std::string pad(width[c] - r[c].size(), ' ');
        l += numeric_[c] ? pad + r[c] : r[c] + (c + 1 < r.size() ? pad : "");
      }
      out += l + "\n";
    };
    line(header_);
    for (const auto& r : rows_) line(r);
    return out;
  }

 private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;
};

std::string QuantileName(double q);
std::string UsFromNs(int64_t ns);
std::string UsFromNs(double ns);
std::string Shorten(const std::string& s, size_t width);
std::string CsvField(const std::string& s);
std::string AccuracyText(double alpha);
void PrintUnavailable(const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list,
                      Format format);
void UnavailableJson(JsonWriter& w,
                     const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list);
// Closes a query's JSON object with its `unavailable` list and prints it on one line.
int FinishJson(JsonWriter& w,
               const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list);
// Prints rows as an aligned table (or CSV), then the collector's unavailable entries.
int PrintRows(const Args& args, std::vector<std::string> header, std::vector<bool> numeric,
              std::vector<std::vector<std::string>> rows, const std::string& empty_title,
              const std::string& title,
              const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& unavailable);
// Prints "COMMAND: <status> (collector ADDR)" with an auth hint; returns the exit code.
int CallFailed(const grpc::Status& status, const CollectorChannel& client,
               const std::string& endpoint, const char* command = "opmap query");

// `opmap query counters` (query_counters.cc).
int Counters(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range);

}  // namespace opmap::cli::query_internal

#endif  // OPMAP_CLI_QUERY_COMMON_H_
