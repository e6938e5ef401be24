// Builds small Trace objects by hand for the timeline tests.
#ifndef OPMAP_TESTS_UNIT_TIMELINE_TEST_TRACE_H_
#define OPMAP_TESTS_UNIT_TIMELINE_TEST_TRACE_H_

#include <cstdint>
#include <string_view>

#include "analysis/model/trace.h"

namespace opmap::analysis::testing {

struct TraceBuilder {
  Trace trace;

  // Returns the new event's index in trace.gpu_events.
  int32_t Gpu(int64_t start_ns, int64_t dur_ns, int64_t stream = 7, int32_t device = 0,
              GpuEventKind kind = GpuEventKind::kKernel, int64_t correlation = kNone) {
    GpuEvent e;
    e.start_ns = start_ns;
    e.dur_ns = dur_ns;
    e.stream = stream;
    e.device = device;
    e.kind = kind;
    e.correlation = correlation;
    e.name = trace.strings.Intern(kind == GpuEventKind::kKernel ? "kernel"
                                  : kind == GpuEventKind::kMemcpy ? "Memcpy HtoD"
                                                                  : "Memset (Device)");
    trace.gpu_events.push_back(e);
    return static_cast<int32_t>(trace.gpu_events.size() - 1);
  }

  // Returns the new call's index in trace.api_calls.
  int32_t Api(std::string_view name, int64_t start_ns, int64_t dur_ns,
              int64_t correlation = kNone) {
    ApiCall a;
    a.name = trace.strings.Intern(name);
    a.start_ns = start_ns;
    a.dur_ns = dur_ns;
    a.correlation = correlation;
    a.kind = name.substr(0, 2) == "cu" && name.substr(0, 4) != "cuda" ? ApiKind::kDriver
                                                                     : ApiKind::kRuntime;
    trace.api_calls.push_back(a);
    return static_cast<int32_t>(trace.api_calls.size() - 1);
  }
};

}  // namespace opmap::analysis::testing

#endif  // OPMAP_TESTS_UNIT_TIMELINE_TEST_TRACE_H_
