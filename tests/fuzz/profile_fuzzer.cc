// libFuzzer target for the `key = value` files `opmap report` reads beside a trace:
// the workload profile (analysis/workload/workload_profile.h ParseWorkloadProfileText,
// then the docs/metrics.md formulas over it, as the release and MFU reports use them)
// and the hardware envelope override (analysis/mfu/hardware_envelope.h
// ParseEnvelopeText, then its peaks and ridges). Every input goes to both parsers.
// Seeds: examples/demo_infer/demo.profile, the envelope examples of docs/envelopes.md and
// the built-in envelopes written out as text (tests/fuzz/make_seeds_real.py).
// Invariants: errors say why; what parses has the required keys' values in range.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/mfu/hardware_envelope.h"
#include "analysis/workload/workload_profile.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace opmap;
using fuzz::Check;

void Profile(std::string_view text) {
  absl::StatusOr<analysis::WorkloadProfile> p = analysis::ParseWorkloadProfileText(text);
  if (!p.ok()) {
    fuzz::CheckErrorSaysWhy(p.status(), "ParseWorkloadProfileText");
    return;
  }
  Check(!p->model.empty() && p->layers > 0 && p->heads > 0 && p->head_dim > 0 && p->hidden > 0,
        "required profile keys in range");
  (void)p->AttentionDim();
  const int64_t prompt = p->prefill_tokens.value_or(128);
  (void)analysis::PrefillFlops(*p, prompt);
  (void)analysis::DecodeStepFlops(*p, prompt + p->decode_tokens.value_or(1));
  (void)analysis::DecodeStepBytes(*p, prompt);
  std::string basis;
  (void)analysis::ModelFlopsPerRequest(*p, &basis);
  for (const auto& [rev, q] : p->quality) (void)p->PrecisionOf(rev);
  (void)analysis::BytesPerElement(p->precision);
}

void Envelope(std::string_view text) {
  absl::StatusOr<analysis::HardwareEnvelope> e = analysis::ParseEnvelopeText(text);
  if (!e.ok()) {
    fuzz::CheckErrorSaysWhy(e.status(), "ParseEnvelopeText");
    return;
  }
  Check(!e->name.empty(), "an envelope has a name");
  bool any_peak = false;
  for (int p = 0; p <= static_cast<int>(analysis::Precision::kFp8); ++p) {
    const auto precision = static_cast<analysis::Precision>(p);
    if (std::optional<double> peak = e->PeakFlopsPerS(precision)) {
      Check(*peak > 0, "a peak is > 0 (never 0)");
      any_peak = true;
    }
    (void)e->RidgeFlopPerByte(precision);
    (void)e->VectorPeakFlopsPerS(precision);
    (void)e->VectorRidgeFlopPerByte(precision);
  }
  Check(any_peak, "at least one dense peak remains");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  Profile(text);
  Envelope(text);
  return 0;
}
