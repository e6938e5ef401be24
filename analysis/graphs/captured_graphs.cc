#include "analysis/graphs/captured_graphs.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/serving/request_key.h"
#include "common/text/text_util.h"

namespace opmap::analysis {
namespace {

using ThreadKey = std::pair<int64_t, int64_t>;  // (process, thread)

constexpr std::string_view kModulePrefix = "nn.Module: ";

// Ranges the merge copies: operators (they own kernels) and nn.Module ranges (they name
// the operators' modules). Step annotations, such as vLLM's capture_<bs>_<mode>, are
// subjects, never a kernel's operator.
bool IsCopiedRange(const Trace& t, const Range& r) {
  std::string_view name = t.strings.Get(r.name);
  if (r.kind == RangeKind::kPythonFunction) return name.starts_with(kModulePrefix);
  return IsOperatorRange(r.kind) && RequestKey(name).empty() &&
         CaptureAnnotationBatchSize(name) < 0;
}

}  // namespace

int64_t CaptureAnnotationBatchSize(std::string_view name) {
  constexpr std::string_view kPrefix = "capture_";
  if (!name.starts_with(kPrefix)) return -1;
  int64_t bs = 0;
  size_t i = kPrefix.size();
  while (i < name.size() && i - kPrefix.size() < 10 && name[i] >= '0' && name[i] <= '9') {
    bs = bs * 10 + (name[i++] - '0');
  }
  size_t digits = i - kPrefix.size();
  if (digits == 0 || digits >= 10 || bs < 1 || i >= name.size() || name[i] != '_') return -1;
  return bs;
}

bool IsNodeCreatingCall(std::string_view name, NodeKind* kind) {
  if (text::Contains(name, "Memcpy")) {
    *kind = NodeKind::kMemcpy;
    return true;
  }
  if (text::Contains(name, "Memset")) {
    *kind = NodeKind::kMemset;
    return true;
  }
  // cudaLaunchKernel(ExC), cuLaunchKernel(Ex), hip(Ext)ModuleLaunchKernel,
  // cudaLaunchCooperativeKernel; a host function node runs on the CPU and a graph launch
  // inside a capture is a child graph, neither a GPU event of its own.
  if (text::Contains(name, "Launch") && !IsGraphLaunchCall(name) &&
      !text::Contains(name, "HostFunc")) {
    *kind = NodeKind::kKernel;
    return true;
  }
  return false;
}

std::vector<CapturedGraph> FindCapturedGraphs(const Trace& t, int32_t capture_index) {
  // Begin and end calls per thread, in time order.
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> begins, ends, launches;
  for (int32_t i = 0; i < static_cast<int32_t>(t.api_calls.size()); ++i) {
    const ApiCall& a = t.api_calls[i];
    std::string_view name = t.strings.Get(a.name);
    ThreadKey key{a.process, a.thread};
    NodeKind kind;
    if (text::Contains(name, "StreamBeginCapture")) {
      begins[key].push_back(i);
    } else if (text::Contains(name, "StreamEndCapture")) {
      ends[key].push_back(i);
    } else if (IsNodeCreatingCall(name, &kind)) {
      launches[key].push_back(i);
    }
  }
  auto by_start = [&](int32_t x, int32_t y) {
    const ApiCall& a = t.api_calls[x];
    const ApiCall& b = t.api_calls[y];
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : x < y;
  };
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> ranges_by_thread;
  for (int32_t i = 0; i < static_cast<int32_t>(t.ranges.size()); ++i) {
    const Range& r = t.ranges[i];
    if (IsCopiedRange(t, r)) ranges_by_thread[{r.process, r.thread}].push_back(i);
  }
  auto outer_first = [&](int32_t x, int32_t y) {
    const Range& a = t.ranges[x];
    const Range& b = t.ranges[y];
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns() != b.end_ns()) return a.end_ns() > b.end_ns();
    return x < y;
  };

  absl::flat_hash_map<ThreadKey, std::vector<std::pair<int32_t, int64_t>>> annotations;
  for (int32_t i = 0; i < static_cast<int32_t>(t.ranges.size()); ++i) {
    const Range& r = t.ranges[i];
    int64_t bs = CaptureAnnotationBatchSize(t.strings.Get(r.name));
    if (bs > 0) annotations[{r.process, r.thread}].emplace_back(i, bs);
  }

