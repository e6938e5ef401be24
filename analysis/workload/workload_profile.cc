#include "analysis/workload/workload_profile.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/config/flag_config.h"
#include "common/text/text_util.h"

namespace opmap::analysis {
namespace {

// Required keys in the order the header lists them, so "missing" errors read in order.
constexpr const char* kRequired[] = {"model",    "parameters", "layers", "heads",
                                     "head_dim", "hidden",     "precision"};

constexpr const char* kKnownKeys =
    "model, revision, parameters, layers, heads, head_dim, hidden, kv_heads, precision, "
    "weight_bytes, prefill_tokens, decode_tokens, batch, phase_mix, sla_p50_ms, sla_p95_ms, "
    "sla_p99_ms, throughput_target, power_budget_w, devices, quality_metric, quality_higher_is_better, "
    "quality_threshold, quality.<REV>, precision.<REV>, sparsity.<REV>";

// absl::SimpleAtod takes absl::string_view, which Debian's Abseil keeps distinct from
// std::string_view.
bool ParseFinite(std::string_view v, double* out) {
  return absl::SimpleAtod(absl::string_view(v.data(), v.size()), out) && std::isfinite(*out);
}

// "7.5B", "125M", "350k", or a plain number (scientific notation allowed).
bool ParseParameterCount(std::string_view v, double* out) {
  double scale = 1;
  if (!v.empty()) {
    switch (v.back()) {
      case 'k': case 'K': scale = 1e3; break;
      case 'M': scale = 1e6; break;
      case 'B': scale = 1e9; break;
      default: break;
    }
    if (scale != 1) v.remove_suffix(1);
  }
  double x = 0;
  if (!ParseFinite(text::Trim(v), &x) || x <= 0) return false;
  *out = x * scale;
  return true;
}

// "prefill=0.3,decode=0.7": each fraction in [0, 1], names unique, the sum 1 within 1e-6.
absl::Status ParsePhaseMix(std::string_view v, std::map<std::string, double>* out) {
  double sum = 0;
  for (std::string_view item : text::Lines(v, ',')) {
    item = text::Trim(item);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected phase=fraction, got '", std::string(item), "'"));
    }
    const std::string phase(text::Trim(item.substr(0, eq)));
    double f = 0;
    if (phase.empty()) return absl::InvalidArgumentError("empty phase name");
    if (!ParseFinite(text::Trim(item.substr(eq + 1)), &f) || f < 0 || f > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("phase '", phase, "': expected a fraction in [0, 1]"));
    }
    if (!out->emplace(phase, f).second) {
      return absl::InvalidArgumentError(absl::StrCat("phase '", phase, "' repeated"));
    }
    sum += f;
  }
  if (std::fabs(sum - 1) > 1e-6) {
    return absl::InvalidArgumentError(absl::StrCat("fractions sum to ", sum, ", not 1"));
  }
  return absl::OkStatus();
}

}  // namespace

int BytesPerElement(Precision p) { return ElementBytes(p); }

std::optional<Precision> ParsePrecisionName(std::string_view name) {
  const std::string n = text::Lower(text::Trim(name));
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16,
                      Precision::kFp8}) {
    if (n == PrecisionName(p)) return p;
  }
  return std::nullopt;
}

Precision WorkloadProfile::PrecisionOf(std::string_view rev) const {
  auto it = revision_precision.find(std::string(rev));
  return it == revision_precision.end() ? precision : it->second;
}

