// TailExplanation: why the slow requests were slow. For the requests of one key (request,
// step:decode, ...) at or above the q-quantile of their extent (request_breakdown.h: the
// range, and its GPU work past the range's end) (the tail) against those
// between p40 and p60 (the median band), each component's excess — its mean over the tail
// minus its mean over the band (request_breakdown.h; a request without the component
// counts 0) — sorted, largest first. The excesses sum to the latency gap (tail mean −
// band mean) because every request's components sum to its duration. Two views of the
// same components: by kind and module, and by kind and layer type. docs/metrics.md,
// "Tail latency".
#ifndef OPMAP_ANALYSIS_SUMMARY_TAIL_EXPLANATION_H_
#define OPMAP_ANALYSIS_SUMMARY_TAIL_EXPLANATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/summary/request_breakdown.h"

namespace opmap::analysis {

struct ComponentExcess {
  RequestComponentKind kind = RequestComponentKind::kHostGap;
  std::string label;  // module (module view) or layer type (layer view); "" when none
  double tail_mean_ns = 0;
  double band_mean_ns = 0;
  double excess_ns = 0;  // tail_mean_ns - band_mean_ns
  double share = 0;      // of the gap (may be negative: a component that shrank)
};

struct TailExemplar {
  std::string name;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;     // the range's
  int64_t extent_ns = 0;  // with its GPU work (request_breakdown.h): what ranks it
  int64_t payload = kNone;  // the request id when the range carried one
  int64_t process = kNone;
  int64_t thread = kNone;
  std::string session;  // "agent/session" on a collector; "" in a trace
};

struct TailExplanation {
  std::string key;
  double quantile = 0.99;
  int64_t requests = 0;
  int64_t tail_requests = 0;
  int64_t band_requests = 0;
  double p50_ns = 0;
  double quantile_ns = 0;  // the q-quantile (exact, linear interpolation)
  double tail_mean_ns = 0;
  double band_mean_ns = 0;
  double gap_ns = 0;       // tail_mean_ns - band_mean_ns
  std::vector<ComponentExcess> by_module;      // excess, descending
  std::vector<ComponentExcess> by_layer_type;  // excess, descending
  std::vector<TailExemplar> exemplars;         // the slowest, at most kMaxTailExemplars
  std::string sentence;
  std::string unavailable;  // set (and the rest empty) when the key has too few requests
};

// What a key's requests are made of on average: every component's mean ns (a request
// without it counts 0), largest first; the means sum to the mean duration.
struct KeyComposition {
  std::string key;
  int64_t requests = 0;
  double mean_dur_ns = 0;  // of the requests' extents (request_breakdown.h)
  struct Part {
    RequestComponent component;
    double mean_ns = 0;
    double share = 0;  // of mean_dur_ns
  };
  std::vector<Part> parts;
};

struct RequestTailSummary {
  int64_t requests = 0;
  int64_t requests_with_gpu_events = 0;
  int64_t joined_requests = 0;  // served by payload-joined ranges
  int64_t arrival_marked_requests = 0;  // starting at their `arrival` mark
  int64_t arrival_marks_dropped = 0;    // marks past the bound of those waiting
  // The largest |Σ components − extent| over all requests (0: the breakdown is closed).
  int64_t max_sum_error_ns = 0;
  std::vector<KeyComposition> compositions;   // by key
  std::vector<TailExplanation> explanations;  // by key, then quantile
  std::string unavailable;  // set when the trace has no request ranges
  // Explained from latency buckets (tail_buckets.h), not from each request: per-request
  // facts (joined, GPU events, sum check, exemplars, compositions) are not known.
  bool from_buckets = false;
};

inline constexpr int kMaxTailExemplars = 10;
// Fewer requests of a key than this: no explanation (a tail of one or two requests).
inline constexpr int64_t kMinTailRequests = 20;

// Component ns summed over a set of requests.
using ComponentSums = std::vector<std::pair<RequestComponent, double>>;
// Fills t.by_module, t.by_layer_type and t.sentence from the tail's and the band's sums;
// t's counts, quantiles and means are set.
void AttributeExcess(const ComponentSums& tail, const ComponentSums& band, TailExplanation& t);

RequestTailSummary ExplainTails(const RequestBreakdowns& breakdowns,
                                const std::vector<double>& quantiles = {0.99, 0.95});

// Why a key with fewer than kMinTailRequests requests has no explanation.
std::string TooFewForATail(const std::string& key, int64_t requests);

// "queueing", "GPU time", ... for sentences.
std::string_view RequestComponentPhrase(RequestComponentKind kind);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_TAIL_EXPLANATION_H_
