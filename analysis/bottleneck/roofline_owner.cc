// The operator a roofline group is costed at. Kernels map to the innermost launching range,
// which for attention, convolution and norms is often an implementation op
// (aten::_flash_attention_forward, aten::cudnn_convolution, aten::native_layer_norm, ...)
// whose recorded arguments lack what the cost needs (the causal flag, the conv geometry in
// the caller's convention) or name it differently. Such an op is costed at the nearest
// enclosing operator of its family that the caller recorded
// (aten::_scaled_dot_product_flash_attention, aten::convolution, aten::layer_norm), the
// operator TraceLens reports, so groups compare one to one.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "analysis/bottleneck/sheet_internal.h"

namespace opmap::analysis::sheet {
namespace {

// Implementation op → the callers it is costed at, innermost first.
const absl::flat_hash_map<std::string_view, std::vector<std::string_view>>& Callers() {
  static const auto* m = new absl::flat_hash_map<std::string_view, std::vector<std::string_view>>{
      {"aten::_flash_attention_forward",
       {"aten::_scaled_dot_product_flash_attention", "aten::scaled_dot_product_attention"}},
      {"aten::_efficient_attention_forward",
       {"aten::_scaled_dot_product_efficient_attention", "aten::scaled_dot_product_attention"}},
      {"aten::_cudnn_attention_forward",
       {"aten::_scaled_dot_product_cudnn_attention", "aten::scaled_dot_product_attention"}},
      {"aten::native_layer_norm", {"aten::layer_norm"}},
      {"aten::native_batch_norm", {"aten::batch_norm"}},
      {"aten::cudnn_batch_norm", {"aten::batch_norm"}},
      {"aten::_batch_norm_impl_index", {"aten::batch_norm"}},
      {"aten::native_group_norm", {"aten::group_norm"}},
      {"aten::cudnn_convolution", {"aten::convolution"}},
      {"aten::cudnn_convolution_transpose", {"aten::convolution"}},
      {"aten::_convolution", {"aten::convolution"}},
      {"aten::miopen_convolution", {"aten::convolution"}},
      {"aten::mkldnn_convolution", {"aten::convolution"}},
  };
  return *m;
}

}  // namespace

RooflineOwners::RooflineOwners(const Trace& trace) : trace_(trace) {
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    if (r.kind == RangeKind::kCpuOp) by_thread_[{r.process, r.thread}].push_back(static_cast<int32_t>(i));
  }
  for (auto& [key, v] : by_thread_) {
    std::stable_sort(v.begin(), v.end(), [&](int32_t a, int32_t b) {
      return trace.ranges[a].start_ns < trace.ranges[b].start_ns;
    });
  }
}

int32_t RooflineOwners::Owner(int32_t range) {
  auto cached = cache_.find(range);
  if (cached != cache_.end()) return cached->second;
  int32_t owner = range;
  const Range& r = trace_.ranges[range];
  auto callers = Callers().find(trace_.strings.Get(r.name));
  auto thread = by_thread_.find({r.process, r.thread});
  if (callers != Callers().end() && thread != by_thread_.end()) {
    const std::vector<int32_t>& v = thread->second;
    // Enclosing ranges start at or before it; walk back from its position.
    auto it = std::upper_bound(v.begin(), v.end(), r.start_ns, [&](int64_t t, int32_t i) {
      return t < trace_.ranges[i].start_ns;
    });
    int best_rank = static_cast<int>(callers->second.size());
    int scanned = 0;
    while (it != v.begin() && scanned++ < 256) {
      --it;
      const Range& p = trace_.ranges[*it];
      if (*it == range || p.end_ns() < r.end_ns()) continue;
      const std::string_view name = trace_.strings.Get(p.name);
      for (int k = 0; k < best_rank; ++k) {
        if (name == callers->second[k]) {
          best_rank = k;
          owner = *it;
        }
      }
      if (best_rank == 0) break;
    }
  }
  cache_[range] = owner;
  return owner;
}

}  // namespace opmap::analysis::sheet
