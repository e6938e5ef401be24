// The pieces `opmap query`'s subcommands share (query_command.cc, query_counters.cc): the
// parsed arguments, number and text formatting, the table / CSV printer (common/text), the JSON
// tail with the collector's `unavailable` entries, and the error line for a failed call.
#ifndef OPMAP_CLI_QUERY_COMMAND_PARTS_H_
#define OPMAP_CLI_QUERY_COMMAND_PARTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/text/aligned_table.h"
#include "common/text/csv.h"
#include "common/text/json_writer.h"
#include "cli/connection_flags.h"
#include "cli/selection_flags.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::cli::query_internal {

using text::JsonWriter;

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
  std::vector<double> tail_quantiles = {0.99, 0.95};  // tail: --quantile
  uint32_t limit = 0;
  uint32_t top = 20;
  bool latency_flag = false, kernels_flag = false, rows_flag = false, tail_flag = false;
  bool has_range = false;
};

using text::AlignedTable;
using text::CsvField;

std::string QuantileName(double q);
std::string UsFromNs(int64_t ns);
std::string UsFromNs(double ns);
std::string AccuracyText(double alpha);
void PrintUnavailable(const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list,
                      Format format);
void UnavailableJson(text::JsonWriter& w,
                     const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list);
// Closes a query's JSON object with its `unavailable` list and prints it on one line.
int FinishJson(text::JsonWriter& w,
               const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list);
// Prints rows as an aligned table (or CSV), then the collector's unavailable entries.
int PrintRows(const Args& args, std::vector<std::string> header, std::vector<bool> numeric,
              std::vector<std::vector<std::string>> rows, const std::string& empty_title,
              const std::string& title,
              const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& unavailable);
// Prints "COMMAND: <status> (collector ADDR)" with an auth hint; returns the exit code.
int CallFailed(const grpc::Status& status, const CollectorChannel& client,
               const std::string& endpoint, const char* command = "opmap query");

// `opmap query latency` (query_latency.cc).
int Latency(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range);
// `opmap query counters` (query_counters.cc).
int Counters(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range);
// `opmap query tail` (query_tail.cc), and what of `args` it refuses ("" = nothing).
int Tail(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range);
std::string TailArgsError(const Args& args);
// `opmap query power` (query_power.cc).
int Power(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range);

}  // namespace opmap::cli::query_internal

#endif  // OPMAP_CLI_QUERY_COMMAND_PARTS_H_
