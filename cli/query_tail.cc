// `opmap query tail`: why the slow requests were slow (docs/metrics.md, "Tail latency"),
// from the collector's request-breakdown rollups — live windows and imports alike. One
// LatencyPercentiles call on subject REQUEST_COMPONENT, grouped by the caller's keys, then
// request key, latency bucket, component and module; each group's buckets are explained
// as analysis/summary/tail_buckets.h says, and printed as `opmap analyze` prints its tail.
#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/report/tail_report.h"
#include "analysis/summary/tail_buckets.h"
#include "cli/query_command_parts.h"
#include "cli/tail_rows.h"
#include "common/text/printable.h"

namespace opmap::cli::query_internal {
namespace {

// Rows past this many are cut by the collector: the answer then says so.
constexpr uint32_t kTailRowLimit = 1'000'000;
// The slowest exemplar rows fetched over all groups (each window keeps its 10 slowest).
constexpr uint32_t kExemplarRows = 1000;

}  // namespace

std::string TailArgsError(const Args& args) {
  if (args.format == Format::kCsv) return "tail prints a table or json, not csv";
  if (args.latency_flag) return "--subject, --of and --quantiles apply to 'latency' only";
  for (size_t g = 0; g < args.group_by.size(); ++g) {
    if (args.group_by[g] != opmap::v1::GROUP_BY_HOST &&
        args.group_by[g] != opmap::v1::GROUP_BY_REVISION &&
        args.group_by[g] != opmap::v1::GROUP_BY_SESSION) {
      return "--group-by: tail groups by host, revision or session (select a model with "
             "--model), not '" + args.group_names[g] + "'";
    }
  }
  return "";
}

int Tail(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range) {
  const uint32_t limit = args.limit > 0 ? args.limit : kTailRowLimit;
  const opmap::v1::LatencyRequest req =
      TailRowsRequest(args.has_range ? &range : nullptr, args.selection.filter, args.group_by, limit);
  opmap::v1::LatencyResponse resp;
  std::string endpoint;
  grpc::Status status = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)->LatencyPercentiles(&ctx, req, &resp);
      },
      &endpoint);
  if (!status.ok()) return CallFailed(status, client, endpoint);
  if (resp.truncated()) {
    std::cerr << "opmap query tail: the collector cut the answer at " << limit
              << " rows; narrow --since/--until or the filter, or raise --limit\n";
    return 1;
  }
  int64_t bad_rows = 0;
  std::vector<TailGroup> groups = ParseTailRows(resp, args.group_by.size(), &bad_rows);
  // The slowest requests with their session and id (the windows' exemplar rows).
  const opmap::v1::LatencyRequest exemplars_req = TailExemplarsRequest(
      args.has_range ? &range : nullptr, args.selection.filter, args.group_by, kExemplarRows);
  opmap::v1::LatencyResponse exemplars_resp;
  status = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)->LatencyPercentiles(&ctx, exemplars_req,
                                                                 &exemplars_resp);
      },
      &endpoint);
  if (!status.ok()) return CallFailed(status, client, endpoint);
  int64_t bad_exemplars = 0;
  auto exemplars = ParseTailExemplars(exemplars_resp, args.group_by.size(), &bad_exemplars);
  bad_rows += bad_exemplars;
  if (bad_rows > 0) {
    std::cerr << "opmap query tail: " << bad_rows
              << " rows of the collector's answer are not request breakdown rows; left out\n";
  }

  text::JsonWriter w;
  if (args.format == Format::kJson) {
    w.BeginObject().Field("query", "tail");
    w.Key("group_by").BeginArray();
    for (const std::string& k : args.group_names) w.String(k);
    w.EndArray();
    w.Key("quantiles").BeginArray();
    for (double q : args.tail_quantiles) w.Double(q, 6);
    w.EndArray();
    w.Key("groups").BeginArray();
  }
  for (const TailGroup& g : groups) {
    analysis::RequestTailSummary summary;
    summary.from_buckets = true;
    for (const analysis::TailBucketRow& b : g.buckets) summary.requests += b.requests;
    std::vector<std::string> id = g.key;
    id.push_back(g.request_key);
    for (double q : args.tail_quantiles) {
      analysis::TailExplanation& t = summary.explanations.emplace_back(
          analysis::ExplainTailFromBuckets(g.request_key, g.buckets, q));
      if (t.unavailable.empty()) t.exemplars = exemplars[id];
    }
    std::vector<std::string> named;
    for (size_t i = 0; i < g.key.size(); ++i) {
      named.push_back(absl::StrCat(args.group_names[i], "=", text::PrintableCell(g.key[i], 64)));
    }
    if (args.format == Format::kJson) {
      w.BeginObject();
      w.Key("key").BeginArray();
      for (const std::string& k : g.key) w.String(k);
      w.EndArray();
      w.Field("request", g.request_key);
      analysis::TailJson(w, summary, 0);
      w.EndObject();
    } else {
      std::cout << (named.empty() ? "" : absl::StrJoin(named, ", ") + ": ")
                << analysis::TailTable(summary, 8).substr(1);
    }
  }
  if (args.format == Format::kJson) {
    w.EndArray();
    return FinishJson(w, resp.unavailable());
  }
  PrintUnavailable(resp.unavailable(), args.format);
  return std::cout.good() ? 0 : 1;
}

}  // namespace opmap::cli::query_internal
