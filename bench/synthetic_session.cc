#include "bench/synthetic_session.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"

namespace opmap::bench {

using analysis::Trace;

Trace MakeSession(int kernels) {
  static const char* kOps[] = {"aten::addmm", "aten::mm", "aten::bmm",
                               "aten::_flash_attention_forward", "aten::native_layer_norm",
                               "aten::add", "aten::mul", "aten::gelu", "aten::_softmax",
                               "aten::embedding", "aten::copy_", "nccl:all_reduce"};
  // {prefix, suffix} around a tile size: 10 stems x 5 sizes = 50 names.
  static const char* kKernelStems[][2] = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize", "x128x64"},
      {"ampere_sgemm_", "x64_nn"},
      {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<", ">>"},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<", ">"},
      {"void at::native::vectorized_elementwise_kernel<", ", add>"},
      {"void at::native::vectorized_elementwise_kernel<", ", mul>"},
      {"void at::native::(anonymous namespace)::softmax_warp_forward<", ">"},
      {"void at::native::indexSelectLargeIndex<", ">"},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL<", ">"},
      {"void at::native::unrolled_elementwise_kernel<", ", gelu>"}};
  Trace t;
  t.info.format = "live";
  t.info.process = 4242;
  t.info.gpu_names = {"NVIDIA H200"};
  auto launch_name = t.strings.Intern("cudaLaunchKernel");
  std::vector<opmap::analysis::StringId> ops, names;
  for (const char* op : kOps) ops.push_back(t.strings.Intern(op));
  for (int i = 0; i < 50; ++i) {
    names.push_back(t.strings.Intern(
        absl::StrCat(kKernelStems[i % 10][0], 64 << (i / 10), kKernelStems[i % 10][1])));
  }
  // Each kernel name belongs to one operator (as in real models), with its own typical
  // duration from 2 µs to 200 µs and a log-normal spread of ±25% around it.
  std::vector<std::vector<int>> op_kernels(std::size(kOps));
  std::vector<double> base_ns(names.size());
  for (size_t n = 0; n < names.size(); ++n) {
    op_kernels[n % std::size(kOps)].push_back(static_cast<int>(n));
    base_ns[n] = 2'000.0 * std::pow(100.0, static_cast<double>(n) / (names.size() - 1));
  }
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> spread(0.0, 0.25);
  const int64_t t0 = kSessionStartNs;
  int64_t correlation = 1;
  for (int k = 0; k < kernels; k += 5) {
    const int op = (k / 5) % static_cast<int>(std::size(kOps));
    opmap::analysis::Range r;
    r.start_ns = t0 + (k / 5) * 10'000;
    r.dur_ns = 9'000;
    r.name = ops[op];
    r.kind = opmap::analysis::RangeKind::kCpuOp;
    r.process = 4242;
    r.thread = 4243;
    t.ranges.push_back(r);
    for (int j = 0; j < 5 && k + j < kernels; ++j) {
      opmap::analysis::ApiCall a;
      a.start_ns = r.start_ns + 100 + j * 1'500;
      a.dur_ns = 1'000;
      a.name = launch_name;
      a.process = 4242;
      a.thread = 4243;
      a.correlation = correlation;
      t.api_calls.push_back(a);
      const int n = op_kernels[op][(k / 5 / std::size(kOps) + j) % op_kernels[op].size()];
      opmap::analysis::GpuEvent g;
      g.start_ns = a.start_ns + 5'000;
      g.dur_ns = std::max<int64_t>(1, std::llround(base_ns[n] * spread(rng)));
      g.name = names[n];
      g.device = 0;
      g.stream = 7;
      g.correlation = correlation++;
      t.gpu_events.push_back(g);
    }
  }
  return t;
}

}  // namespace opmap::bench
