// TraceToBatches: batch sizes, sequence numbers, string deltas, value conventions; and
// that SessionAssembler gives back exactly the Trace that went in.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "analysis/wire/batch_codec.h"
#include "gtest/gtest.h"
#include "tests/unit/wire/synthetic_trace.h"

namespace opmap::analysis {
namespace {

using wire_testing::kPid;
using wire_testing::MakeSyntheticTrace;

BatchingOptions Options(size_t max_records) {
  BatchingOptions o;
  o.agent_id = "agent-1";
  o.session_id = "session-1";
  o.resource.set_pid(kPid);
  o.resource.set_host("host-a");
  o.max_records_per_batch = max_records;
  return o;
}

std::vector<opmap::v1::Batch> Encode(const Trace& t, size_t max_records) {
  absl::StatusOr<std::vector<opmap::v1::Batch>> batches = TraceToBatches(t, Options(max_records));
  EXPECT_TRUE(batches.ok()) << batches.status();
  return batches.ok() ? *std::move(batches) : std::vector<opmap::v1::Batch>{};
}

int64_t Rows(const opmap::v1::Batch& b) {
  return b.kernels().start_ns_size() + b.memory_ops().start_ns_size() +
         b.launches().start_ns_size() + b.ranges().start_ns_size();
}

// Start times of every record in the batch.
std::vector<int64_t> Starts(const opmap::v1::Batch& b) {
  std::vector<int64_t> s;
  for (int64_t v : b.kernels().start_ns()) s.push_back(v);
  for (int64_t v : b.memory_ops().start_ns()) s.push_back(v);
  for (int64_t v : b.launches().start_ns()) s.push_back(v);
  for (int64_t v : b.ranges().start_ns()) s.push_back(v);
  return s;
}

TEST(TraceToBatches, CutsBatchesInTimeOrderWithDenseSeqAndOneLastFlag) {
  const Trace t = MakeSyntheticTrace(50);  // 50 ranges + 50 launches + 66 GPU events
  const int64_t total = t.ranges.size() + t.api_calls.size() + t.gpu_events.size();
  const std::vector<opmap::v1::Batch> batches = Encode(t, 7);
  ASSERT_EQ(batches.size(), static_cast<size_t>((total + 6) / 7));
  int64_t sent = 0;
  int64_t previous_max_start = INT64_MIN;
  for (size_t i = 0; i < batches.size(); ++i) {
    const opmap::v1::Batch& b = batches[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(b.agent_id(), "agent-1");
    EXPECT_EQ(b.session_id(), "session-1");
    EXPECT_EQ(b.seq(), i + 1);
    EXPECT_EQ(b.resource().host(), "host-a");
    EXPECT_EQ(b.last_in_session(), i + 1 == batches.size());
    EXPECT_LE(Rows(b), 7);
    EXPECT_EQ(Rows(b), i + 1 < batches.size() ? 7 : total - 7 * (batches.size() - 1));
    sent += Rows(b);
    // The session's window, the same in every batch.
    EXPECT_EQ(b.window_start_ns(), wire_testing::kT0);
    EXPECT_EQ(b.window_end_ns(), wire_testing::kT0 + 49 * 10'000 + 5'000);
    // Batches follow each other in time: nothing in this one starts before the last.
    std::vector<int64_t> starts = Starts(b);
    EXPECT_GE(*std::min_element(starts.begin(), starts.end()), previous_max_start);
    previous_max_start = *std::max_element(starts.begin(), starts.end());
  }
  EXPECT_EQ(sent, total);
}

TEST(TraceToBatches, SendsEachStringOnceAsContiguousDeltas) {
  const Trace t = MakeSyntheticTrace(50);
  const std::vector<opmap::v1::Batch> batches = Encode(t, 5);
  uint32_t defined = 0;
  std::set<std::string> seen;
  for (const opmap::v1::Batch& b : batches) {
    if (b.strings().strings_size() == 0) continue;
    EXPECT_EQ(b.strings().base_index(), defined) << "seq " << b.seq();
    for (const std::string& s : b.strings().strings()) {
      EXPECT_TRUE(seen.insert(s).second) << "sent twice: " << s;
    }
    defined += b.strings().strings_size();
  }
  ASSERT_FALSE(batches.empty());
  ASSERT_GT(batches[0].strings().strings_size(), 0);
  EXPECT_EQ(batches[0].strings().strings(0), "");  // id 0 is reserved
  // Every string the records use, and nothing else (thread names are not sent).
  EXPECT_EQ(defined, t.strings.size());
}

TEST(TraceToBatches, EmptyTraceGivesOneLastBatch) {
  const std::vector<opmap::v1::Batch> batches = Encode(Trace{}, 10);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_TRUE(batches[0].last_in_session());
  EXPECT_EQ(batches[0].seq(), 1u);
  EXPECT_EQ(batches[0].strings().strings_size(), 1);
  SessionAssembler assembler;
  EXPECT_TRUE(assembler.Append(batches[0]).ok());
  EXPECT_EQ(assembler.record_count(), 0);
  EXPECT_EQ(assembler.string_count(), 1u);
}

TEST(TraceToBatches, RefusesValuesTheWireCannotCarry) {
  Trace t = MakeSyntheticTrace(3);
  t.gpu_events[1].correlation = int64_t{1} << 32;
  absl::StatusOr<std::vector<opmap::v1::Batch>> r = TraceToBatches(t, Options(10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "gpu_events[1].correlation: 4294967296 does not fit the wire's uint32");

  t = MakeSyntheticTrace(3);
  t.api_calls[2].thread = int64_t{1} << 40;
  r = TraceToBatches(t, Options(10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "api_calls[2].thread: 1099511627776 does not fit the wire's tid");

  BatchingOptions o = Options(0);
  EXPECT_EQ(TraceToBatches(t, o).status().message(),
            "options.max_records_per_batch: must be at least 1");
  o = Options(10);
  o.session_id.clear();
  EXPECT_EQ(TraceToBatches(t, o).status().message(), "options.session_id: empty");
}

TEST(TraceToBatches, MemoryOpsCarryNameKindAndPageable) {
  Trace t;
  const char* names[] = {"Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)",
                         "Memcpy DtoD (Device -> Device)", "Memcpy HtoH (Pinned -> Pinned)",
                         "Memcpy PtoP (Device -> Device)", "Memcpy ArrayToArray",
                         "Memset (Device)"};
  for (int i = 0; i < 7; ++i) {
    GpuEvent g;
    g.start_ns = 1000 + i;
    g.dur_ns = 10;
    g.kind = i == 6 ? GpuEventKind::kMemset : GpuEventKind::kMemcpy;
    g.name = t.strings.Intern(names[i]);
    g.stream = 3;
    g.bytes = 100 * (i + 1);
    t.gpu_events.push_back(g);
  }
  const std::vector<opmap::v1::Batch> batches = Encode(t, 100);
  ASSERT_EQ(batches.size(), 1u);
  const opmap::v1::MemoryOpColumns& m = batches[0].memory_ops();
  using K = opmap::v1::MemoryOpKind;
  const K want[] = {opmap::v1::MEMORY_OP_KIND_MEMCPY_HTOD, opmap::v1::MEMORY_OP_KIND_MEMCPY_DTOH,
                    opmap::v1::MEMORY_OP_KIND_MEMCPY_DTOD, opmap::v1::MEMORY_OP_KIND_MEMCPY_HTOH,
                    opmap::v1::MEMORY_OP_KIND_MEMCPY_PTOP, opmap::v1::MEMORY_OP_KIND_MEMCPY_OTHER,
                    opmap::v1::MEMORY_OP_KIND_MEMSET};
  ASSERT_EQ(m.kind_size(), 7);
  ASSERT_EQ(m.host_pageable_size(), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(m.kind(i), want[i]) << names[i];
    EXPECT_EQ(m.host_pageable(i), i == 0) << names[i];
    EXPECT_EQ(batches[0].strings().strings(m.name_id(i)), names[i]);
  }
  EXPECT_EQ(batches[0].kernels().start_ns_size(), 0);

  // Without names (an agent that sends only the kind) the kind names the event.
  opmap::v1::Batch b = batches[0];
  b.mutable_memory_ops()->clear_name_id();
  SessionAssembler assembler;
  ASSERT_TRUE(assembler.Append(b).ok());
  const Trace& back = assembler.trace();
  EXPECT_EQ(back.strings.Get(back.gpu_events[0].name), "Memcpy HtoD");
  EXPECT_EQ(back.strings.Get(back.gpu_events[6].name), "Memset");
  EXPECT_EQ(back.gpu_events[6].kind, GpuEventKind::kMemset);
  EXPECT_EQ(back.gpu_events[5].kind, GpuEventKind::kMemcpy);
}

TEST(TraceToBatches, ProcessColumnOnlyWhenItDiffersFromResourcePid) {
  Trace t = MakeSyntheticTrace(4);
  std::vector<opmap::v1::Batch> batches = Encode(t, 100);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].launches().pid_size(), 0);
  EXPECT_EQ(batches[0].ranges().pid_size(), 0);
  t.ranges[2].process = 77;
  batches = Encode(t, 100);
  EXPECT_EQ(batches[0].launches().pid_size(), 0);
  ASSERT_EQ(batches[0].ranges().pid_size(), 4);
}

// Every model field the wire carries comes back as it went, including the conventions'
// edge values: synthetic negative tids, kNone ids and threads, shared memory 0, pids other
// than the resource's, NVTX ranges, driver calls, graph ids.
TEST(SessionAssembler, SyntheticTraceRoundTripsExactly) {
  Trace t = MakeSyntheticTrace(30);
  t.api_calls[3].thread = -1000 - 5;  // Kineto importer's id for a non-numeric tid
  t.ranges[3].thread = -1000 - 5;
  t.ranges[4].thread = kNone;
  t.ranges[5].process = kNone;
  t.ranges[6].process = 0;  // Kineto's pid 0 / tid 0 rows
  t.ranges[6].thread = 0;
  t.ranges[7].payload = 0;  // a request id of 0 is a payload, not none
  t.ranges[8].payload = 41;
  t.ranges[9].payload = std::numeric_limits<int64_t>::max();
  t.api_calls[8].external_id = 0;  // Kineto's "no external id"; reads back as kNone
  t.api_calls[6].process = 31337;
  t.api_calls[7].correlation = kNone;
  t.gpu_events[2].registers_per_thread = -1;
  t.gpu_events[2].grid = {0, 0, 0};
  std::vector<opmap::v1::Batch> batches = Encode(t, 9);
  SessionAssembler assembler;
  for (const opmap::v1::Batch& b : batches) ASSERT_TRUE(assembler.Append(b).ok());
  const Trace& back = assembler.trace();
  EXPECT_EQ(assembler.record_count(),
            static_cast<int64_t>(t.gpu_events.size() + t.api_calls.size() + t.ranges.size()));
  // Starts are unique here. Records come back in time order per message, kernels before
  // memory ops within a batch; the synthetic trace lists each kind in time order.
  auto by_start = [](std::vector<GpuEvent> v) {
    std::sort(v.begin(), v.end(),
              [](const GpuEvent& x, const GpuEvent& y) { return x.start_ns < y.start_ns; });
    return v;
  };
  const std::vector<GpuEvent> sent = by_start(t.gpu_events);
  const std::vector<GpuEvent> got = by_start(back.gpu_events);
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    const GpuEvent& a = sent[i];
    const GpuEvent& b = got[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.dur_ns, b.dur_ns);
    EXPECT_EQ(t.strings.Get(a.name), back.strings.Get(b.name));
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.stream, b.stream);
    EXPECT_EQ(a.process, b.process);
    EXPECT_EQ(a.correlation, b.correlation);
    EXPECT_EQ(a.external_id, b.external_id);
    EXPECT_EQ(a.graph_id, b.graph_id);
    EXPECT_EQ(a.graph_node_id, b.graph_node_id);
    EXPECT_EQ(a.grid, b.grid);
    EXPECT_EQ(a.block, b.block);
    EXPECT_EQ(a.registers_per_thread, b.registers_per_thread);
    // Memory ops go in another message, which has no shared-memory column.
    if (a.kind == GpuEventKind::kKernel) {
      EXPECT_EQ(a.shared_memory_bytes, b.shared_memory_bytes);
    }
    EXPECT_EQ(a.bytes, b.bytes);
  }
  ASSERT_EQ(back.api_calls.size(), t.api_calls.size());
  for (size_t i = 0; i < t.api_calls.size(); ++i) {
    const ApiCall& a = t.api_calls[i];
    const ApiCall& b = back.api_calls[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.dur_ns, b.dur_ns);
    EXPECT_EQ(t.strings.Get(a.name), back.strings.Get(b.name));
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.process, b.process);
    EXPECT_EQ(a.thread, b.thread);
    EXPECT_EQ(a.correlation, b.correlation);
    EXPECT_EQ(a.external_id == 0 ? kNone : a.external_id, b.external_id);
  }
  ASSERT_EQ(back.ranges.size(), t.ranges.size());
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    const Range& a = t.ranges[i];
    const Range& b = back.ranges[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.dur_ns, b.dur_ns);
    EXPECT_EQ(t.strings.Get(a.name), back.strings.Get(b.name));
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.process, b.process);
    EXPECT_EQ(a.thread, b.thread);
    EXPECT_EQ(a.external_id, b.external_id);
    EXPECT_EQ(t.strings.Get(a.input_dims), back.strings.Get(b.input_dims));
    EXPECT_EQ(a.payload, b.payload);
  }
  EXPECT_EQ(back.info.format, "live");
  EXPECT_EQ(back.info.process, kPid);
}

}  // namespace
}  // namespace opmap::analysis