absl::StatusOr<WorkloadProfile> ParseWorkloadProfileText(std::string_view text) {
  // The shared config-file splitter (comments, blank lines, optional "quotes", line
  // numbers); its only error is a line without '=', which it names by line.
  absl::StatusOr<std::vector<text::KeyValueLine>> lines =
      text::SplitKeyValueText(text, "workload profile");
  if (!lines.ok()) return lines.status();

  WorkloadProfile p;
  std::set<std::string> seen;
  int kv_heads_line = 0;  // 0: not given
  for (const text::KeyValueLine& l : *lines) {
    const std::string& key = l.key;
    const std::string& value = l.value;
    auto err = [&](std::string_view msg) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", l.line, ": key '", key, "': ", std::string(msg)));
    };
    if (key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", l.line, ": empty key"));
    }
    if (!seen.insert(key).second) return err("repeated");
    if (value.empty()) return err("empty value");

    auto positive_int = [&](int64_t* out) -> absl::Status {
      absl::StatusOr<int64_t> v = config::ParsePositive(value);
      if (!v.ok()) return err(std::string(v.status().message()));
      *out = *v;
      return absl::OkStatus();
    };
    auto positive_double = [&](std::string_view unit) -> absl::StatusOr<double> {
      double v = 0;
      if (!ParseFinite(value, &v) || v <= 0) {
        return err(absl::StrCat("expected a number > 0 (", std::string(unit), ")"));
      }
      return v;
    };
    // Per-revision keys: "quality.<REV>", "precision.<REV>", "sparsity.<REV>".
    const size_t dot = key.find('.');
    const std::string prefix = dot == std::string::npos ? key : key.substr(0, dot);
    const std::string rev = dot == std::string::npos ? "" : key.substr(dot + 1);
    if (dot != std::string::npos) {
      if (rev.empty()) return err("empty revision after '.'");
      if (prefix == "quality") {
        double q = 0;
        if (!ParseFinite(value, &q)) return err("expected a number");
        p.quality[rev] = q;
      } else if (prefix == "precision") {
        auto prec = ParsePrecisionName(value);
        if (!prec) return err("expected fp32, tf32, bf16, fp16 or fp8");
        p.revision_precision[rev] = *prec;
      } else if (prefix == "sparsity") {
        p.revision_sparsity[rev] = value;
      } else {
        return err(absl::StrCat("unknown (known: ", kKnownKeys, ")"));
      }
      continue;
    }

    absl::Status s = absl::OkStatus();
    if (key == "model") {
      p.model = value;
    } else if (key == "revision") {
      p.revision = value;
    } else if (key == "seed") {
      p.seed = value;
    } else if (key == "parameters") {
      if (!ParseParameterCount(value, &p.parameters)) {
        return err("expected a count > 0, optionally with suffix k, M or B (\"7.5B\")");
      }
    } else if (key == "layers") {
      s = positive_int(&p.layers);
    } else if (key == "heads") {
      s = positive_int(&p.heads);
    } else if (key == "head_dim") {
      s = positive_int(&p.head_dim);
    } else if (key == "hidden") {
      s = positive_int(&p.hidden);
    } else if (key == "kv_heads") {
      s = positive_int(&p.kv_heads);
      kv_heads_line = l.line;
    } else if (key == "precision") {
      auto prec = ParsePrecisionName(value);
      if (!prec) return err("expected fp32, tf32, bf16, fp16 or fp8");
      p.precision = *prec;
    } else if (key == "weight_bytes") {
      absl::StatusOr<double> v = positive_double("bytes");
      if (!v.ok()) return v.status();
      p.weight_bytes = *v;
    } else if (key == "prefill_tokens" || key == "decode_tokens") {
      int64_t v = 0;
      s = positive_int(&v);
      (key == "prefill_tokens" ? p.prefill_tokens : p.decode_tokens) = v;
    } else if (key == "batch") {
      s = positive_int(&p.batch);
    } else if (key == "devices") {
      s = positive_int(&p.devices);
    } else if (key == "phase_mix") {
      if (absl::Status m = ParsePhaseMix(value, &p.phase_mix); !m.ok()) {
        return err(std::string(m.message()));
      }
    } else if (key == "sla_p50_ms" || key == "sla_p95_ms" || key == "sla_p99_ms") {
      absl::StatusOr<double> v = positive_double("ms");
      if (!v.ok()) return v.status();
      (key == "sla_p50_ms" ? p.sla_p50_ms : key == "sla_p95_ms" ? p.sla_p95_ms : p.sla_p99_ms) = *v;
    } else if (key == "throughput_target") {
      absl::StatusOr<double> v = positive_double("requests/s");
      if (!v.ok()) return v.status();
      p.throughput_target = *v;
    } else if (key == "power_budget_w") {
      absl::StatusOr<double> v = positive_double("W");
      if (!v.ok()) return v.status();
      p.power_budget_w = *v;
    } else if (key == "quality_metric") {
      p.quality_metric = value;
    } else if (key == "quality_higher_is_better") {
      absl::StatusOr<bool> b = config::ParseBool(value);
      if (!b.ok()) return err(std::string(b.status().message()));
      p.quality_higher_is_better = *b;
    } else if (key == "quality_threshold") {
      double v = 0;
      if (!ParseFinite(value, &v)) return err("expected a number");
      p.quality_threshold = v;
    } else {
      return err(absl::StrCat("unknown (known: ", kKnownKeys, ")"));
    }
    if (!s.ok()) return s;
  }

  std::vector<std::string> missing;
  for (const char* k : kRequired) {
    if (!seen.count(k)) missing.push_back(absl::StrCat("'", k, "'"));
  }
  if (missing.size() == 1) {
    return absl::InvalidArgumentError(absl::StrCat("missing required key ", missing[0]));
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing required keys ", absl::StrJoin(missing, ", ")));
  }
  // d_attn = heads × head_dim is an int64 (AttentionDim): refuse a product that overflows.
  if (int64_t d_attn = 0; __builtin_mul_overflow(p.heads, p.head_dim, &d_attn)) {
    return absl::InvalidArgumentError(absl::StrCat("heads × head_dim (", p.heads, " × ",
                                                   p.head_dim, ") is too large"));
  }
  if (kv_heads_line == 0) {
    p.kv_heads = p.heads;
  } else if (p.kv_heads > p.heads) {
    // GQA/MQA share KV heads among query heads; more KV heads than heads is a typo.
    return absl::InvalidArgumentError(absl::StrCat("line ", kv_heads_line,
                                                   ": key 'kv_heads': ", p.kv_heads,
                                                   " is more than heads (", p.heads, ")"));
  }
  return p;
}

