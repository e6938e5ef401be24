// Batches for the wire-contract tests: one with every column filled and edge values,
// and realistic kernel columns for size measurements. Deterministic: the same messages
// every run. Usable by any test that needs a Batch (collector ingest tests, fuzz seeds).
#ifndef OPMAP_TESTS_UNIT_PROTO_BATCH_FIXTURES_H_
#define OPMAP_TESTS_UNIT_PROTO_BATCH_FIXTURES_H_

#include <cstdint>
#include <limits>

#include "opmap/v1/telemetry.pb.h"

namespace opmap::v1::testing_fixtures {

inline constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
// A realistic CLOCK_REALTIME value (Nov 2023), ns.
inline constexpr int64_t kEpoch2023Ns = 1'700'000'000'000'000'000;

// A Resource with every field set (an H200 and an L40S).
void FillResource(Resource* r);

// A Batch with every field and column filled: `n` kernels, n/2 memory ops, n launches,
// n ranges, 200 counter samples, 60 stall rows, drops and an unavailable entry. Edge
// values: int64 extremes and -1 as start times, a negative kernel duration at
// kernels.dur_ns[2] (representable on the wire; the collector must reject it), NaN
// flops/bytes, uint64 max ids and counts, a non-UTF-8 string at string id 1. n >= 8.
Batch MakeFullBatch(int n);

// `n` kernels as a busy inference GPU produces them: starts 1..10 µs apart from
// kEpoch2023Ns, durations 2 µs..2 ms, 400 names, 8 devices, typical geometry. Graph
// id columns only when `from_graphs`.
KernelColumns MakeRealisticKernels(int n, bool from_graphs);

}  // namespace opmap::v1::testing_fixtures

#endif  // OPMAP_TESTS_UNIT_PROTO_BATCH_FIXTURES_H_
