// Collectives and KV-cache writes (docs/metrics.md), as this rank's own HBM traffic:
//   all_reduce        FLOPs 1 per element (the reduction), bytes the tensor read + written
//   all_gather        FLOPs 0, bytes the local input read + the gathered output written
//   reduce_scatter    FLOPs 1 per input element, bytes input + output
//   reshape_and_cache key and value read, written into the cache at its dtype, + slots
//                     (SGLang's store_cache the same);
//                     1 FLOP per element when it converts (fp8 cache), else 0
// Interconnect bytes are not HBM bytes and are not counted; the class of a collective is
// communication by rule 1 whatever its utilizations.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/roofline/cost_internal.h"

namespace opmap::analysis::cost {
bool Communication(absl::string_view op, const std::vector<OpArg>& args, OpCost& c) {
  const bool reduce = IsOneOf(op, {"vllm::all_reduce", "symm_mem::multimem_all_reduce_",
                               "c10d::allreduce_", "_c10d_functional::all_reduce",
                               "_c10d_functional::all_reduce_", "vllm::outplace_all_reduce",
                               "symm_mem::one_shot_all_reduce", "symm_mem::two_shot_all_reduce_"});
  const bool gather = IsOneOf(op, {"c10d::_allgather_base_", "c10d::allgather_",
                               "_c10d_functional::all_gather_into_tensor", "vllm::all_gather"});
  const bool scatter = IsOneOf(op, {"c10d::_reduce_scatter_base_", "c10d::reduce_scatter_",
                                "_c10d_functional::reduce_scatter_tensor", "vllm::reduce_scatter"});
  const bool cache = IsOneOf(op, {"_C_cache_ops::reshape_and_cache_flash",
                              "_C_cache_ops::reshape_and_cache", "sglang::store_cache"});
  if (!reduce && !gather && !scatter && !cache) return false;
  c.family = cache ? "kv cache" : "communication";
  if (cache) {
    // (key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale);
    // SGLang's store_cache(k, v, k_cache, v_cache, indices, ...) the same.
    const OpArg* k = TensorAt(args, 0, 1);
    const OpArg* v = TensorAt(args, 1, 1);
    const OpArg* kc = TensorAt(args, 2, 1);
    const OpArg* slots = TensorAt(args, 4, 1);
    if (k == nullptr || v == nullptr || kc == nullptr || slots == nullptr) {
      Missing(c, op, "key/value/cache/slot shapes not recorded");
      return true;
    }
    const double n = k->Numel() + v->Numel();
    const double read = TensorBytes(*k) + TensorBytes(*v) + TensorBytes(*slots);
    const double written = n * Eb(*kc);
    const bool converts = Eb(*kc) != Eb(*k);
    Set(c, converts ? n : 0, converts ? absl::StrCat("1 per element converted · ", Num(n)) : "0",
        read + written,
        absl::StrCat("key + value + slots ", Num(read), " + cache writes ", Num(written),
                     " bytes"));
    c.compute_dtype = k->type;
    return true;
  }
  // all_gather(out, in, ...): the first tensor is the gathered output.
  const OpArg* t = TensorAt(args, 0, 1);
  if (t == nullptr) {
    Missing(c, op, "tensor shape or dtype not recorded");
    return true;
  }
  c.compute_dtype = t->type;
  if (reduce) {
    const double b = TensorBytes(*t);
    Set(c, t->Numel(), absl::StrCat("1 per element (the reduction) · ", Num(t->Numel())),
        2 * b, absl::StrCat("tensor read + written: 2·", Num(b), " bytes (this rank's HBM)"));
    return true;
  }
  const OpArg* other = TensorAt(args, 1, 1);
  const double bytes = TensorBytes(*t) + (other ? TensorBytes(*other) : 0);
  const double flops = scatter ? (other ? std::max(t->Numel(), other->Numel()) : t->Numel()) : 0;
  Set(c, flops, scatter ? absl::StrCat("1 per input element · ", Num(flops)) : "0 (data movement)",
      bytes, absl::StrCat("input + output = ", Num(bytes), " bytes (this rank's HBM)"));
  return true;
}

}  // namespace opmap::analysis::cost
