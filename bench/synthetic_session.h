// A synthetic capture session for ingest_bench (bench/ingest_bench.cc): operator ranges on
// one thread, each launching 5 kernels through cudaLaunchKernel (correlation ids), 50
// kernel names across the layer types, durations log-normal around each name's own
// typical one. The same seed every time: sessions of one size are alike.
#ifndef OPMAP_BENCH_SYNTHETIC_SESSION_H_
#define OPMAP_BENCH_SYNTHETIC_SESSION_H_

#include <cstdint>

#include "analysis/model/trace.h"

namespace opmap::bench {

constexpr int64_t kSessionStartNs = 1'760'000'000'000'000'000;

analysis::Trace MakeSession(int kernels);

}  // namespace opmap::bench

#endif  // OPMAP_BENCH_SYNTHETIC_SESSION_H_
