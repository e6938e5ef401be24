#include "analysis/graphs/replayed_graphs.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/serving/step_annotation.h"

namespace opmap::analysis {
namespace {

using ThreadKey = std::pair<int64_t, int64_t>;  // (process, thread)

}  // namespace

std::vector<ReplayedGraph> FindReplayedGraphs(const Trace& t) {
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int32_t> by_correlation;
  absl::flat_hash_map<int64_t, int32_t> by_id;
  std::vector<ReplayedGraph> graphs;
  for (int32_t i = 0; i < static_cast<int32_t>(t.api_calls.size()); ++i) {
    const ApiCall& a = t.api_calls[i];
    if (a.correlation == kNone || !IsGraphLaunchCall(t.strings.Get(a.name))) continue;
    if (!by_correlation.emplace(std::make_pair(a.process, a.correlation), graphs.size()).second) continue;
    by_id.emplace(a.correlation, static_cast<int32_t>(graphs.size()));
    graphs.push_back(ReplayedGraph{i, {}, kNone, 0});
  }
  for (int32_t i = 0; i < static_cast<int32_t>(t.gpu_events.size()); ++i) {
    const GpuEvent& g = t.gpu_events[i];
    if (g.correlation == kNone) continue;
    auto it = by_correlation.find(std::make_pair(g.process, g.correlation));
    if (it != by_correlation.end()) {
      graphs[it->second].events.push_back(i);
    } else if (auto id = by_id.find(g.correlation); id != by_id.end() &&
               (g.process == kNone || t.api_calls[graphs[id->second].api].process == kNone)) {
      graphs[id->second].events.push_back(i);
    }
  }
  graphs.erase(std::remove_if(graphs.begin(), graphs.end(),
                              [](const ReplayedGraph& g) { return g.events.empty(); }),
               graphs.end());
  for (ReplayedGraph& g : graphs) {
    std::sort(g.events.begin(), g.events.end(), [&](int32_t x, int32_t y) {
      const GpuEvent& a = t.gpu_events[x];
      const GpuEvent& b = t.gpu_events[y];
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : x < y;
    });
  }
  // The step around each launch: the innermost enclosing step annotation on its thread,
  // by one sweep per thread (steps sorted outermost first, launches by start).
  absl::flat_hash_map<ThreadKey, std::vector<std::pair<int32_t, StepAnnotation>>> steps;
  for (int32_t i = 0; i < static_cast<int32_t>(t.ranges.size()); ++i) {
    const Range& r = t.ranges[i];
    if (std::optional<StepAnnotation> s = ParseStepAnnotation(t.strings.Get(r.name))) {
      steps[{r.process, r.thread}].emplace_back(i, std::move(*s));
    }
  }
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> launches;
  for (int32_t k = 0; k < static_cast<int32_t>(graphs.size()); ++k) {
    const ApiCall& a = t.api_calls[graphs[k].api];
    launches[{a.process, a.thread}].push_back(k);
  }
  for (auto& [key, thread_launches] : launches) {
    auto found = steps.find(key);
    if (found == steps.end()) continue;
    auto& thread_steps = found->second;
    std::sort(thread_steps.begin(), thread_steps.end(), [&](const auto& x, const auto& y) {
      const Range& a = t.ranges[x.first];
      const Range& b = t.ranges[y.first];
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.end_ns() > b.end_ns();
    });
    std::sort(thread_launches.begin(), thread_launches.end(), [&](int32_t x, int32_t y) {
      return t.api_calls[graphs[x].api].start_ns < t.api_calls[graphs[y].api].start_ns;
    });
    std::vector<size_t> open;
    std::vector<int32_t> launches_in_step(thread_steps.size(), 0);
    size_t next = 0;
    for (int32_t k : thread_launches) {
      const ApiCall& a = t.api_calls[graphs[k].api];
      while (next < thread_steps.size() && t.ranges[thread_steps[next].first].start_ns <= a.start_ns) {
        open.push_back(next++);
      }
      while (!open.empty() && t.ranges[thread_steps[open.back()].first].end_ns() < a.start_ns) {
        open.pop_back();
      }
      for (auto it = open.rbegin(); it != open.rend(); ++it) {
        const Range& r = t.ranges[thread_steps[*it].first];
        if (r.start_ns <= a.start_ns && a.end_ns() <= r.end_ns()) {
          graphs[k].batch_size = thread_steps[*it].second.batch_size;
          graphs[k].position = launches_in_step[*it]++;
          break;
        }
      }
    }
  }
  return graphs;
}

}  // namespace opmap::analysis
