#include "analysis/mfu/hardware_envelope.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/text/key_value.h"

namespace opmap::analysis {
namespace {

constexpr double kTera = 1e12;

// Built-in table names (EnvelopeForGpuName matches by name, never by index).
constexpr char kA100[] = "A100 SXM4 80GB";
constexpr char kH100Sxm[] = "H100 SXM5 80GB";
constexpr char kH200[] = "H200 SXM 141GB";
constexpr char kB200[] = "B200 HGX 180GB";
constexpr char kH100Pcie[] = "H100 PCIe 80GB";
constexpr char kH100Nvl[] = "H100 NVL 94GB";
constexpr char kGh200Hbm3[] = "GH200 96GB HBM3";
constexpr char kGh200Hbm3e[] = "GH200 144GB HBM3e";
constexpr char kH20[] = "H20 96GB";
constexpr char kL4[] = "L4 24GB";
constexpr char kL40s[] = "L40S 48GB";
constexpr char kA10[] = "A10 24GB";
constexpr char kA10g[] = "A10G 24GB";
constexpr char kGb200[] = "GB200 186GB";
constexpr char kMi300x[] = "MI300X 192GB";
constexpr char kMi325x[] = "MI325X 256GB";

// One table row: TB/s and TFLOP/s as datasheets print them. ridge nullopt: bf16 / hbm.
struct Spec {
  const char* name = "";
  int32_t sms = 0;
  double hbm_tb = 0;
  std::optional<double> bf16 = {}, fp8 = {}, tf32 = {}, fp32 = {};
  std::optional<double> vector_fp32 = {}, vector_bf16 = {};
  std::optional<double> ridge = {};
  const char* power = "";
  const char* source = "";
};

HardwareEnvelope Make(const Spec& s) {
  auto scale = [](std::optional<double> t) -> std::optional<double> {
    if (!t) return std::nullopt;
    return *t * kTera;
  };
  HardwareEnvelope e;
  e.name = s.name;
  e.power_mode = s.power;
  e.source = s.source;
  e.sm_count = s.sms;
  e.hbm_bytes_per_s = s.hbm_tb * kTera;
  e.bf16_flops_per_s = scale(s.bf16);
  e.fp8_flops_per_s = scale(s.fp8);
  e.tf32_flops_per_s = scale(s.tf32);
  e.fp32_flops_per_s = scale(s.fp32);
  e.vector_fp32_flops_per_s = scale(s.vector_fp32);
  e.vector_bf16_flops_per_s = scale(s.vector_bf16);
  e.ridge_bf16_flop_per_byte = s.ridge ? s.ridge : e.RidgeFlopPerByte(Precision::kBf16);
  return e;
}

std::optional<HardwareEnvelope> Builtin(std::string_view name) {
  for (const HardwareEnvelope& e : BuiltinEnvelopes()) {
    if (e.name == name) return e;
  }
  return std::nullopt;
}

// `model` occurs in `n` as a whole word: not preceded or followed by a letter or digit
// ("l4" in "nvidia l4", not in "nvidia l40s"; "a10" not in "a100" or "a10g").
bool HasModel(absl::string_view n, absl::string_view model) {
  for (size_t pos = n.find(model); pos != absl::string_view::npos; pos = n.find(model, pos + 1)) {
    const size_t end = pos + model.size();
    const bool left = pos == 0 || !absl::ascii_isalnum(static_cast<unsigned char>(n[pos - 1]));
    const bool right = end == n.size() || !absl::ascii_isalnum(static_cast<unsigned char>(n[end]));
    if (left && right) return true;
  }
  return false;
}

}  // namespace

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}

std::optional<Precision> PrecisionFromInputType(std::string_view t_in) {
  absl::string_view t(t_in.data(), t_in.size());
  std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(t));
  if (absl::StartsWith(s, "c10::")) s = s.substr(5);
  if (s == "bfloat16") return Precision::kBf16;
  if (s == "half" || s == "float16") return Precision::kFp16;
  if (s == "float" || s == "float32") return Precision::kFp32;
  if (absl::StartsWith(s, "float8")) return Precision::kFp8;
  return std::nullopt;
}

int ElementBytes(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    case Precision::kBf16:
    case Precision::kFp16: return 2;
    case Precision::kFp8: return 1;
  }
  return 4;
}

