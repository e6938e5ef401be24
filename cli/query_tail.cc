// `opmap query tail`: why the slow requests were slow (docs/metrics.md, "Tail latency"),
// from the collector's request-breakdown rollups — live windows and imports alike. One
// LatencyPercentiles call on subject REQUEST_COMPONENT, grouped by the caller's keys, then
// request key, latency bucket, component and module; each group's buckets are explained
// as analysis/summary/tail_buckets.h says, and printed as `opmap analyze` prints its tail.
#include <iostream>
#include <map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/report/tail_report.h"
#include "analysis/summary/tail_buckets.h"
#include "cli/query_common.h"
#include "common/text/printable.h"

namespace opmap::cli::query_internal {
namespace {

// Rows past this many are cut by the collector: the answer then says so.
constexpr uint32_t kTailRowLimit = 1'000'000;

struct Group {
  std::vector<std::string> key;  // the caller's group-by values
  std::string request_key;
  std::map<int32_t, analysis::TailBucketRow> buckets;
};

}  // namespace

int Tail(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range) {
  opmap::v1::LatencyRequest req;
  if (args.has_range) *req.mutable_range() = range;
  *req.mutable_filter() = args.selection.filter;
  req.set_subject(opmap::v1::LATENCY_SUBJECT_REQUEST_COMPONENT);
  for (opmap::v1::GroupBy g : args.group_by) req.add_group_by(g);
  const int own = req.group_by_size();
  for (opmap::v1::GroupBy g : {opmap::v1::GROUP_BY_REQUEST, opmap::v1::GROUP_BY_KERNEL,
                               opmap::v1::GROUP_BY_LAYER_TYPE, opmap::v1::GROUP_BY_MODULE}) {
    req.add_group_by(g);
  }
  req.add_quantiles(0.5);
  const uint32_t limit = args.limit > 0 ? args.limit : kTailRowLimit;
  req.set_limit(limit);
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

  std::map<std::vector<std::string>, Group> groups;
  int64_t bad_rows = 0;
  for (const opmap::v1::LatencyRow& row : resp.rows()) {
    if (row.key_size() != own + 4) {
      ++bad_rows;
      continue;
    }
    std::vector<std::string> key(row.key().begin(), row.key().begin() + own + 1);
    Group& g = groups[key];
    g.key.assign(row.key().begin(), row.key().begin() + own);
    g.request_key = row.key(own);
    int32_t bucket = 0;
    if (!absl::SimpleAtoi(row.key(own + 1), &bucket)) {
      ++bad_rows;
      continue;
    }
    analysis::TailBucketRow& b = g.buckets[bucket];
    b.bucket = bucket;
    const std::string& label = row.key(own + 2);
    if (label == analysis::kExtentLabel) {
      b.requests += static_cast<int64_t>(row.count());
      b.extent_sum_ns += static_cast<double>(row.sum_ns());
    } else if (std::optional<analysis::RequestComponent> c =
                   analysis::ParseComponentLabel(label, row.key(own + 3))) {
      b.components.emplace_back(*c, static_cast<double>(row.sum_ns()));
    } else {
      ++bad_rows;
    }
  }
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
  for (auto& [id, g] : groups) {
    std::vector<analysis::TailBucketRow> buckets;
    analysis::RequestTailSummary summary;
    summary.from_buckets = true;
    for (auto& [index, b] : g.buckets) {
      summary.requests += b.requests;
      buckets.push_back(std::move(b));
    }
    for (double q : args.tail_quantiles) {
      summary.explanations.push_back(
          analysis::ExplainTailFromBuckets(g.request_key, buckets, q));
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
