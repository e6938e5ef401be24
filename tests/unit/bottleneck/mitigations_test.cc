// ProposeMitigations(): one subject per class, bounds computed by hand on the H100 SXM5
// envelope (3.35e12 B/s, bf16 989.4e12, fp8 1978.9e12 FLOP/s), total 1 ms.
#include "analysis/bottleneck/mitigations.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

OperatorFigures Base(const std::string& name, int64_t gpu_ns) {
  OperatorFigures f;
  f.name = name;
  f.gpu_time_ns = gpu_ns;
  f.kernel_count = 1;
  f.launch_call_ns = 1'000;
  f.host_wait_idle_ns = 0;
  f.idle_ns = 0;
  f.non_overlapped_comm_ns = 0;
  f.iteration_ns = 1'000'000;
  return f;
}

class MitigationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = EnvelopeForGpuName("NVIDIA H100 80GB HBM3");
    ASSERT_TRUE(env.has_value());
    env_ = *env;

    OperatorFigures launch = Base("aten::add", 30'000);
    launch.kernel_count = 8;
    launch.small_kernel_count = 4;       // 0.5, and 30 µs idle before 30 µs of kernels:
    launch.small_kernel_time_ns = 20'000;  // launch-overhead
    launch.idle_ns = 30'000;             // bound 30 + 20 = 50 µs
    Add(launch, BottleneckClass::kLaunchOverhead);

    OperatorFigures compute = Base("aten::mm", 100'000);
    compute.flops = 7.9156e10;  // U_c 0.80004; FP8 floor 7.9156e10 / 1978.9e12 = 40 µs
    compute.bytes = 3.35e7;     // U_m 0.1
    Add(compute, BottleneckClass::kComputeBound);  // bound 100 − 40 = 60 µs

    OperatorFigures memory = Base("aten::layer_norm", 80'000);
    memory.flops = 9.894e9;   // 10 µs at bf16 peak
    memory.bytes = 1.675e8;   // 50 µs at 3.35e12 B/s; U_m = 0.625
    Add(memory, BottleneckClass::kMemoryBound);  // bound 80 − max(10, 50) = 30 µs

    OperatorFigures host = Base("aten::index", 10'000);
    host.idle_ns = 26'000;
    host.host_wait_idle_ns = 25'000;  // 25 / 36 ≥ 0.5
    Add(host, BottleneckClass::kHostStarved);  // bound 25 µs

    OperatorFigures comm = Base("c10d::allreduce_", 5'000);
    comm.collective = true;
    comm.non_overlapped_comm_ns = 4'000;
    Add(comm, BottleneckClass::kCommunication);  // bound 4 µs

    OperatorFigures latency = Base("aten::bmm", 100'000);
    latency.flops = 9.894e9;  // 10 µs at peak, U_c 0.1
    latency.bytes = 6.7e7;    // 20 µs at peak, U_m 0.2
    Add(latency, BottleneckClass::kLatencyOccupancy);  // bound 100 − 20 = 80 µs

    OperatorFigures unknown = Base("aten::gelu", 200'000);
    unknown.flops_missing = "no FLOPs formula for aten::gelu";
    Add(unknown, BottleneckClass::kUnclassified);  // no bound
  }

  void Add(const OperatorFigures& f, BottleneckClass want) {
    MitigationInput in{f, Classify(f, &env_)};
    ASSERT_EQ(in.classification.cls, want) << f.name << ": " << in.classification.summary;
    subjects_.push_back(in);
  }

  HardwareEnvelope env_;
  std::vector<MitigationInput> subjects_;
};

TEST_F(MitigationsTest, OrderedByGainBoundWithUnboundedLast) {
  std::vector<Mitigation> m = ProposeMitigations(subjects_, 1'000'000, &env_, 0);
  ASSERT_EQ(m.size(), 7u);
  const char* order[] = {"aten::bmm", "aten::mm", "aten::add", "aten::layer_norm",
                         "aten::index", "c10d::allreduce_", "aten::gelu"};
  const int64_t bounds[] = {80'000, 60'000, 50'000, 30'000, 25'000, 4'000};
  for (size_t i = 0; i < m.size(); ++i) {
    SCOPED_TRACE(m[i].subject);
    EXPECT_EQ(m[i].subject, order[i]);
    if (i < 6) {
      ASSERT_TRUE(m[i].gain_bound_ns.has_value()) << m[i].gain_basis;
      EXPECT_NEAR(static_cast<double>(*m[i].gain_bound_ns), bounds[i], 1.0);
      EXPECT_NEAR(*m[i].gain_bound_fraction, bounds[i] / 1e6, 1e-6);
    }
  }
  EXPECT_FALSE(m[6].gain_bound_ns.has_value());
  EXPECT_FALSE(m[6].gain_bound_fraction.has_value());
}

TEST_F(MitigationsTest, ActionsOwnersAndBoundaries) {
  std::vector<Mitigation> m = ProposeMitigations(subjects_, 1'000'000, &env_, 0);
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(m[0].action, "split-K / persistent kernels");
  EXPECT_EQ(m[0].owner, OwnerRole::kMlCompilerEngineer);
  EXPECT_EQ(m[1].action, "FP8 / GEMM tuning");
  EXPECT_EQ(m[1].owner, OwnerRole::kMlCompilerEngineer);
  EXPECT_TRUE(absl::StrContains(m[1].gain_basis, "FP8 peak 40.0 µs")) << m[1].gain_basis;
  EXPECT_EQ(m[2].action, "CUDA graphs / torch.compile");
  EXPECT_EQ(m[2].owner, OwnerRole::kRuntimeSystemsEngineer);
  EXPECT_EQ(m[2].rollback_boundary, "revert the compile flag / graph capture for aten::add only");
  EXPECT_EQ(m[3].action, "fusion / quantized weights or KV / larger decode batch");
  EXPECT_TRUE(absl::StrContains(m[3].gain_basis, "bytes/bandwidth 50.0 µs")) << m[3].gain_basis;
  EXPECT_EQ(m[4].action, "async host pipeline");
  EXPECT_EQ(m[4].owner, OwnerRole::kRuntimeSystemsEngineer);
  EXPECT_EQ(m[5].action, "overlap or fewer collectives");
  EXPECT_EQ(m[6].action, "measure the missing figures");
  EXPECT_EQ(m[6].owner, OwnerRole::kPerformanceModelingOwner);
  for (const Mitigation& x : m) {
    EXPECT_TRUE(absl::StrContains(x.validation_scope, x.subject)) << x.validation_scope;
    EXPECT_TRUE(absl::StrContains(x.rollback_boundary, x.subject)) << x.rollback_boundary;
    EXPECT_FALSE(x.evidence.empty());
  }
  EXPECT_TRUE(absl::StrContains(m[0].validation_scope, "p50/p95/p99"));
}

TEST_F(MitigationsTest, TopTakesLargestGpuTimeSubjectsFirst) {
  // By GPU time: gelu 200, mm 100, bmm 100 (ties keep input order), layer_norm 80 ...
  std::vector<Mitigation> m = ProposeMitigations(subjects_, 1'000'000, &env_, 3);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].subject, "aten::bmm");
  EXPECT_EQ(m[1].subject, "aten::mm");
  EXPECT_EQ(m[2].subject, "aten::gelu");
}

TEST_F(MitigationsTest, NoEnvelopeOrTotalMeansNoBound) {
  std::vector<Mitigation> m = ProposeMitigations(subjects_, 0, nullptr, 0);
  for (const Mitigation& x : m) {
    EXPECT_FALSE(x.gain_bound_fraction.has_value()) << x.subject;
    if (x.cls == BottleneckClass::kComputeBound) {
      EXPECT_FALSE(x.gain_bound_ns.has_value());
      EXPECT_EQ(x.gain_basis, "no hardware envelope");
    }
  }
}

TEST_F(MitigationsTest, JsonAndSection) {
  std::vector<Mitigation> m = ProposeMitigations(subjects_, 1'000'000, &env_, 0);
  text::JsonWriter w;
  WriteMitigationsJson(m, w);
  const std::string& json = w.str();
  EXPECT_TRUE(absl::StrContains(json, "\"subject\":\"aten::bmm\"")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"gain_bound_ns\":null"));
  EXPECT_TRUE(absl::StrContains(json, "\"owner\":\"performance modeling owner\""));
  DocSection s = MitigationsSection(m);
  ASSERT_EQ(s.tables.size(), 1u);
  ASSERT_EQ(s.tables[0].rows.size(), 7u);
  EXPECT_EQ(s.tables[0].rows[0][4], "80.0 µs (8.0%)");
  EXPECT_TRUE(absl::StartsWith(s.tables[0].rows[6][4], "unavailable: ")) << s.tables[0].rows[6][4];
}

TEST(OwnerRole, NamesParse) {
  EXPECT_EQ(OwnerRoleName(OwnerRole::kMlCompilerEngineer), "ML compiler engineer");
  EXPECT_EQ(ParseOwnerRole("ml COMPILER engineer"), OwnerRole::kMlCompilerEngineer);
  EXPECT_EQ(ParseOwnerRole("Runtime"), OwnerRole::kRuntimeSystemsEngineer);
  EXPECT_EQ(ParseOwnerRole("modeling"), OwnerRole::kPerformanceModelingOwner);
  EXPECT_EQ(ParseOwnerRole("performance modeling owner"), OwnerRole::kPerformanceModelingOwner);
  EXPECT_FALSE(ParseOwnerRole("product").has_value());
}

}  // namespace
}  // namespace opmap::analysis
