// Which component grew in the candidate's tail (docs/metrics.md, "Tail latency"): per
// request key with a p99 explanation in both arms, each component's mean over the
// candidate's p99 tail against its mean over the baseline's, by kind and module; the
// largest growth is named, with both tails' sentences beside it.
#ifndef OPMAP_ANALYSIS_RELEASE_RELEASE_TAIL_H_
#define OPMAP_ANALYSIS_RELEASE_RELEASE_TAIL_H_

#include <string>
#include <vector>

#include "analysis/release/release_recommendation.h"
#include "analysis/report/document.h"
#include "common/text/json_writer.h"

namespace opmap::analysis {

struct TailGrowth {
  std::string key;                 // request key
  ComponentExcess largest;         // tail_mean_ns: candidate's; band_mean_ns: baseline's tail
  double growth_ns = 0;            // candidate tail mean − baseline tail mean
  std::string sentence;
  std::vector<ComponentExcess> components;  // every component, growth descending
};

// Keys with a p99 tail in both arms; `unavailable` says why none when empty.
std::vector<TailGrowth> CompareTails(const Arm& baseline, const Arm& candidate,
                                     std::string* unavailable);

DocSection TailGrowthSection(const ReleaseInputs& in);
void WriteTailGrowthJson(const ReleaseInputs& in, text::JsonWriter& w);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_RELEASE_RELEASE_TAIL_H_
