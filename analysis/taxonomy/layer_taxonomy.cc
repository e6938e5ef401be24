#include "analysis/taxonomy/layer_taxonomy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "analysis/taxonomy/name_memo.h"
#include "common/base/absl_view.h"
#include "re2/re2.h"

namespace opmap::analysis {
namespace {

// Debian's Abseil has its own string_view type (ABSL_USES_STD_STRING_VIEW is 0).

struct Rule {
  LayerType type;
  const char* pattern;
};

// docs/metrics.md, "Kernel type and layer type": the kernel-name table, rows 1-9 in order
// (row 10, other, is "anything else"). Copied verbatim except that the table's `\|` is
// written `|`; why each family is where it is, is in the notes under the table.
constexpr Rule kKernelNameRules[] = {
    {LayerType::kCommunication,
     R"(^(?!triton_)(nccl|rccl|.*gloo:|.*multimem_all_reduce|.*cross_device_reduce|.*all_?gather|.*reduce_scatter|.*all_?reduce))"},
    {LayerType::kMemcpy,
     R"(^(memcpy|memset|dma)|catarraybatchedcopy|direct_copy_kernel|reshape_and_cache|store_kvcache)"},
    {LayerType::kAttention,
     R"(flash|fmha|sdpa|paged_attention|batchprefill|batchdecode|prefillwithkvcache|(^|[^a-z])mla(_|$)|attention|attn|aiter[0-9]+pa_|^reduce_segments$)"},
    {LayerType::kConv,
     R"(implicit_gemm|xmma_(fprop|dgrad|wgrad)|implicit_convolve|conv[123]d|cudnn::cnn|winograd)"},
    {LayerType::kMatmul,
     R"(^(?!triton_poi_|triton_red_|triton_per_).*(gemm|nvjet_|cutlass|cublas|s16816|s1688|gemv|splitkreduce|fused_moe|_scaled_mm|triton_tem_|(^|[^a-z])b?mm_kernel|addmm_kernel|deep_gemm|(^|[^a-z])cijk_|matmul_ogs|finalize_matmul|aiter[0-9]+fmoe))"},
    {LayerType::kNorm,
     R"(layer_?norm|rms_?norm|group_?norm|batch_?norm|bn_fw|rowwisemoments|l2norm|triton_(red|per)_.*rsqrt)"},
    {LayerType::kSoftmax, R"(softmax)"},
    {LayerType::kEmbedding, R"(embedding|indexselect|index_select)"},
    {LayerType::kElementwise,
     R"(elementwise|act_and_mul|silu|gelu|swiglu|rotary|triton_poi_|fill_|where|masked_fill)"},
};

// docs/metrics.md, "Operator names" table, in order; same matching as the kernel table.
constexpr Rule kOperatorNameRules[] = {
    {LayerType::kCommunication, R"(c10d::|nccl|all_reduce|all_gather|reduce_scatter|broadcast_)"},
    {LayerType::kAttention, R"(attention|sdpa|scaled_dot_product|flash|fmha|attn)"},
    {LayerType::kConv, R"(conv)"},
    {LayerType::kMatmul,
     R"(^aten::(mm|bmm|addmm|baddbmm|addbmm|matmul|linear|_scaled_mm|addmv|mv)$|gemm|matmul|linear)"},
    {LayerType::kNorm, R"(norm)"},
    {LayerType::kSoftmax, R"(softmax)"},
    {LayerType::kEmbedding, R"(embedding|index_select)"},
    {LayerType::kMemcpy, R"(^aten::(copy_|_to_copy|to|contiguous|clone|cat|stack)$|memcpy)"},
};

// How the rules run. Names are lowercased (ASCII) and matched against the lowercase
// patterns (checked below) with RE2: linear time in the name's length, no recursion (real
// kernel names reach 5k characters; std::regex's backtracking executor overflowed the
// stack on `.*` and spent 90% of `opmap analyze` on traces with long names). RE2 has no
// lookahead, so a leading `^(?!A|B|...)` of plain literals — row 1's `^(?!triton_)`, row
// 5's Inductor prefixes — is taken off the pattern and checked as "starts with none of
// A, B, ..." before the rest is matched. Any other lookahead is a build defect (abort).
constexpr bool IsLowercaseAscii(const char* pattern) {
  for (; *pattern != '\0'; ++pattern) {
    if (*pattern >= 'A' && *pattern <= 'Z') return false;
  }
  return true;
}

template <size_t N>
constexpr bool AllLowercase(const Rule (&rules)[N]) {
  for (const Rule& rule : rules) {
    if (!IsLowercaseAscii(rule.pattern)) return false;
  }
  return true;
}
static_assert(AllLowercase(kKernelNameRules) && AllLowercase(kOperatorNameRules),
              "names are lowercased before matching, so patterns must be lowercase");

struct CompiledRule {
  LayerType type;
  std::vector<std::string> excluded_prefixes;  // from a leading `^(?!A|B)`; empty = none
  std::unique_ptr<re2::RE2> regex;
};

// The lookahead's alternatives are compared as literal prefixes, so they may hold only
// characters that stand for themselves in a regex.
bool IsPlainLiteral(std::string_view text) {
  for (char c : text) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
    if (!plain) return false;
  }
  return !text.empty();
}

[[noreturn]] void BadRule(const char* pattern, const char* why) {
  // The patterns are constants covered by tests: failing here is a build defect.
  std::fprintf(stderr, "opmap taxonomy: bad rule /%s/: %s\n", pattern, why);
  std::abort();
}

template <size_t N>
std::vector<CompiledRule>* Compile(const Rule (&rules)[N]) {
  auto* compiled = new std::vector<CompiledRule>();
  compiled->reserve(N);
  for (const Rule& rule : rules) {
    std::string pattern = rule.pattern;
    std::vector<std::string> excluded;
    constexpr std::string_view kLookahead = "^(?!";
    if (pattern.rfind(kLookahead, 0) == 0) {
      const size_t close = pattern.find(')', kLookahead.size());
      if (close == std::string::npos) BadRule(rule.pattern, "unclosed lookahead");
      const std::string body = pattern.substr(kLookahead.size(), close - kLookahead.size());
      for (size_t begin = 0; begin <= body.size();) {
        const size_t bar = std::min(body.find('|', begin), body.size());
        excluded.push_back(body.substr(begin, bar - begin));
        if (!IsPlainLiteral(excluded.back())) BadRule(rule.pattern, "lookahead not literals");
        begin = bar + 1;
      }
      pattern = "^" + pattern.substr(close + 1);
    }
    re2::RE2::Options options;
    options.set_never_capture(true);
    // Byte semantics, as std::regex had: `.` matches any byte, so names holding
    // invalid UTF-8 classify like any other.
    options.set_encoding(re2::RE2::Options::EncodingLatin1);
    options.set_log_errors(false);
    auto regex = std::make_unique<re2::RE2>(pattern, options);
    if (!regex->ok()) BadRule(rule.pattern, regex->error().c_str());
    compiled->push_back({rule.type, std::move(excluded), std::move(regex)});
  }
  return compiled;
}

// Built on first use; function-local statics are initialised once, thread-safely.
// Never destroyed, so classification stays valid during static destruction. RE2 objects
// are safe to use from several threads at once.
const std::vector<CompiledRule>& KernelNameRules() {
  static const std::vector<CompiledRule>* const rules = Compile(kKernelNameRules);
  return *rules;
}

const std::vector<CompiledRule>& OperatorNameRules() {
  static const std::vector<CompiledRule>* const rules = Compile(kOperatorNameRules);
  return *rules;
}

// ASCII lowercasing, like the "C" locale's tolower that a case-insensitive match applies;
// bytes >= 0x80 are left alone (no pattern literal can match them either way).
std::string LowercaseAscii(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

// The index of the first rule that matches `text` (already lowercased), or rules.size().
size_t FirstMatch(const std::vector<CompiledRule>& rules, const std::string& text) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const CompiledRule& rule = rules[i];
    bool excluded = false;
    for (const std::string& prefix : rule.excluded_prefixes) {
      excluded = excluded || text.rfind(prefix, 0) == 0;
    }
    if (excluded) continue;
    if (re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *rule.regex)) {
      return i;
    }
  }
  return rules.size();
}

