#include "analysis/import/nvtx_names.h"

#include <cstddef>
#include <limits>

namespace opmap::analysis {
namespace {

// Unsigned decimal, false on anything else or int64 overflow.
bool ParseCount(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  int64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return false;
    value = value * 10 + (c - '0');
  }
  *out = value;
  return true;
}

// The length of the balanced value at the start of `s` — a list "[[8, 4], []]", a tuple or
// a dict — skipping quoted strings; 0 when `s` starts with none of "[({" or it never
// closes (a name cut short).
size_t BalancedLength(std::string_view s) {
  if (s.empty() || (s.front() != '[' && s.front() != '(' && s.front() != '{')) return 0;
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    if (c == '[' || c == '(' || c == '{') ++depth;
    if ((c == ']' || c == ')' || c == '}') && --depth == 0) return i + 1;
  }
  return 0;
}

// A bracketed list at the start of `s`: its length, else 0.
size_t ListLength(std::string_view s) { return s.starts_with('[') ? BalancedLength(s) : 0; }

// Parses "flops=1,bytes=2" (the text between the braces) into `out`; false when any
// entry is not key=digits or a number overflows int64.
bool ParsePayload(std::string_view body, NvtxName& out) {
  if (body.empty()) return false;
  NvtxName parsed;
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string_view entry = body.substr(0, comma);
    body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    int64_t value = 0;
    if (!ParseCount(entry.substr(eq + 1), &value)) return false;
    const std::string_view key = entry.substr(0, eq);
    if (key == "flops") parsed.flops = value;
    if (key == "bytes") parsed.bytes = value;
  }
  out.flops = parsed.flops;
  out.bytes = parsed.bytes;
  return true;
}

// PyTorch emit_nvtx (torch/csrc/profiler/util.cpp, getNvtxStr): the operator, then in this
// order ", seq = N" (or ", stashed seq = N" in backward), ", op_id = N", ", sizes = [...]",
// ", input_op_ids = [...]". The operator is what precedes the first ", <key> = "; the
// fields are read in turn, each value a count or a bracketed list, until one does not.
constexpr std::string_view kEmitKeys[] = {", seq = ", ", stashed seq = ", ", op_id = ",
                                          ", sizes = ", ", input_op_ids = "};

bool ParseEmitNvtx(std::string_view text, NvtxName& out) {
  size_t cut = std::string_view::npos;
  for (std::string_view key : kEmitKeys) {
    const size_t at = text.find(key);
    if (at != std::string_view::npos && at < cut) cut = at;
  }
  if (cut == std::string_view::npos || cut == 0) return false;
  out.name = text.substr(0, cut);
  out.form = NvtxForm::kEmitNvtx;
  std::string_view rest = text.substr(cut);
  while (!rest.empty()) {
    std::string_view key;
    for (std::string_view k : kEmitKeys) {
      if (rest.starts_with(k)) key = k;
    }
    if (key.empty()) return true;
    rest.remove_prefix(key.size());
    if (key == ", sizes = " || key == ", input_op_ids = ") {
      const size_t n = ListLength(rest);
      if (n == 0) return true;
      (key == ", sizes = " ? out.input_dims : out.input_op_ids) = rest.substr(0, n);
      rest.remove_prefix(n);
      continue;
    }
    size_t end = 0;
    while (end < rest.size() && rest[end] >= '0' && rest[end] <= '9') ++end;
    int64_t value = 0;
    if (!ParseCount(rest.substr(0, end), &value)) return true;
    (key == ", op_id = " ? out.op_id : out.seq) = value;
    rest.remove_prefix(end);
  }
  return true;
}

// vLLM's and SGLang's layerwise NVTX hooks (vllm/utils/nvtx_pytorch_hooks.py,
// sglang/srt/utils/nvtx_pytorch_hooks.py) push str() of a dict whose first key is
// 'Module'. Keys are read at the dict's top level only; a value cut short by the name
// bound ends the scan.
bool ParseLayerwise(std::string_view text, NvtxName& out) {
  constexpr std::string_view kHead = "{'Module': '";
  if (!text.starts_with(kHead)) return false;
  const size_t name_end = text.find('\'', kHead.size());
  if (name_end == std::string_view::npos || name_end == kHead.size()) return false;
  out.name = text.substr(kHead.size(), name_end - kHead.size());
  // vLLM's torch.compile wrapper names its compiled module by class.
  constexpr std::string_view kCompiled = "Torch Compiled Module (input):";
  if (out.name.starts_with(kCompiled) && out.name.size() > kCompiled.size()) {
    out.name.remove_prefix(kCompiled.size());
  }
  out.form = NvtxForm::kLayerwise;
  std::string_view rest = text.substr(name_end + 1);
  while (rest.starts_with(", '")) {
    const size_t key_end = rest.find("': ", 3);
    if (key_end == std::string_view::npos) return true;
    const std::string_view key = rest.substr(3, key_end - 3);
    rest.remove_prefix(key_end + 3);
    // Lists, and nested dicts ('TrainableParams', 'StaticParams') skipped whole.
    const size_t n = BalancedLength(rest);
    if (n == 0) return true;
    if (key == "Inputs") out.input_dims = rest.substr(0, n);
    if (key == "Outputs") out.output_marker = true;
    rest.remove_prefix(n);
  }
  return true;
}

// opmap_torch.annotate (python/opmap_torch): "opmap.module <path> (<Class>)", then
// " shapes=[...]" when asked for.
bool ParseOpmapModule(std::string_view text, NvtxName& out) {
  constexpr std::string_view kHead = "opmap.module ";
  if (!text.starts_with(kHead)) return false;
  std::string_view rest = text.substr(kHead.size());
  std::string_view shapes;
  constexpr std::string_view kShapes = " shapes=";
  if (const size_t at = rest.rfind(kShapes); at != std::string_view::npos) {
    const std::string_view list = rest.substr(at + kShapes.size());
    if (!list.empty() && ListLength(list) == list.size()) {
      shapes = list;
      rest = rest.substr(0, at);
    }
  }
  if (rest.empty()) return false;
  out.name = rest;
  out.input_dims = shapes;
  out.form = NvtxForm::kOpmapModule;
  return true;
}

}  // namespace

NvtxName ParseNvtxName(std::string_view text) {
  NvtxName out;
  out.name = text;
  if (ParseLayerwise(text, out) || ParseOpmapModule(text, out)) return out;
  if (!text.empty() && text.back() == '}') {
    const size_t open = text.rfind('{');
    if (open != std::string_view::npos && open > 0 &&
        ParsePayload(text.substr(open + 1, text.size() - open - 2), out)) {
      out.name = text.substr(0, open);
    }
  }
  ParseEmitNvtx(out.name, out);
  return out;
}

bool NameNvtxRange(std::string_view text, StringTable& strings, Range& r) {
  const NvtxName n = ParseNvtxName(text);
  if (n.output_marker) return false;
  r.name = strings.Intern(n.name);
  r.flops = n.flops;
  r.bytes = n.bytes;
  r.input_dims = n.input_dims.empty() ? kEmptyString : strings.Intern(n.input_dims);
  return true;
}

}  // namespace opmap::analysis
