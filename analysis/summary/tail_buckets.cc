#include "analysis/summary/tail_buckets.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace opmap::analysis {
namespace {

constexpr double kGamma = (1 + kTailBucketAlpha) / (1 - kTailBucketAlpha);

constexpr RequestComponentKind kKinds[] = {
    RequestComponentKind::kQueue,   RequestComponentKind::kGpu,
    RequestComponentKind::kCopy,    RequestComponentKind::kGpuWait,
    RequestComponentKind::kHostOperator, RequestComponentKind::kHostGap};

bool HasLayerType(RequestComponentKind kind) {
  return kind == RequestComponentKind::kGpu || kind == RequestComponentKind::kCopy ||
         kind == RequestComponentKind::kHostOperator;
}

// The bucket holding the element of 0-based rank `rank` in `sorted` buckets.
int32_t BucketAtRank(const std::vector<TailBucketRow>& sorted, int64_t rank) {
  int64_t seen = 0;
  for (const TailBucketRow& b : sorted) {
    seen += b.requests;
    if (rank < seen) return b.bucket;
  }
  return sorted.back().bucket;
}

}  // namespace

int32_t TailBucket(int64_t extent_ns) {
  if (extent_ns < 1) return 0;
  return static_cast<int32_t>(std::ceil(std::log(static_cast<double>(extent_ns)) / std::log(kGamma)));
}

double TailBucketValue(int32_t bucket) {
  return 2 * std::pow(kGamma, bucket) / (kGamma + 1);
}

std::string ComponentLabel(const RequestComponent& c) {
  std::string label(RequestComponentKindName(c.kind));
  if (HasLayerType(c.kind)) {
    label += ':';
    label += LayerTypeName(c.layer_type);
  }
  return label;
}

std::optional<RequestComponent> ParseComponentLabel(std::string_view label,
                                                    std::string_view module) {
  const size_t colon = label.find(':');
  const std::string_view kind = label.substr(0, colon);
  for (RequestComponentKind k : kKinds) {
    if (RequestComponentKindName(k) != kind) continue;
    RequestComponent c;
    c.kind = k;
    c.module = std::string(module);
    if (HasLayerType(k) != (colon != std::string_view::npos)) return std::nullopt;
    if (colon != std::string_view::npos) {
      std::optional<LayerType> type = ParseLayerType(label.substr(colon + 1));
      if (!type) return std::nullopt;
      c.layer_type = *type;
    }
    return c;
  }
  return std::nullopt;
}

void AddTailBucketRows(const RequestBreakdowns& b, std::vector<RollupRow>* out) {
  // (key, bucket, component index or -1 for the extent) → values.
  std::map<std::tuple<std::string, int32_t, int32_t>, RollupValues> rows;
  for (const RequestRecord& r : b.requests) {
    const int32_t bucket = TailBucket(r.extent_ns);
    rows[{r.key, bucket, -1}].Add(r.extent_ns);
    for (const auto& [c, ns] : r.parts) rows[{r.key, bucket, c}].Add(ns);
  }
  // The slowest kExemplarsPerWindow of each key, slowest first (ties by start).
  std::map<std::string, std::vector<const RequestRecord*>> slowest;
  for (const RequestRecord& r : b.requests) slowest[r.key].push_back(&r);
  for (auto& [request_key, list] : slowest) {
    const size_t n = std::min(list.size(), kExemplarsPerWindow);
    std::partial_sort(list.begin(), list.begin() + n, list.end(),
                      [](const RequestRecord* x, const RequestRecord* y) {
                        return x->extent_ns != y->extent_ns ? x->extent_ns > y->extent_ns
                                                            : x->start_ns < y->start_ns;
                      });
    for (size_t i = 0; i < n; ++i) {
      RollupValues v;
      v.Add(list[i]->extent_ns);
      out->push_back(std::move(v).ToRow(
          RollupSubject::kRequestExemplar, "", request_key, absl::StrCat(list[i]->start_ns),
          list[i]->payload == kNone ? std::string() : absl::StrCat(list[i]->payload)));
    }
  }
  for (auto& [key, values] : rows) {
    const auto& [request_key, bucket, c] = key;
    const bool extent = c < 0;
    out->push_back(std::move(values).ToRow(
        RollupSubject::kRequestComponent,
        extent ? std::string(kExtentLabel) : ComponentLabel(b.components[c]), request_key,
        absl::StrCat(bucket), extent ? "" : b.components[c].module));
  }
}

TailExplanation ExplainTailFromBuckets(const std::string& key, std::vector<TailBucketRow> buckets,
                                       double q) {
  TailExplanation t;
  t.key = key;
  t.quantile = q;
  std::sort(buckets.begin(), buckets.end(),
            [](const TailBucketRow& a, const TailBucketRow& b) { return a.bucket < b.bucket; });
  for (const TailBucketRow& b : buckets) t.requests += b.requests;
  if (t.requests < kMinTailRequests) {
    t.unavailable = TooFewForATail(key, t.requests);
    return t;
  }
  auto bucket_at = [&](double p) {
    return BucketAtRank(buckets, static_cast<int64_t>(std::floor(p * double(t.requests - 1))));
  };
  const int32_t qb = bucket_at(q), p40 = bucket_at(0.4), p60 = bucket_at(0.6);
  t.p50_ns = TailBucketValue(bucket_at(0.5));
  t.quantile_ns = TailBucketValue(qb);
  std::map<std::pair<std::tuple<uint8_t, uint8_t, std::string>, bool>, std::pair<RequestComponent, double>> sums;
  double tail_sum = 0, band_sum = 0;
  for (const TailBucketRow& b : buckets) {
    const bool in_tail = b.bucket >= qb;
    const bool in_band = b.bucket >= p40 && b.bucket <= p60;
    if (in_tail) {
      t.tail_requests += b.requests;
      tail_sum += b.extent_sum_ns;
    }
    if (in_band) {
      t.band_requests += b.requests;
      band_sum += b.extent_sum_ns;
    }
    for (const auto& [c, ns] : b.components) {
      for (bool tail : {true, false}) {
        if (tail ? !in_tail : !in_band) continue;
        auto& slot = sums[{{static_cast<uint8_t>(c.kind), static_cast<uint8_t>(c.layer_type),
                            c.module},
                           tail}];
        slot.first = c;
        slot.second += ns;
      }
    }
  }
  ComponentSums tail, band;
  for (const auto& [k, v] : sums) (k.second ? tail : band).push_back(v);
  t.tail_mean_ns = tail_sum / static_cast<double>(t.tail_requests);
  t.band_mean_ns = band_sum / static_cast<double>(t.band_requests);
  t.gap_ns = t.tail_mean_ns - t.band_mean_ns;
  AttributeExcess(tail, band, t);
  return t;
}

}  // namespace opmap::analysis