std::optional<double> HardwareEnvelope::PeakFlopsPerS(Precision p) const {
  switch (p) {
    case Precision::kFp32: return fp32_flops_per_s;
    case Precision::kTf32: return tf32_flops_per_s;
    case Precision::kBf16:
    case Precision::kFp16: return bf16_flops_per_s;
    case Precision::kFp8: return fp8_flops_per_s;
  }
  return std::nullopt;
}

std::optional<double> HardwareEnvelope::RidgeFlopPerByte(Precision p) const {
  auto peak = PeakFlopsPerS(p);
  if (!peak || hbm_bytes_per_s <= 0) return std::nullopt;
  return *peak / hbm_bytes_per_s;
}

std::optional<double> HardwareEnvelope::VectorPeakFlopsPerS(Precision p) const {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return vector_fp32_flops_per_s;
    case Precision::kBf16:
    case Precision::kFp16:
    case Precision::kFp8:
      return vector_bf16_flops_per_s ? vector_bf16_flops_per_s : vector_fp32_flops_per_s;
  }
  return std::nullopt;
}

std::optional<double> HardwareEnvelope::VectorRidgeFlopPerByte(Precision p) const {
  auto peak = VectorPeakFlopsPerS(p);
  if (!peak || hbm_bytes_per_s <= 0) return std::nullopt;
  return *peak / hbm_bytes_per_s;
}