// Each table's first matching row per distinct name, for the whole process (NameMemo's
// header says why). 4 MiB each holds ~40,000 typical names; past that, names are matched
// each time, as before.
constexpr size_t kMemoBytes = size_t{4} << 20;

size_t MemoizedFirstMatch(const std::vector<CompiledRule>& rules, NameMemo& memo,
                          std::string_view name) {
  if (std::optional<int> row = memo.Find(name)) return static_cast<size_t>(*row);
  const size_t row = FirstMatch(rules, LowercaseAscii(name));
  memo.Insert(name, static_cast<int>(row));
  return row;
}

size_t KernelNameMatch(std::string_view kernel_name) {
  static NameMemo* const memo = new NameMemo(kMemoBytes);
  return MemoizedFirstMatch(KernelNameRules(), *memo, kernel_name);
}

size_t OperatorNameMatch(std::string_view op_name) {
  static NameMemo* const memo = new NameMemo(kMemoBytes);
  return MemoizedFirstMatch(OperatorNameRules(), *memo, op_name);
}

constexpr std::string_view kLayerTypeNames[kNumLayerTypes] = {
    "communication", "memcpy",  "attention", "conv",        "matmul",
    "norm",          "softmax", "embedding", "elementwise", "other",
};

}  // namespace

std::string_view LayerTypeName(LayerType type) {
  const auto index = static_cast<size_t>(type);
  return index < kNumLayerTypes ? kLayerTypeNames[index] : kLayerTypeNames[kNumLayerTypes - 1];
}

std::optional<LayerType> ParseLayerType(std::string_view name) {
  for (int i = 0; i < kNumLayerTypes; ++i) {
    if (absl::EqualsIgnoreCase(base::AbslView(name), base::AbslView(kLayerTypeNames[i]))) {
      return static_cast<LayerType>(i);
    }
  }
  return std::nullopt;
}