  std::vector<CapturedGraph> graphs;
  for (auto& [key, thread_begins] : begins) {
    std::vector<int32_t>& thread_ends = ends[key];
    std::vector<int32_t>& thread_launches = launches[key];
    std::vector<int32_t>& thread_ranges = ranges_by_thread[key];
    std::sort(thread_begins.begin(), thread_begins.end(), by_start);
    std::sort(thread_ends.begin(), thread_ends.end(), by_start);
    std::sort(thread_launches.begin(), thread_launches.end(), by_start);
    std::sort(thread_ranges.begin(), thread_ranges.end(), outer_first);
    size_t next_end = 0;
    for (int32_t b : thread_begins) {
      const ApiCall& begin = t.api_calls[b];
      while (next_end < thread_ends.size() &&
             t.api_calls[thread_ends[next_end]].start_ns < begin.end_ns()) {
        ++next_end;
      }
      if (next_end == thread_ends.size()) break;  // a capture the trace did not see end
      const ApiCall& end = t.api_calls[thread_ends[next_end++]];
      CapturedGraph g;
      g.capture = capture_index;
      g.begin_ns = begin.end_ns();
      g.end_ns = end.start_ns;
      g.process = key.first;
      g.thread = key.second;
      if (auto a = annotations.find(key); a != annotations.end()) {
        for (const auto& [range, bs] : a->second) {
          const Range& r = t.ranges[range];
          if (r.start_ns <= begin.start_ns && end.end_ns() <= r.end_ns()) g.batch_size = bs;
        }
      }
      auto first = std::lower_bound(
          thread_launches.begin(), thread_launches.end(), g.begin_ns,
          [&](int32_t i, int64_t v) { return t.api_calls[i].start_ns < v; });
      for (auto it = first; it != thread_launches.end(); ++it) {
        const ApiCall& a = t.api_calls[*it];
        if (a.start_ns > g.end_ns) break;
        if (a.end_ns() > g.end_ns) continue;
        CapturedNode node;
        node.api = *it;
        IsNodeCreatingCall(t.strings.Get(a.name), &node.kind);
        node.kernel = t.strings.Get(a.kernel);
        if (node.kind == NodeKind::kKernel && node.kernel.empty()) g.all_named = false;
        g.nodes.push_back(node);
      }
      // The ranges enclosing some node's launch: one sweep with a stack of open ranges.
      std::vector<int32_t> open;
      std::vector<bool> used(thread_ranges.size(), false);
      size_t next = 0;
      for (const CapturedNode& node : g.nodes) {
        const ApiCall& a = t.api_calls[node.api];
        while (next < thread_ranges.size() &&
               t.ranges[thread_ranges[next]].start_ns <= a.start_ns) {
          open.push_back(static_cast<int32_t>(next++));
        }
        for (int32_t k : open) {
          const Range& r = t.ranges[thread_ranges[k]];
          if (r.start_ns <= a.start_ns && a.end_ns() <= r.end_ns()) used[k] = true;
        }
        open.erase(std::remove_if(open.begin(), open.end(),
                                  [&](int32_t k) {
                                    return t.ranges[thread_ranges[k]].end_ns() < a.start_ns;
                                  }),
                   open.end());
      }
      // Operators nested in a copied operator come along though they launch nothing: they
      // hold what the roofline reads of their parent (a fused MoE's expert weight views,
      // its TopK). One sweep in outer-first order with the copied operators still open.
      std::vector<const Range*> enclosing;
      for (size_t k = 0; k < thread_ranges.size(); ++k) {
        const Range& r = t.ranges[thread_ranges[k]];
        while (!enclosing.empty() && enclosing.back()->end_ns() < r.start_ns) enclosing.pop_back();
        if (r.kind == RangeKind::kPythonFunction) continue;
        if (!used[k] && !enclosing.empty() && r.end_ns() <= enclosing.back()->end_ns()) used[k] = true;
        if (used[k]) enclosing.push_back(&r);
      }
      for (size_t k = 0; k < thread_ranges.size(); ++k) {
        if (used[k]) g.ranges.push_back(thread_ranges[k]);
      }
      graphs.push_back(std::move(g));
    }
  }
  std::sort(graphs.begin(), graphs.end(), [](const CapturedGraph& a, const CapturedGraph& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.thread < b.thread;
  });
  for (size_t i = 0; i < graphs.size(); ++i) graphs[i].ordinal = static_cast<int32_t>(i);
  return graphs;
}

}  // namespace opmap::analysis