const std::vector<HardwareEnvelope>& BuiltinEnvelopes() {
  // Dense figures only (datasheets star the 2x sparse ones; those are never used). The first
  // four rows are docs/metrics.md's "Peaks" table (plus B200), in that order; keep it.
  static const std::vector<Spec> kSpecs = {
      {.name = kA100, .sms = 108, .hbm_tb = 2.039, .bf16 = 312, .tf32 = 156, .fp32 = 19.5,
       .vector_fp32 = 19.5, .vector_bf16 = 39, .ridge = 153, .power = "400 W",
       .source = "NVIDIA A100 datasheet (SXM4 80GB, dense) and A100 whitepaper non-tensor "
                 "rates: vector BF16 39 (FP16 non-tensor is 78 but shares the BF16 slot)"},
      {.name = kH100Sxm, .sms = 132, .hbm_tb = 3.35, .bf16 = 989.4, .fp8 = 1978.9,
       .tf32 = 494.7, .fp32 = 66.9, .vector_fp32 = 66.9, .vector_bf16 = 133.8, .ridge = 295,
       .power = "700 W",
       .source = "NVIDIA H100 datasheet and whitepaper (H100 SXM5, dense); vector BF16 = 2x FP32"},
      {.name = kH200, .sms = 132, .hbm_tb = 4.8, .bf16 = 989.4, .fp8 = 1978.9, .tf32 = 494.7,
       .fp32 = 67, .vector_fp32 = 67, .vector_bf16 = 133.8, .ridge = 206, .power = "700 W",
       .source = "NVIDIA H200 datasheet (H200 SXM, dense; H100 SXM compute, 4.8 TB/s HBM3e); "
                 "vector BF16 as H100 SXM"},
      // Not in docs/metrics.md's table; a fleet that measured otherwise passes `base = B200`.
      {.name = kB200, .sms = 148, .hbm_tb = 8.0, .bf16 = 2250, .fp8 = 4500, .tf32 = 1100,
       .fp32 = 75, .vector_fp32 = 75, .vector_bf16 = 150, .ridge = 281.25, .power = "1000 W",
       .source = "NVIDIA HGX B200 published dense figures (BF16 2.25 PF, FP8 4.5 PF, TF32 1.1 "
                 "PF, 8 TB/s; FP32 75 of the quoted 75-80); vector BF16 = 2x FP32 is an "
                 "assumption, as in TraceLens' B200_HGX arch file"},
      {.name = kH100Pcie, .sms = 114, .hbm_tb = 2.0, .bf16 = 756, .fp8 = 1513, .tf32 = 378,
       .fp32 = 51.2, .vector_fp32 = 51.2, .vector_bf16 = 102.4, .power = "350 W",
       .source = "NVIDIA H100 datasheet, PCIe column (dense = half the sparse figures); FP32 "
                 "51.2 from the H100 whitepaper (datasheet rounds to 51); vector BF16 = 2x FP32"},
      {.name = kH100Nvl, .sms = 132, .hbm_tb = 3.9, .bf16 = 835.5, .fp8 = 1670.5,
       .tf32 = 417.5, .fp32 = 60, .vector_fp32 = 60, .vector_bf16 = 120, .power = "400 W",
       .source = "NVIDIA H100 NVL datasheet, per GPU (dense = half the sparse figures); "
                 "vector BF16 = 2x FP32"},
      {.name = kGh200Hbm3, .sms = 132, .hbm_tb = 4.0, .bf16 = 989.4, .fp8 = 1978.9,
       .tf32 = 494.7, .fp32 = 66.9, .vector_fp32 = 66.9, .vector_bf16 = 133.8,
       .power = "up to 1000 W (module: CPU + GPU + memory)",
       .source = "NVIDIA GH200 Grace Hopper datasheet, 96GB HBM3 (4 TB/s) configuration; "
                 "compute is H100 SXM's; vector BF16 = 2x FP32"},
      {.name = kGh200Hbm3e, .sms = 132, .hbm_tb = 4.9, .bf16 = 989.4, .fp8 = 1978.9,
       .tf32 = 494.7, .fp32 = 66.9, .vector_fp32 = 66.9, .vector_bf16 = 133.8,
       .power = "up to 1000 W (module: CPU + GPU + memory)",
       .source = "NVIDIA GH200 Grace Hopper datasheet, 144GB HBM3e (4.9 TB/s) configuration; "
                 "compute is H100 SXM's; vector BF16 = 2x FP32"},
      {.name = kH20, .sms = 78, .hbm_tb = 4.0, .bf16 = 148, .fp8 = 296, .tf32 = 74, .fp32 = 44,
       .vector_fp32 = 44, .vector_bf16 = 88, .power = "400 W",
       .source = "NVIDIA HGX H20 spec sheet (dense, 96GB HBM3 at 4.0 TB/s); vector BF16 = 2x "
                 "FP32 as on other Hopper parts"},
      {.name = kL4, .sms = 58, .hbm_tb = 0.3, .bf16 = 121, .fp8 = 242.5, .tf32 = 60,
       .fp32 = 30.3, .vector_fp32 = 30.3, .power = "72 W",
       .source = "NVIDIA L4 datasheet (dense = half the sparse figures; 24GB GDDR6, 300 GB/s); "
                 "Ada has no 2x non-tensor BF16 rate, so vector BF16 falls back to FP32"},
      {.name = kL40s, .sms = 142, .hbm_tb = 0.864, .bf16 = 362.05, .fp8 = 733, .tf32 = 183,
       .fp32 = 91.6, .vector_fp32 = 91.6, .power = "350 W",
       .source = "NVIDIA L40S datasheet (dense column; 48GB GDDR6, 864 GB/s); vector BF16 "
                 "falls back to FP32 (Ada)"},
      {.name = kA10, .sms = 72, .hbm_tb = 0.6, .bf16 = 125, .tf32 = 62.5, .fp32 = 31.2,
       .vector_fp32 = 31.2, .power = "150 W",
       .source = "NVIDIA A10 datasheet (dense = half the sparse figures; 24GB GDDR6, 600 GB/s; "
                 "no FP8); vector BF16 falls back to FP32 (GA102)"},
      {.name = kA10g, .sms = 80, .hbm_tb = 0.6, .bf16 = 125, .tf32 = 62.5, .fp32 = 31.2,
       .vector_fp32 = 31.2, .power = "300 W (AWS G5 limit; no datasheet)",
       .source = "no NVIDIA A10G datasheet: SMs, bandwidth and FP32 as AWS G5 instances "
                 "report; tensor figures are the A10's and may overstate the A10G"},
      {.name = kGb200, .sms = 148, .hbm_tb = 8.0, .bf16 = 2500, .fp8 = 5000, .tf32 = 1250,
       .fp32 = 80, .vector_fp32 = 80, .vector_bf16 = 160, .power = "1200 W",
       .source = "NVIDIA GB200 NVL72 datasheet divided by its 72 GPUs (dense = half the sparse "
                 "figures; 8 TB/s each); vector BF16 = 2x FP32 assumed, as for B200"},
      {.name = kMi300x, .sms = 304, .hbm_tb = 5.3, .bf16 = 1307.4, .fp8 = 2614.9,
       .tf32 = 653.7, .fp32 = 163.4, .vector_fp32 = 163.4, .power = "750 W",
       .source = "AMD Instinct MI300X datasheet (dense; 192GB HBM3, 5.3 TB/s; sm_count = 304 "
                 "CUs); FP32 matrix and vector both 163.4, vector BF16 falls back to it"},
      {.name = kMi325x, .sms = 304, .hbm_tb = 6.0, .bf16 = 1307.4, .fp8 = 2614.9,
       .tf32 = 653.7, .fp32 = 163.4, .vector_fp32 = 163.4, .power = "1000 W",
       .source = "AMD Instinct MI325X datasheet (dense; 256GB HBM3E, 6 TB/s; sm_count = 304 "
                 "CUs; compute as MI300X)"},
  };
  static const std::vector<HardwareEnvelope>* envelopes = [] {
    auto* v = new std::vector<HardwareEnvelope>;
    for (const Spec& s : kSpecs) v->push_back(Make(s));
    return v;
  }();
  return *envelopes;
}

