// `opmap query latency`: percentiles of kernels, operators or requests from the collector's
// rollups, by the groupings asked for.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/stats/ddsketch.h"
#include "cli/connection_flags.h"
#include "cli/query_command_parts.h"
#include "common/base/absl_view.h"
#include "common/text/json_writer.h"
#include "common/text/printable.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::cli::query_internal {
namespace {

// The --subject spelling, and what the title says the values are.
const char* SubjectFlag(opmap::v1::LatencySubject s) {
  switch (s) {
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU: return "operator-gpu";
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU: return "operator-cpu";
    case opmap::v1::LATENCY_SUBJECT_REQUEST: return "request";
    default: return "kernel";
  }
}
const char* SubjectTitle(opmap::v1::LatencySubject s) {
  switch (s) {
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU: return "operator instances' GPU time";
    case opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU: return "operator ranges' host durations (inclusive of nested ranges)";
    case opmap::v1::LATENCY_SUBJECT_REQUEST: return "request durations";
    default: return "GPU event durations";
  }
}

}  // namespace

int Latency(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range) {
  opmap::v1::LatencyRequest req;
  if (args.has_range) *req.mutable_range() = range;
  *req.mutable_filter() = args.selection.filter;
  req.set_subject(args.subject);
  for (opmap::v1::GroupBy g : args.group_by) req.add_group_by(g);
  for (double q : args.quantiles) req.add_quantiles(q);
  req.set_limit(args.limit);
  opmap::v1::LatencyResponse resp;
  std::string endpoint;
  grpc::Status status = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)
            ->LatencyPercentiles(&ctx, req, &resp);
      },
      &endpoint);
  if (!status.ok()) return CallFailed(status, client, endpoint);

  // "of" keeps its first spellings (kernel, operator); "subject" is the --subject value.
  const char* subject = args.subject == opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU
                            ? "operator"
                            : SubjectFlag(args.subject);
  double alpha = resp.rows().empty() ? 0 : resp.rows(0).relative_accuracy();
  for (const auto& r : resp.rows()) alpha = std::max(alpha, r.relative_accuracy());
  std::vector<std::string> keys = args.group_names;
  // One row per capture window: its span too (the collector sends it with each row).
  const bool by_session = std::find(keys.begin(), keys.end(), "session") != keys.end();

  double all_ns = 0;  // the rows' summed time, for each row's share
  for (const auto& r : resp.rows()) all_ns += static_cast<double>(r.sum_ns());
  if (args.format == Format::kJson) {
    text::JsonWriter w;
    w.BeginObject()
        .Field("query", "latency")
        .Field("of", subject)
        .Field("subject", SubjectFlag(args.subject));
    w.Key("group_by").BeginArray();
    for (const auto& k : keys) w.String(k);
    w.EndArray();
    w.Key("quantiles").BeginArray();
    for (double q : args.quantiles) w.Double(q, 6);
    w.EndArray();
    w.Field("relative_accuracy", alpha, 9);
    w.Key("rows").BeginArray();
    for (const auto& r : resp.rows()) {
      w.BeginObject();
      for (size_t k = 0; k < keys.size(); ++k) {
        w.Field(keys[k], k < static_cast<size_t>(r.key_size()) ? r.key(k) : "");
      }
      if (by_session) {
        w.Field("window_start_ns", r.window_start_ns()).Field("window_end_ns", r.window_end_ns());
      }
      w.Field("count", static_cast<int64_t>(r.count()))
          .Field("total_us", r.sum_ns() / 1000.0)
          .Field("share", all_ns > 0 ? static_cast<double>(r.sum_ns()) / all_ns : 0.0, 6)
          .Field("min_us", r.min_ns() / 1000.0)
          .Field("max_us", r.max_ns() / 1000.0);
      for (size_t q = 0; q < args.quantiles.size(); ++q) {
        w.Key(QuantileName(args.quantiles[q]) + "_us");
        if (q < static_cast<size_t>(r.quantile_ns_size())) {
          w.Double(r.quantile_ns(q) / 1000.0);
        } else {
          w.Null();
        }
      }
      w.EndObject();
    }
    w.EndArray();
    w.Key("truncated").Bool(resp.truncated());
    return FinishJson(w, resp.unavailable());
  }

  // Share of the summed time over the rows shown (a truncated answer says so above).
  // Host ranges nest, so for operator-cpu an enclosing range's time includes its
  // children's; the footer says so.
  std::vector<std::string> header = keys;
  std::vector<bool> numeric(keys.size(), false);
  if (by_session) {
    for (const char* h : {"window_start_ns", "window_end_ns"}) {
      header.push_back(h), numeric.push_back(true);
    }
  }
  for (const char* h : {"count", "total_us", "share", "min_us"}) {
    header.push_back(h), numeric.push_back(true);
  }
  for (double q : args.quantiles) header.push_back(QuantileName(q) + "_us"), numeric.push_back(true);
  header.push_back("max_us"), numeric.push_back(true);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : resp.rows()) {
    std::vector<std::string> row;
    for (size_t k = 0; k < keys.size(); ++k) {
      std::string v = k < static_cast<size_t>(r.key_size()) ? r.key(k) : "";
      if (args.format == Format::kTable && v.empty() &&
          (keys[k] == "module" || keys[k] == "module_type")) {
        v = "(no module)";
      }
      row.push_back(args.format == Format::kTable
                        ? text::PrintableCell(v, keys[k] == "kernel" ? 60 : 40)
                        : CsvField(v));
    }
    if (by_session) {
      row.push_back(absl::StrCat(r.window_start_ns()));
      row.push_back(absl::StrCat(r.window_end_ns()));
    }
    row.push_back(absl::StrCat(r.count()));
    row.push_back(UsFromNs(r.sum_ns()));
    const double share = all_ns > 0 ? static_cast<double>(r.sum_ns()) / all_ns : 0.0;
    row.push_back(all_ns <= 0                      ? std::string("")
                  : args.format == Format::kTable ? absl::StrFormat("%.2f%%", 100.0 * share)
                                                  : absl::StrFormat("%.6f", share));
    row.push_back(UsFromNs(r.min_ns()));
    for (size_t q = 0; q < args.quantiles.size(); ++q) {
      row.push_back(q < static_cast<size_t>(r.quantile_ns_size()) ? UsFromNs(r.quantile_ns(q))
                                                                   : "unavailable");
    }
    row.push_back(UsFromNs(r.max_ns()));
    rows.push_back(std::move(row));
  }
  const std::string what = absl::StrFormat(
      "latency of %s, %s", SubjectTitle(args.subject),
      keys.empty() ? "all selected" : "by " + absl::StrJoin(keys, ", "));
  return PrintRows(args, std::move(header), std::move(numeric), std::move(rows),
                   what + ": no rows",
                   absl::StrFormat("%s: %d rows%s; %s", what, resp.rows_size(),
                                   resp.truncated() ? " (truncated by --limit)" : "",
                                   AccuracyText(alpha)),
                   resp.unavailable());
}

}  // namespace opmap::cli::query_internal
