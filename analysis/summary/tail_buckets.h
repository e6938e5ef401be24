// The per-request breakdown as rollup rows (RollupSubject::kRequestComponent), and the
// tail explanation answered from them: what the collector keeps of every window so that
// `opmap query tail` over any range of windows reads rollups, not raw events
// (docs/metrics.md, "Tail latency").
//
// Each request goes to a latency bucket by its extent (request_breakdown.h): bucket i
// holds extents in (γ^(i-1), γ^i] ns, γ = (1 + α) / (1 - α) with α = kTailBucketAlpha,
// so a bucket is about 10.5% wide. Per (request key, bucket) the rows are one `extent`
// row (count = requests, sum = their extents) and one row per component (count = requests
// with it, sum = its ns), and they merge across windows by adding. Rows per window are at
// most buckets × components, whatever the number of requests.
//
// Row columns (rollup.h's RollupRow): operator_name = request key, kernel_name = the
// bucket index in decimal, layer_type = "extent" or the component's kind, with its layer
// type after a colon where it has one ("gpu:matmul", "host_operator:matmul", "queue"),
// module = the component's module.
//
// From merged rows, the tail and the band are buckets: the q-quantile's bucket and every
// bucket above it, against the buckets from p40's to p60's. Their boundaries are bucket
// boundaries, so a collector's answer can hold a few requests more than analyze's exact
// tail; quantiles are reported as the bucket's representative value 2γ^i/(γ+1) (within α).
#ifndef OPMAP_ANALYSIS_SUMMARY_TAIL_BUCKETS_H_
#define OPMAP_ANALYSIS_SUMMARY_TAIL_BUCKETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/summary/request_breakdown.h"
#include "analysis/summary/rollup.h"
#include "analysis/summary/tail_explanation.h"

namespace opmap::analysis {

inline constexpr double kTailBucketAlpha = 0.05;
inline constexpr char kExtentLabel[] = "extent";

int32_t TailBucket(int64_t extent_ns);      // extent_ns ≥ 1; 0 for anything less
double TailBucketValue(int32_t bucket);     // 2γ^i / (γ + 1)

// "queue", "gpu:matmul", ...; and back (nullopt for "extent" or a label no component has).
std::string ComponentLabel(const RequestComponent& c);
std::optional<RequestComponent> ParseComponentLabel(std::string_view label,
                                                    std::string_view module);

// Appends the kRequestComponent rows of `b` to `out`, and the kRequestExemplar rows: per
// request key its kExemplarsPerWindow slowest requests, each a row of one value (its
// extent) with operator_name = request key, kernel_name = its start ns and module = its
// payload (request id), both in decimal ("" for no payload).
inline constexpr size_t kExemplarsPerWindow = 10;
void AddTailBucketRows(const RequestBreakdowns& b, std::vector<RollupRow>* out);

// One (request key, bucket) of merged rows.
struct TailBucketRow {
  int32_t bucket = 0;
  int64_t requests = 0;
  double extent_sum_ns = 0;
  ComponentSums components;
};

// The explanation of one key's tail at quantile q from its buckets (any order).
TailExplanation ExplainTailFromBuckets(const std::string& key, std::vector<TailBucketRow> buckets,
                                       double q);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_TAIL_BUCKETS_H_
