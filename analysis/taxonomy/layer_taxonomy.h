// Kernel type and layer type of GPU work, exactly as docs/metrics.md ("Kernel type and layer
// type") defines them. The rule tables live in layer_taxonomy.cc, copied from docs/metrics.md;
// change them there and here together, test vector first (see README.md).
//
//   KernelType  — HTA-compatible: communication / memory / computation. It decides what
//                 counts as "compute" in the GPU-time breakdown, so it must agree with
//                 HolisticTraceAnalysis' get_kernel_type() on every name.
//   LayerType   — the operator class (matmul, attention, norm, ...), from the operator's
//                 name when the operator matches a rule, else from the kernel's name.
//
// Example:
//   LayerClassifier classifier;                      // one per thread
//   for (const GpuEvent& e : trace.gpu_events) {
//     LayerType layer = classifier.ClassifyKernel(e.name, strings.Get(e.name));
//     KernelType kind = ClassifyKernelType(strings.Get(e.name),
//                                          e.kind != GpuEventKind::kKernel);
//   }
//
// Thread safety: the free functions are thread-safe (the compiled rules are built once,
// on first use, and never change). A LayerClassifier is not: give each thread its own.
// Nothing here throws.
#ifndef OPMAP_ANALYSIS_TAXONOMY_LAYER_TAXONOMY_H_
#define OPMAP_ANALYSIS_TAXONOMY_LAYER_TAXONOMY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "analysis/model/string_table.h"

namespace opmap::analysis {

// ----- Layer type -------------------------------------------------------------------

// In the order of docs/metrics.md's kernel-name table (row 1 = kCommunication ... row 10 =
// kOther). The values are stable: they may be stored.
enum class LayerType : uint8_t {
  kCommunication = 0,
  kMemcpy = 1,
  kAttention = 2,
  kConv = 3,
  kMatmul = 4,
  kNorm = 5,
  kSoftmax = 6,
  kEmbedding = 7,
  kElementwise = 8,
  kOther = 9,
};
inline constexpr int kNumLayerTypes = 10;

// "communication", "memcpy", "attention", "conv", "matmul", "norm", "softmax",
// "embedding", "elementwise", "other". An out-of-range value gives "other".
std::string_view LayerTypeName(LayerType type);

// Inverse of LayerTypeName, ignoring ASCII case; nullopt for any other string.
std::optional<LayerType> ParseLayerType(std::string_view name);

// The docs/metrics.md kernel-name table: case-insensitive search, first matching row wins,
// kOther when none matches. Safe on names of any length (no deep recursion).
LayerType ClassifyKernelName(std::string_view kernel_name);

// The row (1..10) of the kernel-name table that decides `kernel_name`; 10 means no
// rule matched. For reports and tests that explain a classification.
int KernelNameTableRow(std::string_view kernel_name);

// The regex of row `row` (1..9) of the kernel-name table as docs/metrics.md writes it,
// with `|` for the table's `\|`; "" for any other row. Lets a test keep the two copies equal.
std::string_view KernelNameTablePattern(int row);

// The docs/metrics.md operator-name table (ATen ops, NVTX operator ranges), same matching.
// nullopt when no row matches: the caller then takes the layer type that holds most of
// the operator's kernels' GPU time.
std::optional<LayerType> ClassifyOperatorName(std::string_view op_name);

// ----- Kernel type ------------------------------------------------------------------

enum class KernelType : uint8_t { kComputation = 0, kCommunication = 1, kMemory = 2 };

// "computation", "communication", "memory".
std::string_view KernelTypeName(KernelType type);

// HTA's rule (hta/utils/utils.py, get_kernel_type): communication when the name matches
// `^nccl.*Kernel`, memory when it matches `^(Memcpy|Memset|dma)`, both case-sensitive;
// else computation. A memcpy/memset activity (not a kernel) is memory whatever its name.
// RCCL on ROCm names its kernels ncclDevKernel_* too, so they are communication.
KernelType ClassifyKernelType(std::string_view name, bool is_memcpy_or_memset_event);

// ----- Memoization ------------------------------------------------------------------

// Caches layer types per distinct name, so classifying 10^6 kernels with a few hundred
// distinct names costs a few hundred regex evaluations. Keys are either the name itself
// or a caller's StringId; an id must always denote the same name for the classifier's
// lifetime (true for ids of one StringTable). Not thread-safe: one per thread.
class LayerClassifier {
 public:
  LayerClassifier() = default;
  LayerClassifier(const LayerClassifier&) = delete;
  LayerClassifier& operator=(const LayerClassifier&) = delete;
  LayerClassifier(LayerClassifier&&) = default;
  LayerClassifier& operator=(LayerClassifier&&) = default;

  LayerType ClassifyKernel(std::string_view kernel_name);
  LayerType ClassifyKernel(StringId id, std::string_view kernel_name);

  std::optional<LayerType> ClassifyOperator(std::string_view op_name);
  std::optional<LayerType> ClassifyOperator(StringId id, std::string_view op_name);

  // Number of names actually run through the rule tables (cache misses).
  size_t evaluations() const { return evaluations_; }

 private:
  // An operator result packs nullopt as kNoOperatorRule.
  static constexpr uint8_t kNoOperatorRule = 0xFF;

  absl::flat_hash_map<std::string, LayerType> kernel_by_name_;
  absl::flat_hash_map<StringId, LayerType> kernel_by_id_;
  absl::flat_hash_map<std::string, uint8_t> operator_by_name_;
  absl::flat_hash_map<StringId, uint8_t> operator_by_id_;
  size_t evaluations_ = 0;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_TAXONOMY_LAYER_TAXONOMY_H_
