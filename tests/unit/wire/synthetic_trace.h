// Small hand-made traces for the wire tests: every model field set to something the
// conventions have to carry (synthetic negative tids, kNone, graph ids, NVTX ranges, ...).
#ifndef OPMAP_TESTS_UNIT_WIRE_SYNTHETIC_TRACE_H_
#define OPMAP_TESTS_UNIT_WIRE_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/model/trace.h"

namespace opmap::analysis::wire_testing {

inline constexpr int64_t kT0 = 1'700'000'000'000'000'000;  // realistic CLOCK_REALTIME ns
inline constexpr uint32_t kPid = 4242;

// `steps` times: a cpu_op range on tid 100, a launch inside it, the kernel it launched,
// and every third step a memcpy; names repeat every 4 steps so strings are reused.
inline Trace MakeSyntheticTrace(int steps) {
  Trace t;
  t.info.format = "synthetic";
  for (int s = 0; s < steps; ++s) {
    const int64_t base = kT0 + s * 10'000;
    Range r;
    r.start_ns = base;
    r.dur_ns = 5'000;
    r.name = t.strings.Intern(absl::StrCat("aten::op", s % 4));
    r.kind = s % 5 == 4 ? RangeKind::kNvtx : RangeKind::kCpuOp;
    r.process = kPid;
    r.thread = 100;
    r.external_id = 1000 + s;
    if (s % 2 == 0) r.input_dims = t.strings.Intern(absl::StrCat("[[", s % 4, ", 64]]"));
    t.ranges.push_back(r);

    ApiCall a;
    a.start_ns = base + 100;
    a.dur_ns = 2'000;
    a.name = t.strings.Intern(s % 7 == 6 ? "cuLaunchKernel" : "cudaLaunchKernel");
    a.kind = s % 7 == 6 ? ApiKind::kDriver : ApiKind::kRuntime;
    a.process = kPid;
    a.thread = 100;
    a.correlation = 1 + s;
    a.external_id = 1000 + s;
    t.api_calls.push_back(a);

    GpuEvent g;
    g.start_ns = base + 3'000;
    g.dur_ns = 1'500 + s;
    g.name = t.strings.Intern(absl::StrCat("void gemm_kernel<", s % 4, ">(float*)"));
    g.device = s % 2;
    g.stream = 7;
    g.correlation = 1 + s;
    g.external_id = 1000 + s;
    g.grid = {128, 2, 1};
    g.block = {256, 1, 1};
    g.registers_per_thread = 64;
    g.shared_memory_bytes = s % 3 == 0 ? 0 : 16384;  // 0 is a real value, not "unknown"
    if (s % 6 == 5) {
      g.graph_id = 3;
      g.graph_node_id = 40 + s;
    }
    t.gpu_events.push_back(g);

    if (s % 3 == 2) {
      GpuEvent m;
      m.start_ns = base + 4'600;
      m.dur_ns = 300;
      m.kind = GpuEventKind::kMemcpy;
      m.name = t.strings.Intern("Memcpy DtoH (Device -> Pageable)");
      m.stream = 7;
      m.correlation = 100'000 + s;
      m.bytes = 4096;
      t.gpu_events.push_back(m);
    }
  }
  return t;
}

}  // namespace opmap::analysis::wire_testing

#endif  // OPMAP_TESTS_UNIT_WIRE_SYNTHETIC_TRACE_H_
