#include "tests/unit/proto/batch_fixtures.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>

namespace opmap::v1::testing_fixtures {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Start times: the int64 extremes and a pre-epoch value at the edges, realistic inside.
int64_t EdgeStart(int i, int n) {
  if (i == 0) return kI64Min;
  if (i == 1) return -1;
  if (i == n - 1) return kI64Max;
  return kEpoch2023Ns + int64_t{i} * 5'000;
}

}  // namespace

// The wire carries values the collector will reject (a negative duration) so that the
// collector's validation can be tested against what really arrives.

Batch MakeFullBatch(int n) {
  Batch b;
  b.set_agent_id("agent-7f3c");
  b.set_session_id("session-2024-05-01T10:00:00Z-4194303");
  b.set_seq(std::numeric_limits<uint64_t>::max());
  FillResource(b.mutable_resource());
  b.set_window_start_ns(kEpoch2023Ns);
  b.set_window_end_ns(kI64Max);
  b.set_last_in_session(true);

  StringTableDelta* st = b.mutable_strings();
  st->set_base_index(0);
  st->add_strings("");
  st->add_strings(std::string("odd NVTX name \xff\xfe\x00 with NUL", 26));  // not UTF-8
  for (int i = 2; i < 300; ++i) {
    st->add_strings("void gemm_kernel<cutlass::bfloat16_t, " + std::to_string(i) + ">()");
  }

  KernelColumns* k = b.mutable_kernels();
  for (int i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    k->add_start_ns(EdgeStart(i, n));
    k->add_dur_ns(i == 2 ? -5 : i == 3 ? kI64Max : (int64_t{i} * 7919) % 2'000'000);
    k->add_name_id(u % 300);
    k->add_device(u % 8);
    k->add_stream(7 + u % 13);
    k->add_correlation(i == 4 ? UINT32_MAX : u + 1);
    k->add_external_id(i == 5 ? UINT64_MAX : uint64_t{u} * 3);
    k->add_graph_id(u % 2 == 0 ? 0 : 1 + u % 4);
    k->add_graph_node_id(i == 6 ? UINT64_MAX : uint64_t{u} << 20);
    k->add_grid_x(1 + u * 17 % 65'535);
    k->add_grid_y(1 + u % 3);
    k->add_grid_z(1);
    k->add_block_x(32u << (u % 5));
    k->add_block_y(1 + u % 2);
    k->add_block_z(1);
    k->add_registers_per_thread(16 + u % 240);
    k->add_static_shared_memory_bytes(u % 49'152);
    k->add_dynamic_shared_memory_bytes(u % 3 == 0 ? 232'448 : 0);
    k->add_launch_tid(u % 10 == 0 ? 0 : 100'000 + u % 7);
    k->add_pid(u % 2 == 0 ? 4'194'303 : 0xFFFFFFFFu);
  }

  MemoryOpColumns* m = b.mutable_memory_ops();
  for (int i = 0; i < n / 2; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    m->add_kind(static_cast<MemoryOpKind>(1 + u % 7));
    m->add_start_ns(EdgeStart(i, n / 2));
    m->add_dur_ns(int64_t{i} * 101);
    m->add_bytes(i == 1 ? UINT64_MAX : uint64_t{u} << 12);
    m->add_device(u % 8);
    m->add_stream(7 + u % 3);
    m->add_correlation(u + 1);
    m->add_external_id(u);
    m->add_graph_id(u % 3);
    m->add_graph_node_id(u);
    m->add_host_pageable(u % 4 == 0);
    m->add_dst_device((u + 1) % 8);
    m->add_name_id(u % 7);
    m->add_pid(u % 2 == 0 ? 144 : 145);
  }

  LaunchApiColumns* l = b.mutable_launches();
  for (int i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    l->add_start_ns(EdgeStart(i, n));
    l->add_dur_ns(3'000 + i);
    l->add_name_id(1 + u % 3);
    l->add_api_kind(u % 2 == 0 ? API_KIND_RUNTIME : API_KIND_DRIVER);
    l->add_pid(4'194'303);
    l->add_tid(100'000 + u % 7);
    l->add_correlation(u + 1);
    l->add_external_id(uint64_t{u} * 3);
  }

  RangeColumns* r = b.mutable_ranges();
  for (int i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    r->add_start_ns(EdgeStart(i, n));
    r->add_dur_ns(i == 7 ? kI64Min : int64_t{i} * 1'000);
    r->add_name_id(u % 300);
    r->add_kind(static_cast<RangeKind>(1 + u % 5));
    r->add_domain_id(u % 4);
    r->add_pid(4'194'303);
    r->add_tid(100'000 + u % 7);
    r->add_depth(u % 6);
    r->add_external_id(uint64_t{u} * 3);
    r->add_flops(u % 3 == 0 ? kNaN : 2.0 * 4096 * 4096 * (u + 0.1));
    r->add_bytes(u % 5 == 0 ? kNaN : u * 0.1);
    r->add_input_dims_id(u % 11);
    // none, payload 0, and the largest payload the wire carries (2^63 - 1, sent as 2^63)
    r->add_payload(u % 3 == 0 ? 0 : u % 3 == 1 ? 1 : uint64_t{1} << 63);
  }

  CounterSamples* c = b.mutable_counters();
  for (int i = 0; i < 200; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    c->add_name_id(1 + u % 4);
    c->add_source(u % 2 == 0 ? COUNTER_SOURCE_PAPI : COUNTER_SOURCE_PERF_EVENT);
    c->add_ts_ns(EdgeStart(i, 200));
    c->add_pid(4'194'303);
    c->add_value(i == 0 ? kI64Min : i == 1 ? kI64Max : int64_t{i} * 1'000'003);
    c->add_time_enabled_ns(10'000'000);
    c->add_time_running_ns(i == 2 ? 0 : 2'500'000);  // 0 = never ran
  }

  StallSamples* s = b.mutable_stalls();
  for (int i = 0; i < 60; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    s->add_function_id(2 + u / 6);
    s->add_reason_id(200 + u % 6);
    s->add_samples(i == 0 ? UINT64_MAX : uint64_t{u} * 977);
    s->add_device(u % 2);
  }
  for (uint32_t f = 0; f < 10; ++f) {
    s->add_total_function_id(2 + f);
    s->add_total_samples(100'000 + f);
  }

  DropCounters* d = b.mutable_drops();
  DropCount* dc = d->add_counts();
  dc->set_stage(DROP_STAGE_RING);
  dc->set_kind(EVENT_KIND_KERNEL);
  dc->set_count(UINT64_MAX);
  dc->set_reason("ring full");
  dc = d->add_counts();
  dc->set_stage(DROP_STAGE_SPOOL);
  dc->set_kind(EVENT_KIND_BATCH);
  dc->set_count(3);
  dc->set_reason("spool over 1 GiB budget");
  Unavailable* un = d->add_unavailable();
  un->set_what("cupti");
  un->set_reason("no driver");

  opmap::v1::PowerSample* p = b.add_power();
  p->set_domain(opmap::v1::POWER_DOMAIN_GPU);
  p->set_device("GPU-5d1c0000-0000-0000-0000-000000000000");
  p->set_name("NVIDIA H200");
  p->set_index(3);
  p->set_start_ns(kEpoch2023Ns);
  p->set_end_ns(kEpoch2023Ns + 2'000'000'000);
  p->set_covered_ns(1'999'000'000);
  p->set_energy_mj(1'260'000);
  p->set_method(opmap::v1::ENERGY_METHOD_INTEGRATED_POWER);
  p->set_reads(5);
  p->set_power_limit_mw(700'000);
  p->set_sm_clock_mhz(1980);
  p->set_memory_clock_mhz(3201);
  p->set_throttle_reasons(0x44);
  p->set_temperature_c(61);
  p->set_persistence(true);
  p->set_mig(true);
  p->set_compute_mode(3);
  Unavailable* pu = p->add_unavailable();
  pu->set_what("energy_mj");
  pu->set_reason("no counter");
  return b;
}


void FillResource(Resource* r) {
  r->set_host("gpu-node-17.fleet");
  r->set_pid(4'194'303);  // Linux pid_max
  r->set_process_start_ns(kEpoch2023Ns - 1);
  r->set_container_id("3f2a9c");
  r->set_cgroup("/kubepods.slice/pod-abc/cri-containerd-3f2a9c.scope");
  (*r->mutable_labels())["job"] = "llm-serving";
  (*r->mutable_labels())["team"] = "inference";
  r->set_model_name("llama-3-8b-instruct");
  r->set_model_revision("r42");
  r->set_precision(PRECISION_BF16);
  r->set_framework("pytorch");
  r->set_framework_version("2.4.1+cu124");
  r->set_compiler("inductor");
  r->set_compiler_version("2.4.1");
  r->set_cuda_runtime_version("12.4");
  r->set_driver_version("550.54.15");
  r->set_cupti_version("22");
  r->set_agent_version("0.1.0");
  for (uint32_t d = 0; d < 2; ++d) {
    Gpu* g = r->add_gpus();
    g->set_device(d);
    // Two different boards, so that every field (compute capability minor too) is
    // non-default somewhere.
    g->set_name(d == 0 ? "NVIDIA H200" : "NVIDIA L40S");
    g->set_uuid("GPU-5d1c0000-0000-0000-0000-00000000000" + std::to_string(d));
    g->set_sm_count(d == 0 ? 132 : 142);
    g->set_compute_capability_major(d == 0 ? 9 : 8);
    g->set_compute_capability_minor(d == 0 ? 0 : 9);
    g->set_sm_clock_mhz(1980);
    g->set_memory_clock_mhz(3201);
    g->set_power_limit_mw(700'000);
    g->set_memory_bytes(150'754'820'096);
  }
}


// Seeded, so sizes measured from it are the same every run.
KernelColumns MakeRealisticKernels(int n, bool from_graphs) {
  std::mt19937_64 rng(20240501);
  auto uniform = [&](uint64_t lo, uint64_t hi) {
    return lo + rng() % (hi - lo + 1);
  };
  KernelColumns k;
  int64_t t = kEpoch2023Ns;
  for (int i = 0; i < n; ++i) {
    t += static_cast<int64_t>(uniform(1'000, 10'000));
    k.add_start_ns(t);
    k.add_dur_ns(static_cast<int64_t>(uniform(2'000, 2'000'000)));
    k.add_name_id(static_cast<uint32_t>(uniform(1, 400)));
    k.add_device(static_cast<uint32_t>(uniform(0, 7)));
    k.add_stream(static_cast<uint32_t>(uniform(7, 30)));
    k.add_correlation(static_cast<uint32_t>(1'000'000 + i));
    k.add_external_id(static_cast<uint64_t>(500'000 + i / 4));
    if (from_graphs) {
      k.add_graph_id(static_cast<uint32_t>(uniform(1, 40)));
      k.add_graph_node_id(static_cast<uint64_t>(uniform(1, 1'000'000)));
    }
    k.add_grid_x(static_cast<uint32_t>(uniform(1, 4'096)));
    k.add_grid_y(static_cast<uint32_t>(uniform(1, 32)));
    k.add_grid_z(1);
    k.add_block_x(static_cast<uint32_t>(128 << uniform(0, 2)));
    k.add_block_y(1);
    k.add_block_z(1);
    k.add_registers_per_thread(static_cast<uint32_t>(uniform(24, 255)));
    k.add_static_shared_memory_bytes(static_cast<uint32_t>(uniform(0, 49'152)));
    k.add_dynamic_shared_memory_bytes(uniform(0, 1) ? 0u : 232'448u);
    k.add_launch_tid(static_cast<uint32_t>(uniform(100'000, 4'000'000)));
  }
  return k;
}

}  // namespace opmap::v1::testing_fixtures