std::optional<HardwareEnvelope> EnvelopeForGpuName(std::string_view gpu_name) {
  const std::string n = absl::AsciiStrToLower(absl::string_view(gpu_name.data(), gpu_name.size()));
  for (const auto& e : BuiltinEnvelopes()) {
    if (n == absl::AsciiStrToLower(e.name)) return e;
  }
  auto has = [&](absl::string_view s) { return absl::StrContains(n, s); };
  const bool pcie = has("pcie");
  const bool nvl = has("nvl");
  // AMD: "AMD Instinct MI300X" (also "... MI300X VF").
  if (has("mi325x")) return Builtin(kMi325x);
  if (has("mi300x")) return Builtin(kMi300x);
  // Before h200 / b200, whose names they contain.
  if (has("gh200")) {
    // "NVIDIA GH200 480GB" is the 96GB HBM3 part; the HBM3e one reads "144G HBM3e" / 624GB.
    if (has("144g") || has("hbm3e") || has("624gb")) return Builtin(kGh200Hbm3e);
    return Builtin(kGh200Hbm3);
  }
  if (has("gb200")) return Builtin(kGb200);
  if (has("h200")) {
    if (pcie || nvl) return std::nullopt;  // H200 NVL: other power and peaks
    return Builtin(kH200);
  }
  if (has("h100")) {
    if (nvl) return Builtin(kH100Nvl);
    if (pcie) return Builtin(kH100Pcie);
    if (has("gh100") || has("94gb") || has("96gb")) return std::nullopt;
    return Builtin(kH100Sxm);
  }
  if (has("b200")) return Builtin(kB200);
  if (has("a100")) {
    // A100 40GB (1.555 TB/s) and PCIe (1.935 TB/s) have other bandwidths.
    if (pcie || !has("80gb")) return std::nullopt;
    return Builtin(kA100);
  }
  // Whole-word models from here: "NVIDIA H20" (h200 is handled above), "NVIDIA L4" (not
  // L40 / L40S), "NVIDIA A10" (not A100 / A10G).
  if (HasModel(n, "h20")) {
    if (has("141g")) return std::nullopt;  // the HBM3e H20 variant: other bandwidth
    return Builtin(kH20);
  }
  if (HasModel(n, "l40s")) return Builtin(kL40s);
  if (HasModel(n, "l4")) return Builtin(kL4);
  if (HasModel(n, "a10g")) return Builtin(kA10g);
  if (HasModel(n, "a10")) return Builtin(kA10);
  return std::nullopt;
}

std::string NoEnvelopeMessage(std::string_view gpu_name) {
  return absl::StrCat("no envelope for '", absl::string_view(gpu_name.data(), gpu_name.size()),
                      "'; pass --envelope FILE");
}

namespace {

// The FLOP/s field an override key sets (`none` clears it); nullptr for other keys.
std::optional<double>* PeakSlot(HardwareEnvelope& env, absl::string_view key) {
  if (key == "fp32_tflops") return &env.fp32_flops_per_s;
  if (key == "tf32_tflops") return &env.tf32_flops_per_s;
  if (key == "bf16_tflops") return &env.bf16_flops_per_s;
  if (key == "fp8_tflops") return &env.fp8_flops_per_s;
  if (key == "vector_fp32_tflops") return &env.vector_fp32_flops_per_s;
  if (key == "vector_bf16_tflops") return &env.vector_bf16_flops_per_s;
  return nullptr;
}

}  // namespace

