#include "analysis/mfu/hardware_envelope.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace opmap::analysis {
namespace {

constexpr double kTera = 1e12;

HardwareEnvelope Make(std::string name, int32_t sms, double hbm_tb, std::optional<double> bf16,
                      std::optional<double> fp8, std::optional<double> tf32,
                      std::optional<double> fp32, double ridge, std::string power_mode) {
  HardwareEnvelope e;
  e.name = std::move(name);
  e.power_mode = std::move(power_mode);
  e.sm_count = sms;
  e.hbm_bytes_per_s = hbm_tb * kTera;
  auto scale = [](std::optional<double> t) -> std::optional<double> {
    if (!t) return std::nullopt;
    return *t * kTera;
  };
  e.bf16_flops_per_s = scale(bf16);
  e.fp8_flops_per_s = scale(fp8);
  e.tf32_flops_per_s = scale(tf32);
  e.fp32_flops_per_s = scale(fp32);
  e.ridge_bf16_flop_per_byte = ridge;
  return e;
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

const std::vector<HardwareEnvelope>& BuiltinEnvelopes() {
  // METRICS.md "Peaks" (dense): GPU | SMs | HBM TB/s | BF16/FP16 | FP8 | TF32 | FP32 | ridge.
  static const std::vector<HardwareEnvelope>* envelopes = new std::vector<HardwareEnvelope>{
      Make("A100 SXM4 80GB", 108, 2.039, 312, std::nullopt, 156, 19.5, 153, "400 W"),
      Make("H100 SXM5 80GB", 132, 3.35, 989.4, 1978.9, 494.7, 66.9, 295, "700 W"),
      Make("H200 SXM 141GB", 132, 4.8, 989.4, 1978.9, 494.7, 67, 206, "700 W"),
      // Not in METRICS.md's table: NVIDIA's HGX B200 (1,000 W) dense figures, which public
      // spec pages quote as BF16 2.25 PFLOP/s, FP8 4.5, TF32 1.1 (sparse 2x), FP32 75-80
      // TFLOP/s (75 taken), HBM3e 8 TB/s, 148 SMs. Ridge = 2250 / 8. A fleet that measured
      // otherwise passes an envelope file with `base = B200`.
      Make("B200 HGX 180GB", 148, 8.0, 2250, 4500, 1100, 75, 281.25, "1000 W"),
  };
  return *envelopes;
}

std::optional<HardwareEnvelope> EnvelopeForGpuName(std::string_view gpu_name) {
  const std::string n = absl::AsciiStrToLower(absl::string_view(gpu_name.data(), gpu_name.size()));
  const auto& b = BuiltinEnvelopes();
  for (const auto& e : b) {
    if (n == absl::AsciiStrToLower(e.name)) return e;
  }
  const bool pcie = absl::StrContains(n, "pcie");
  const bool nvl = absl::StrContains(n, "nvl");
  if (absl::StrContains(n, "h200")) {
    if (pcie || nvl || absl::StrContains(n, "gh200")) return std::nullopt;
    return b[2];
  }
  if (absl::StrContains(n, "h100")) {
    if (pcie || nvl || absl::StrContains(n, "gh100") || absl::StrContains(n, "94gb") ||
        absl::StrContains(n, "96gb")) {
      return std::nullopt;
    }
    return b[1];
  }
  if (absl::StrContains(n, "b200")) {
    if (absl::StrContains(n, "gb200")) return std::nullopt;  // 1,200 W: other peaks
    return b[3];
  }
  if (absl::StrContains(n, "a100")) {
    // A100 40GB (1.555 TB/s) and PCIe (1.935 TB/s) have other bandwidths.
    if (pcie || !absl::StrContains(n, "80gb")) return std::nullopt;
    return b[0];
  }
  return std::nullopt;
}

absl::StatusOr<HardwareEnvelope> ParseEnvelopeText(std::string_view text_in) {
  absl::string_view text(text_in.data(), text_in.size());
  HardwareEnvelope env;
  bool have_base = false, have_name = false, have_hbm = false, have_ridge = false;
  std::set<std::string> seen;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    absl::string_view line = raw;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) line = line.substr(0, hash);
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": expected `key = value`, got '", line, "'"));
    }
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, eq)));
    const std::string value(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    auto err = [&](absl::string_view msg) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": key '", key, "': ", msg));
    };
    if (key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": empty key"));
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
    } else if (key == "fp32_tflops" || key == "tf32_tflops" || key == "bf16_tflops" ||
               key == "fp8_tflops") {
      std::optional<double>* slot = key == "fp32_tflops"   ? &env.fp32_flops_per_s
                                    : key == "tf32_tflops" ? &env.tf32_flops_per_s
                                    : key == "bf16_tflops" ? &env.bf16_flops_per_s
                                                           : &env.fp8_flops_per_s;
      if (absl::AsciiStrToLower(value) == "none") {
        *slot = std::nullopt;
      } else {
        double v = 0;
        if (!positive(v)) {
          return err("expected dense TFLOP/s > 0, or `none` when the GPU has no such path");
        }
        *slot = v * kTera;
      }
    } else {
      return err(
          "unknown (known: base, name, sm_count, hbm_tb_per_s, fp32_tflops, tf32_tflops, "
          "bf16_tflops, fp8_tflops, ridge_bf16)");
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
  return env;
}

std::optional<double> Utilization(double flops, int64_t dur_ns, std::optional<double> peak) {
  if (!peak || *peak <= 0 || dur_ns <= 0 || !(flops >= 0)) return std::nullopt;
  return flops / (static_cast<double>(dur_ns) * 1e-9 * *peak);
}

}  // namespace opmap::analysis
