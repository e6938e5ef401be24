#include "analysis/summary/tail_explanation.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "analysis/stats/quantiles.h"
#include "common/text/units.h"

namespace opmap::analysis {
namespace {

using View = std::pair<RequestComponentKind, std::string>;

std::string LabelFor(const RequestComponent& c, bool by_module) {
  if (by_module) return c.module;
  switch (c.kind) {
    case RequestComponentKind::kGpu:
    case RequestComponentKind::kCopy:
    case RequestComponentKind::kHostOperator:
      return std::string(LayerTypeName(c.layer_type));
    default:
      return "";
  }
}

// Mean ns per view key: `sums` over `n` requests.
std::map<View, double> Means(const ComponentSums& sums, int64_t n, bool by_module) {
  std::map<View, double> mean;
  for (const auto& [c, ns] : sums) mean[{c.kind, LabelFor(c, by_module)}] += ns;
  for (auto& [k, v] : mean) v /= static_cast<double>(n);
  return mean;
}

std::vector<ComponentExcess> Excess(const ComponentSums& tail, int64_t tail_n,
                                    const ComponentSums& band, int64_t band_n, bool by_module,
                                    double gap) {
  const std::map<View, double> t = Means(tail, tail_n, by_module);
  const std::map<View, double> m = Means(band, band_n, by_module);
  std::map<View, ComponentExcess> rows;
  for (const auto& [k, v] : t) rows[k].tail_mean_ns = v;
  for (const auto& [k, v] : m) rows[k].band_mean_ns = v;
  std::vector<ComponentExcess> out;
  for (auto& [k, row] : rows) {
    row.kind = k.first;
    row.label = k.second;
    row.excess_ns = row.tail_mean_ns - row.band_mean_ns;
    row.share = gap > 0 ? row.excess_ns / gap : 0;
    out.push_back(row);
  }
  std::stable_sort(out.begin(), out.end(), [](const ComponentExcess& a, const ComponentExcess& b) {
    return a.excess_ns > b.excess_ns;
  });
  return out;
}

ComponentSums SumsOf(const RequestBreakdowns& b, const std::vector<size_t>& members) {
  std::map<int32_t, double> sum;
  for (size_t i : members) {
    for (const auto& [c, ns] : b.requests[i].parts) sum[c] += static_cast<double>(ns);
  }
  ComponentSums out;
  for (const auto& [c, ns] : sum) out.emplace_back(b.components[c], ns);
  return out;
}


std::string Describe(const ComponentExcess& c, bool by_module) {
  std::string what(RequestComponentPhrase(c.kind));
  if (c.label.empty()) return what;
  return by_module ? absl::StrFormat("%s in `%s`", what, c.label)
                   : absl::StrFormat("%s (%s)", what, c.label);
}

std::string Sentence(const TailExplanation& t) {
  std::string s = absl::StrFormat(
      "p%g (%s) is %.2fx p50 (%s)", t.quantile * 100, text::MillisWithUnit(t.quantile_ns),
      t.p50_ns > 0 ? t.quantile_ns / t.p50_ns : 0, text::MillisWithUnit(t.p50_ns));
  if (t.gap_ns <= 0) return s + "; the tail takes no longer than the p40-p60 band";
  s += absl::StrFormat("; the %d slowest requests take %s more than the p40-p60 band",
                       t.tail_requests, text::MillisWithUnit(t.gap_ns));
  if (!t.by_module.empty()) {
    s += absl::StrFormat(": %.0f%% of the excess is %s", 100 * t.by_module.front().share,
                         Describe(t.by_module.front(), true));
  }
  if (!t.by_layer_type.empty()) {
    s += absl::StrFormat(", %.0f%% is %s", 100 * t.by_layer_type.front().share,
                         Describe(t.by_layer_type.front(), false));
  }
  return s;
}

TailExplanation Explain(const RequestBreakdowns& b, const std::string& key,
                        const std::vector<size_t>& members, double q) {
  TailExplanation t;
  t.key = key;
  t.quantile = q;
  t.requests = static_cast<int64_t>(members.size());
  if (t.requests < kMinTailRequests) {
    t.unavailable = TooFewForATail(key, t.requests);
    return t;
  }
  std::vector<double> sorted;
  for (size_t i : members) sorted.push_back(static_cast<double>(b.requests[i].extent_ns));
  std::sort(sorted.begin(), sorted.end());
  t.p50_ns = stats::ExactQuantile(sorted, 0.5);
  t.quantile_ns = stats::ExactQuantile(sorted, q);
  const double p40 = stats::ExactQuantile(sorted, 0.4);
  const double p60 = stats::ExactQuantile(sorted, 0.6);
  std::vector<size_t> tail, band;
  for (size_t i : members) {
    const double d = static_cast<double>(b.requests[i].extent_ns);
    if (d >= t.quantile_ns) tail.push_back(i);
    if (d >= p40 && d <= p60) band.push_back(i);
  }
  if (band.empty()) {  // no duration falls between p40 and p60: the one nearest p50
    band.push_back(*std::min_element(members.begin(), members.end(), [&](size_t a, size_t c) {
      return std::abs(b.requests[a].extent_ns - t.p50_ns) < std::abs(b.requests[c].extent_ns - t.p50_ns);
    }));
  }
  t.tail_requests = static_cast<int64_t>(tail.size());
  t.band_requests = static_cast<int64_t>(band.size());
  auto mean = [&](const std::vector<size_t>& v) {
    double s = 0;
    for (size_t i : v) s += static_cast<double>(b.requests[i].extent_ns);
    return s / static_cast<double>(v.size());
  };
  t.tail_mean_ns = mean(tail);
  t.band_mean_ns = mean(band);
  t.gap_ns = t.tail_mean_ns - t.band_mean_ns;
  AttributeExcess(SumsOf(b, tail), SumsOf(b, band), t);
  std::vector<size_t> slowest = tail;
  std::sort(slowest.begin(), slowest.end(), [&](size_t a, size_t c) {
    return b.requests[a].extent_ns != b.requests[c].extent_ns ? b.requests[a].extent_ns > b.requests[c].extent_ns
                                                        : a < c;
  });
  if (slowest.size() > kMaxTailExemplars) slowest.resize(kMaxTailExemplars);
  for (size_t i : slowest) {
    const RequestRecord& r = b.requests[i];
    t.exemplars.push_back({r.name, r.start_ns, r.dur_ns, r.extent_ns, r.payload, r.process, r.thread,
                           /*session=*/""});
  }
  return t;
}

KeyComposition Compose(const RequestBreakdowns& b, const std::string& key,
                       const std::vector<size_t>& members) {
  KeyComposition k;
  k.key = key;
  k.requests = static_cast<int64_t>(members.size());
  std::map<int32_t, double> sum;
  double dur = 0;
  for (size_t i : members) {
    dur += static_cast<double>(b.requests[i].extent_ns);
    for (const auto& [c, ns] : b.requests[i].parts) sum[c] += static_cast<double>(ns);
  }
  const double n = static_cast<double>(members.size());
  k.mean_dur_ns = dur / n;
  for (const auto& [c, ns] : sum) {
    k.parts.push_back({b.components[c], ns / n, k.mean_dur_ns > 0 ? ns / n / k.mean_dur_ns : 0});
  }
  // Ties in a canonical order, whatever order the components were met in.
  std::sort(k.parts.begin(), k.parts.end(),
            [](const KeyComposition::Part& a, const KeyComposition::Part& b) {
              if (a.mean_ns != b.mean_ns) return a.mean_ns > b.mean_ns;
              return std::tie(a.component.kind, a.component.layer_type, a.component.module) <
                     std::tie(b.component.kind, b.component.layer_type, b.component.module);
            });
  return k;
}

}  // namespace

void AttributeExcess(const ComponentSums& tail, const ComponentSums& band, TailExplanation& t) {
  t.by_module = Excess(tail, t.tail_requests, band, t.band_requests, true, t.gap_ns);
  t.by_layer_type = Excess(tail, t.tail_requests, band, t.band_requests, false, t.gap_ns);
  t.sentence = Sentence(t);
}

std::string TooFewForATail(const std::string& key, int64_t requests) {
  return absl::StrFormat("%d request%s of %s, fewer than the %d a tail needs", requests,
                         requests == 1 ? "" : "s", key, kMinTailRequests);
}

std::string_view RequestComponentPhrase(RequestComponentKind kind) {
  switch (kind) {
    case RequestComponentKind::kQueue: return "queueing before service";
    case RequestComponentKind::kGpu: return "GPU time";
    case RequestComponentKind::kCopy: return "copy time";
    case RequestComponentKind::kGpuWait: return "GPU waiting on launched work";
    case RequestComponentKind::kHostOperator: return "host time in operators";
    case RequestComponentKind::kHostGap: return "host gaps outside operators";
  }
  return "host gaps outside operators";
}

RequestTailSummary ExplainTails(const RequestBreakdowns& b, const std::vector<double>& quantiles) {
  RequestTailSummary s;
  s.requests = static_cast<int64_t>(b.requests.size());
  s.arrival_marks_dropped = b.arrival_marks_dropped;
  if (b.requests.empty()) {
    s.unavailable = "no request ranges (request, iteration, ProfilerStep#N or a serving step)";
    return s;
  }
  std::map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < b.requests.size(); ++i) {
    const RequestRecord& r = b.requests[i];
    by_key[r.key].push_back(i);
    if (r.gpu_events > 0) ++s.requests_with_gpu_events;
    if (r.joined) ++s.joined_requests;
    if (r.arrival_marked) ++s.arrival_marked_requests;
    int64_t sum = 0;
    for (const auto& [c, ns] : r.parts) sum += ns;
    s.max_sum_error_ns = std::max(s.max_sum_error_ns, std::abs(sum - r.extent_ns));
  }
  for (const auto& [key, members] : by_key) {
    s.compositions.push_back(Compose(b, key, members));
    for (double q : quantiles) s.explanations.push_back(Explain(b, key, members, q));
  }
  return s;
}

}  // namespace opmap::analysis