int KernelNameTableRow(std::string_view kernel_name) {
  // Row 10 (other) is rules.size() + 1.
  return static_cast<int>(KernelNameMatch(kernel_name)) + 1;
}

std::string_view KernelNameTablePattern(int row) {
  if (row < 1 || row > static_cast<int>(std::size(kKernelNameRules))) return {};
  return kKernelNameRules[row - 1].pattern;
}

LayerType ClassifyKernelName(std::string_view kernel_name) {
  const std::vector<CompiledRule>& rules = KernelNameRules();
  const size_t i = KernelNameMatch(kernel_name);
  return i < rules.size() ? rules[i].type : LayerType::kOther;
}

std::optional<LayerType> ClassifyOperatorName(std::string_view op_name) {
  const std::vector<CompiledRule>& rules = OperatorNameRules();
  const size_t i = OperatorNameMatch(op_name);
  if (i == rules.size()) return std::nullopt;
  return rules[i].type;
}

std::string_view KernelTypeName(KernelType type) {
  switch (type) {
    case KernelType::kCommunication:
      return "communication";
    case KernelType::kMemory:
      return "memory";
    case KernelType::kComputation:
      break;
  }
  return "computation";
}

// HolisticTraceAnalysis, hta/utils/utils.py, in its regex form (found with the code
// search; the forks tals/HolisticTraceAnalysis @91d2d9a and keshprad/HolisticTraceAnalysis
// @1d58310 carry it with local edits). It agrees with HTA 0.6.1's kernel_type on all 946
// rows of shared/reference/hta/*/kernel_breakdown_all_kernels.csv (kernel_type_test.cc):
//   NCCL_KERNEL_RE = re.compile(r"^nccl.*Kernel")                 # is_comm_kernel
//   MEMORY_KERNEL_RE = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")   # is_memory_kernel
//   get_kernel_type: COMMUNICATION if comm, elif MEMORY if memory, elif not
//   (^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync) COMPUTATION, else OTHER.
// OTHER (names containing "Sync" or a non-leading "Memcpy") is computation here, as
// docs/metrics.md says; no kernel in shared/traces has such a name. Older HTA tested
// `"ncclKernel" in name` (upstream @0c2146a), then also "ncclDevKernel" (ziyang-arch fork
// @4656a20); all three agree on every NCCL name in shared/traces, and HTA 0.6.1's output
// there labels ncclDevKernel_AllGather_* COMMUNICATION. No HTA version knows ROCm's old
// rccl_main_kernel. re.match anchors at the start and is case-sensitive; `.` stops at
// a newline.
KernelType ClassifyKernelType(std::string_view name, bool is_memcpy_or_memset_event) {
  if (is_memcpy_or_memset_event) return KernelType::kMemory;
  if (name.starts_with("nccl")) {
    std::string_view rest = name.substr(4);
    rest = rest.substr(0, rest.find('\n'));
    if (rest.find("Kernel") != std::string_view::npos) return KernelType::kCommunication;
  }
  if (name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma")) {
    return KernelType::kMemory;
  }
  return KernelType::kComputation;
}

LayerType LayerClassifier::ClassifyKernel(std::string_view kernel_name) {
  auto it = kernel_by_name_.find(base::AbslView(kernel_name));
  if (it != kernel_by_name_.end()) return it->second;
  ++evaluations_;
  const LayerType type = ClassifyKernelName(kernel_name);
  kernel_by_name_.emplace(std::string(kernel_name), type);
  return type;
}

LayerType LayerClassifier::ClassifyKernel(StringId id, std::string_view kernel_name) {
  auto [it, inserted] = kernel_by_id_.try_emplace(id, LayerType::kOther);
  if (inserted) {
    ++evaluations_;
    it->second = ClassifyKernelName(kernel_name);
  }
  return it->second;
}

namespace {
uint8_t PackOperator(std::optional<LayerType> type, uint8_t none) {
  return type.has_value() ? static_cast<uint8_t>(*type) : none;
}
std::optional<LayerType> UnpackOperator(uint8_t packed, uint8_t none) {
  if (packed == none) return std::nullopt;
  return static_cast<LayerType>(packed);
}
}  // namespace

std::optional<LayerType> LayerClassifier::ClassifyOperator(std::string_view op_name) {
  auto it = operator_by_name_.find(base::AbslView(op_name));
  if (it != operator_by_name_.end()) return UnpackOperator(it->second, kNoOperatorRule);
  ++evaluations_;
  const std::optional<LayerType> type = ClassifyOperatorName(op_name);
  operator_by_name_.emplace(std::string(op_name), PackOperator(type, kNoOperatorRule));
  return type;
}

std::optional<LayerType> LayerClassifier::ClassifyOperator(StringId id, std::string_view op_name) {
  auto [it, inserted] = operator_by_id_.try_emplace(id, kNoOperatorRule);
  if (inserted) {
    ++evaluations_;
    it->second = PackOperator(ClassifyOperatorName(op_name), kNoOperatorRule);
  }
  return UnpackOperator(it->second, kNoOperatorRule);
}

}  // namespace opmap::analysis