absl::StatusOr<HardwareEnvelope> ParseEnvelopeText(std::string_view text_in) {
  HardwareEnvelope env;
  bool have_base = false, have_name = false, have_hbm = false, have_ridge = false;
  std::set<std::string> seen;
  absl::StatusOr<std::vector<text::KeyValueLine>> lines =
      text::SplitKeyValueText(text_in, "envelope");
  if (!lines.ok()) return lines.status();
  for (const text::KeyValueLine& l : *lines) {
    const std::string& key = l.key;
    const std::string& value = l.value;
    auto err = [&](absl::string_view msg) {
      return absl::InvalidArgumentError(absl::StrCat("line ", l.line, ": key '", key, "': ", msg));
    };
    if (key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", l.line, ": empty key"));
    }
    if (!seen.insert(key).second) return err("repeated");
    if (value.empty()) return err("empty value");
    auto positive = [&](double& out) -> bool {
      return absl::SimpleAtod(value, &out) && std::isfinite(out) && out > 0;
    };
    if (key == "base") {
      if (seen.size() != 1) return err("must come before the other keys");
      auto b = EnvelopeForGpuName(value);
      if (!b) return err(absl::StrCat("no built-in envelope for '", value, "'"));
      env = *b;
      have_base = true;
    } else if (key == "name") {
      env.name = value;
      have_name = true;
    } else if (key == "power_mode") {
      env.power_mode = value;
    } else if (key == "source") {
      env.source = value;
    } else if (key == "sm_count") {
      int32_t sms = 0;
      if (!absl::SimpleAtoi(value, &sms) || sms <= 0) return err("expected an integer > 0");
      env.sm_count = sms;
    } else if (key == "hbm_tb_per_s") {
      double v = 0;
      if (!positive(v)) return err("expected a number > 0 (TB/s)");
      env.hbm_bytes_per_s = v * kTera;
      have_hbm = true;
    } else if (key == "ridge_bf16") {
      double v = 0;
      if (!positive(v)) return err("expected a number > 0 (FLOP/byte)");
      env.ridge_bf16_flop_per_byte = v;
      have_ridge = true;
    } else if (std::optional<double>* slot = PeakSlot(env, key)) {
      if (absl::AsciiStrToLower(value) == "none") {
        *slot = std::nullopt;
      } else {
        double v = 0;
        if (!positive(v)) {
          return err(absl::StartsWith(key, "vector_")
                         ? "expected non-tensor TFLOP/s > 0, or `none` when not known"
                         : "expected dense TFLOP/s > 0, or `none` when the GPU has no such path");
        }
        *slot = v * kTera;
      }
    } else {
      return err(
          "unknown (known: base, name, power_mode, source, sm_count, hbm_tb_per_s, fp32_tflops, "
          "tf32_tflops, bf16_tflops, fp8_tflops, vector_fp32_tflops, vector_bf16_tflops, "
          "ridge_bf16)");
    }
  }
  if (!have_base && !have_name) return absl::InvalidArgumentError("missing key 'name'");
  if (!have_base && !have_hbm) return absl::InvalidArgumentError("missing key 'hbm_tb_per_s'");
  if (!env.fp32_flops_per_s && !env.tf32_flops_per_s && !env.bf16_flops_per_s &&
      !env.fp8_flops_per_s) {
    return absl::InvalidArgumentError(
        "no peak FLOP/s given (fp32_tflops, tf32_tflops, bf16_tflops or fp8_tflops)");
  }
  if (!have_ridge && (have_hbm || seen.count("bf16_tflops"))) {
    env.ridge_bf16_flop_per_byte = env.RidgeFlopPerByte(Precision::kBf16);
  }
  if (have_base && !seen.count("source")) {
    // The base's citation no longer covers figures the file replaced: say which.
    std::string changed;
    for (const std::string& k : seen) {
      if (k == "base" || k == "name" || k == "power_mode") continue;
      absl::StrAppend(&changed, changed.empty() ? "" : ", ", k);
    }
    if (!changed.empty()) absl::StrAppend(&env.source, "; overridden: ", changed);
  }
  return env;
}

std::optional<double> Utilization(double flops, int64_t dur_ns, std::optional<double> peak) {
  if (!peak || *peak <= 0 || dur_ns <= 0 || !(flops >= 0)) return std::nullopt;
  return flops / (static_cast<double>(dur_ns) * 1e-9 * *peak);
}

}  // namespace opmap::analysis
