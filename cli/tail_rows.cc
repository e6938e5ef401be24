#include "cli/tail_rows.h"

#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"

namespace opmap::cli {

namespace {

// `group_by`, then `then`, over `subject`'s rows.
opmap::v1::LatencyRequest KeyedRequest(const opmap::v1::TimeRange* range,
                                       const opmap::v1::Filter& filter,
                                       opmap::v1::LatencySubject subject,
                                       const std::vector<opmap::v1::GroupBy>& group_by,
                                       std::initializer_list<opmap::v1::GroupBy> then,
                                       uint32_t limit) {
  opmap::v1::LatencyRequest req;
  if (range != nullptr) *req.mutable_range() = *range;
  *req.mutable_filter() = filter;
  req.set_subject(subject);
  for (opmap::v1::GroupBy g : group_by) req.add_group_by(g);
  for (opmap::v1::GroupBy g : then) req.add_group_by(g);
  req.add_quantiles(0.5);
  req.set_limit(limit);
  return req;
}

}  // namespace

opmap::v1::LatencyRequest TailRowsRequest(const opmap::v1::TimeRange* range,
                                          const opmap::v1::Filter& filter,
                                          const std::vector<opmap::v1::GroupBy>& group_by,
                                          uint32_t limit) {
  return KeyedRequest(range, filter, opmap::v1::LATENCY_SUBJECT_REQUEST_COMPONENT, group_by,
                      {opmap::v1::GROUP_BY_REQUEST, opmap::v1::GROUP_BY_KERNEL,
                       opmap::v1::GROUP_BY_LAYER_TYPE, opmap::v1::GROUP_BY_MODULE},
                      limit);
}

opmap::v1::LatencyRequest TailExemplarsRequest(const opmap::v1::TimeRange* range,
                                               const opmap::v1::Filter& filter,
                                               const std::vector<opmap::v1::GroupBy>& group_by,
                                               uint32_t limit) {
  return KeyedRequest(range, filter, opmap::v1::LATENCY_SUBJECT_REQUEST_EXEMPLAR, group_by,
                      {opmap::v1::GROUP_BY_SESSION, opmap::v1::GROUP_BY_REQUEST,
                       opmap::v1::GROUP_BY_KERNEL, opmap::v1::GROUP_BY_MODULE},
                      limit);
}

std::map<std::vector<std::string>, std::vector<analysis::TailExemplar>> ParseTailExemplars(
    const opmap::v1::LatencyResponse& response, size_t group_keys, int64_t* bad_rows) {
  const int own = static_cast<int>(group_keys);
  std::map<std::vector<std::string>, std::vector<analysis::TailExemplar>> out;
  *bad_rows = 0;
  for (const opmap::v1::LatencyRow& row : response.rows()) {  // largest first
    int64_t start = 0, id = analysis::kNone;
    if (row.key_size() != own + 4 || !absl::SimpleAtoi(row.key(own + 2), &start) ||
        (!row.key(own + 3).empty() && (!absl::SimpleAtoi(row.key(own + 3), &id) || id < 0))) {
      ++*bad_rows;
      continue;
    }
    std::vector<std::string> group(row.key().begin(), row.key().begin() + own);
    group.push_back(row.key(own + 1));
    std::vector<analysis::TailExemplar>& list = out[std::move(group)];
    if (list.size() >= analysis::kMaxTailExemplars) continue;
    analysis::TailExemplar& e = list.emplace_back();
    e.name = row.key(own + 1);
    e.start_ns = start;
    e.dur_ns = e.extent_ns = row.sum_ns();
    e.payload = id;
    e.session = row.key(own);
  }
  return out;
}

std::vector<TailGroup> ParseTailRows(const opmap::v1::LatencyResponse& response,
                                     size_t group_keys, int64_t* bad_rows) {
  const int own = static_cast<int>(group_keys);
  std::map<std::vector<std::string>, std::map<int32_t, analysis::TailBucketRow>> buckets;
  *bad_rows = 0;
  for (const opmap::v1::LatencyRow& row : response.rows()) {
    int32_t bucket = 0;
    if (row.key_size() != own + 4 || !absl::SimpleAtoi(row.key(own + 1), &bucket)) {
      ++*bad_rows;
      continue;
    }
    std::vector<std::string> id(row.key().begin(), row.key().begin() + own + 1);
    const std::string& label = row.key(own + 2);
    std::optional<analysis::RequestComponent> component;
    if (label != analysis::kExtentLabel) {
      component = analysis::ParseComponentLabel(label, row.key(own + 3));
      if (!component) {
        ++*bad_rows;
        continue;
      }
    }
    analysis::TailBucketRow& b = buckets[std::move(id)][bucket];
    b.bucket = bucket;
    if (component) {
      b.components.emplace_back(*component, static_cast<double>(row.sum_ns()));
    } else {
      b.requests += static_cast<int64_t>(row.count());
      b.extent_sum_ns += static_cast<double>(row.sum_ns());
    }
  }
  std::vector<TailGroup> out;
  for (auto& [id, rows] : buckets) {
    TailGroup& g = out.emplace_back();
    g.key.assign(id.begin(), id.end() - 1);
    g.request_key = id.back();
    for (auto& [index, b] : rows) g.buckets.push_back(std::move(b));
  }
  return out;
}

}  // namespace opmap::cli
