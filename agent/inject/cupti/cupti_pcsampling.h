// PC sampling (cupti_pcsampling.h) for one capture window: which stall reasons the warps
// of each kernel function were in, as sample counts per (function name, reason name).
//
// Per device whose primary context is active (the context CUDA runtimes and PyTorch use),
// at Start: enable → read the stall reason names → configure (all reasons, continuous
// collection so kernels are not serialized, start/stop control, a 32 MiB hardware buffer
// instead of the 512 MiB default, period 2^12 cycles) → start. At Stop: stop → get data
// until none remains → disable (which flushes the last samples into the configured buffer)
// → one kStall record per (device, function, reason). In continuous mode samples carry no
// correlation id, so they are attributed by function name only.
//
// Compiled here, never run here (no GPU): every CUPTI/driver failure becomes a reason
// string; nothing throws or aborts. Control thread only.
#ifndef OPMAP_AGENT_INJECT_CUPTI_CUPTI_PCSAMPLING_H_
#define OPMAP_AGENT_INJECT_CUPTI_CUPTI_PCSAMPLING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "agent/inject/cupti/cupti_api.h"
#include "agent/inject/ring_writer.h"

namespace opmap::inject {

struct PcSamplingOptions {
  uint32_t period_log2 = 12;               // 2^12 cycles between samples per SM (5..31)
  size_t hardware_buffer_bytes = 32u << 20;
  size_t pcs_per_fetch = 2048;             // PC entries per cuptiPCSamplingGetData call
};

class PcSampler {
 public:
  PcSampler() = default;
  ~PcSampler();
  PcSampler(const PcSampler&) = delete;
  PcSampler& operator=(const PcSampler&) = delete;

  // False with `*reason` (the caller reports "PC sampling unavailable: <reason>") when no
  // device could be sampled; whatever was enabled is undone.
  bool Start(const CuptiApi& api, const DriverApi& driver, const PcSamplingOptions& options,
             std::string* reason);

  // Writes the window's kStall records. Returns a note when samples were lost or a step
  // failed after Start succeeded (e.g. "1234 samples dropped: hardware buffer full"), else
  // empty. Safe to call when Start failed or was never called.
  std::string Stop(ring::RingWriter* ring);

  bool running() const { return !contexts_.empty(); }

 private:
  struct Context;
  bool StartOne(Context* c, std::string* reason);
  void Drain(Context* c, CUpti_PCSamplingData* data);
  void Release(Context* c);

  const CuptiApi* api_ = nullptr;
  const DriverApi* driver_ = nullptr;
  PcSamplingOptions options_;
  std::vector<Context*> contexts_;
  std::string notes_;
};

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CUPTI_CUPTI_PCSAMPLING_H_