// Token counts below zero are treated as zero: a formula never returns negative work.
double PrefillFlops(const WorkloadProfile& p, int64_t prompt_tokens) {
  const double t = static_cast<double>(std::max<int64_t>(prompt_tokens, 0));
  return 2.0 * p.parameters * t +
         2.0 * static_cast<double>(p.layers) * static_cast<double>(p.AttentionDim()) * t * t;
}

double DecodeStepFlops(const WorkloadProfile& p, int64_t context_tokens) {
  const double t = static_cast<double>(std::max<int64_t>(context_tokens, 0));
  return 2.0 * p.parameters +
         4.0 * static_cast<double>(p.layers) * static_cast<double>(p.AttentionDim()) * t;
}

double DecodeStepBytes(const WorkloadProfile& p, int64_t context_tokens) {
  const double t = static_cast<double>(std::max<int64_t>(context_tokens, 0));
  const double bytes = BytesPerElement(p.precision);
  // Weights are read once per step whatever the batch; each sequence reads its own K and V.
  const double weights = p.weight_bytes ? *p.weight_bytes : p.parameters * bytes;
  const double kv = 2.0 * static_cast<double>(p.layers) * static_cast<double>(p.kv_heads) *
                    static_cast<double>(p.head_dim) * t * bytes;
  return weights + kv * static_cast<double>(p.batch);
}

std::optional<double> ModelFlopsPerRequest(const WorkloadProfile& p, std::string* basis) {
  if (!p.prefill_tokens) {
    if (basis != nullptr) *basis = "the workload profile has no prefill_tokens";
    return std::nullopt;
  }
  const int64_t prompt = *p.prefill_tokens;
  const int64_t generated = p.decode_tokens.value_or(0);
  // Σ over the decode steps k = 0 .. D-1 of DecodeStepFlops(P + k) = D·2N + 4·L·d_attn·Σ(P+k),
  // Σ(P+k) = D·P + D(D-1)/2, in closed form: decode_tokens may be any int64 (no loop).
  const double d = static_cast<double>(std::max<int64_t>(generated, 0));
  const double contexts = d * static_cast<double>(std::max<int64_t>(prompt, 0)) + d * (d - 1) / 2;
  const double per_sequence =
      PrefillFlops(p, prompt) + d * 2.0 * p.parameters +
      4.0 * static_cast<double>(p.layers) * static_cast<double>(p.AttentionDim()) * contexts;
  const double flops = per_sequence * static_cast<double>(p.batch);
  if (basis != nullptr) {
    *basis = absl::StrFormat(
        "batch %d x (prefill 2*N*P + 2*L*d_attn*P^2 at P=%d%s), N=%g, L=%d, d_attn=%d: "
        "%.6g FLOPs per request",
        p.batch, prompt,
        generated > 0 ? absl::StrFormat(" + %d decode steps 2*N + 4*L*d_attn*t", generated)
                      : std::string(),
        p.parameters, p.layers, p.AttentionDim(), flops);
  }
  return flops;
}

}  // namespace opmap::analysis
