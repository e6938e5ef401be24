// Nsight Compute CSV import (analysis/import/ncu_importer.h) and its summary
// (analysis/stalls/ncu_summary.h): the real exports in ../shared/ncu against the reference
// computed there and against their own CSV text, the MONAI summary's partial reason set
// by hand, the duration weighting by hand, the join to a trace, and bad input with the
// exact messages. Shared-data tests skip when ../shared is absent.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/import/ncu_importer.h"
#include "analysis/stalls/ncu_summary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using ::opmap::testing::ReadCsv;
using ::opmap::testing::ReadFileOrDie;
using ::opmap::testing::SharedPath;
using ::opmap::testing::ToDouble;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

NcuProfile ImportOrDie(const std::string& relative) {
  absl::StatusOr<NcuProfile> p = ImportNcuCsv(ReadFileOrDie(SharedPath(relative)));
  EXPECT_TRUE(p.ok()) << relative << ": " << p.status();
  return p.ok() ? *std::move(p) : NcuProfile{};
}

const NcuKernelRow* ById(const NcuSummary& s, int64_t id) {
  for (const NcuKernelRow& k : s.kernels) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

const NcuGroupRow* Layer(const NcuSummary& s, LayerType t) {
  for (const NcuGroupRow& g : s.layer_types) {
    if (g.layer_type == t) return &g;
  }
  return nullptr;
}

double Get(const std::vector<std::pair<std::string, double>>& v, const std::string& key) {
  for (const auto& [k, x] : v) {
    if (k == key) return x;
  }
  ADD_FAILURE() << "no " << key;
  return NAN;
}

// Every kernel of the three AsymGEMM raw exports: duration and both fractions equal the
// reference computed from the same files (shared/ncu/README.md), to 3 decimals.
TEST(NcuImport, RawExportsMatchReference) {
  OPMAP_REQUIRE_SHARED("ncu/asymgemm_h200.reference.csv");
  const std::vector<std::pair<std::string, size_t>> files = {
      {"qwen3_14b_ncu_raw.csv", 14}, {"mlp_1b_ncu_raw.csv", 4}, {"matrix_1b_ncu_raw.csv", 2}};
  auto reference = ReadCsv(SharedPath("ncu/asymgemm_h200.reference.csv"));
  ASSERT_EQ(reference.size(), 20u);
  size_t checked = 0;
  for (const auto& [file, kernels] : files) {
    SCOPED_TRACE(file);
    NcuProfile p = ImportOrDie("ncu/" + file);
    EXPECT_EQ(p.format, "ncu-raw");
    ASSERT_EQ(p.kernels.size(), kernels);
    NcuSummary s = SummarizeNcu(p);
    EXPECT_EQ(s.weighting, "duration");
    EXPECT_EQ(s.stalls.status, "complete");
    EXPECT_EQ(s.stalls.present.size(), 19u);
    EXPECT_TRUE(s.stalls.missing.empty());
    for (const auto& row : reference) {
      if (row.at("file") != file) continue;
      const int64_t id = std::stoll(row.at("id"));
      SCOPED_TRACE("id " + row.at("id"));
      const NcuKernelRow* k = ById(s, id);
      ASSERT_NE(k, nullptr);
      EXPECT_THAT(k->name, StartsWith(row.at("kernel")));
      EXPECT_EQ(k->layer_type, LayerType::kMatmul);
      ASSERT_TRUE(k->duration_ns.has_value());
      EXPECT_EQ(*k->duration_ns, ToDouble(row.at("duration_ns")));
      EXPECT_EQ(k->duration_source, "gpu__time_duration.sum");
      EXPECT_EQ(k->stalls.status, "complete");
      ASSERT_TRUE(k->breakdown.MemoryFraction().has_value());
      EXPECT_NEAR(*k->breakdown.MemoryFraction(), ToDouble(row.at("memory_stall_fraction")),
                  5e-4);
      EXPECT_NEAR(*k->breakdown.OnChipFraction(), ToDouble(row.at("onchip_stall_fraction")),
                  5e-4);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20u);
}

// qwen3 kernel 0 from the CSV text: dram 675328 + 0 bytes, sm__throughput 0.25 %,
// gpu__compute_memory_throughput 6.29 %, device 2, stream 7; no FP SASS counters collected.
TEST(NcuImport, RawExportBytesAndThroughput) {
  OPMAP_REQUIRE_SHARED("ncu/qwen3_14b_ncu_raw.csv");
  NcuSummary s = SummarizeNcu(ImportOrDie("ncu/qwen3_14b_ncu_raw.csv"));
  const NcuKernelRow* k = ById(s, 0);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->dram_bytes, 675328.0);
  EXPECT_EQ(Get(k->throughput_pct, "sm__throughput.avg.pct_of_peak_sustained_elapsed"), 0.25);
  EXPECT_EQ(Get(k->throughput_pct,
                "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
            6.29);
  EXPECT_EQ(k->device, 2);
  EXPECT_EQ(k->stream, 7);
  EXPECT_FALSE(k->flops.has_value());
  EXPECT_FALSE(k->arithmetic_intensity.has_value());
  // One layer type, all 14 kernels, durations summed.
  ASSERT_EQ(s.layer_types.size(), 1u);
  EXPECT_EQ(s.layer_types[0].kernels, 14);
}

// The long form (GPT-2 / BERT attention blocks): ID 5 from the CSV text. No gpu__time_duration:
// the duration is sm__cycles_elapsed.avg ÷ .per_second; FLOPs = 2 × hfma (others 0).
TEST(NcuImport, LongFormMetrics) {
  OPMAP_REQUIRE_SHARED("ncu/gpt2_torch_nsight.csv");
  struct Case {
    const char* file;
    double dram, hfma, cycles, rate, sm_pct, mem_pct;
  };
  for (const Case& c : {Case{"ncu/gpt2_torch_nsight.csv", 196992, 98304, 5849.96,
                             967255780.91, 3.00, 3.43},
                        Case{"ncu/bert_torch_nsight.csv", 41088, 20480, 5600.87,
                             1035663899.85, 0.66, 1.25}}) {
    SCOPED_TRACE(c.file);
    NcuProfile p = ImportOrDie(c.file);
    EXPECT_EQ(p.format, "ncu-long");
    ASSERT_EQ(p.kernels.size(), 26u);
    NcuSummary s = SummarizeNcu(p);
    const NcuKernelRow* k = ById(s, 5);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->dram_bytes, c.dram);
    EXPECT_EQ(k->flops, 2 * c.hfma);
    ASSERT_TRUE(k->arithmetic_intensity.has_value());
    EXPECT_DOUBLE_EQ(*k->arithmetic_intensity, 2 * c.hfma / c.dram);
    ASSERT_TRUE(k->duration_ns.has_value());
    EXPECT_NEAR(*k->duration_ns, c.cycles / c.rate * 1e9, 1e-6);
    EXPECT_EQ(k->duration_source, "sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second");
    EXPECT_EQ(Get(k->throughput_pct, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
              c.sm_pct);
    EXPECT_EQ(Get(k->throughput_pct,
                  "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
              c.mem_pct);
    EXPECT_EQ(k->stream, 7);
    // No stall section in these files: unavailable, never 0.
    EXPECT_THAT(k->stalls.status,
                StartsWith("unavailable: no warp-stall ratios for this kernel (smsp__"));
    EXPECT_FALSE(k->breakdown.MemoryFraction().has_value());
    EXPECT_THAT(s.stalls.status, StartsWith("unavailable: "));
    EXPECT_EQ(ById(s, 6)->layer_type, LayerType::kMatmul);  // ampere_sgemm_*
  }
}

// The details pages (DeepSeek-OCR on an RTX 5090): one kernel per file, units Mbyte and us.
// kernel_0001: dram 2.33 Mbyte + 0 byte, gpu__time_duration 6.75 us, sm 9.15 %, dram 19.66 %.
// kernel_0013: dram 4.74 Mbyte, 10.34 us.
TEST(NcuImport, DetailsPages) {
  OPMAP_REQUIRE_SHARED("ncu/dsocr_rtx5090/kernel_0001.details.csv");
  for (int i = 1; i <= 20; ++i) {
    std::string file = absl::StrFormat("ncu/dsocr_rtx5090/kernel_%04d.details.csv", i);
    SCOPED_TRACE(file);
    NcuProfile p = ImportOrDie(file);
    EXPECT_EQ(p.format, "ncu-details");
    ASSERT_EQ(p.kernels.size(), 1u);
    ASSERT_TRUE(p.kernels[0].duration_ns.has_value());
    EXPECT_GT(*p.kernels[0].duration_ns, 0);
    EXPECT_TRUE(p.kernels[0].dram_bytes.has_value());
    EXPECT_TRUE(p.kernels[0].stall_ratios.empty());
  }
  NcuSummary a = SummarizeNcu(ImportOrDie("ncu/dsocr_rtx5090/kernel_0001.details.csv"));
  EXPECT_DOUBLE_EQ(*a.kernels[0].dram_bytes, 2.33e6);
  EXPECT_DOUBLE_EQ(*a.kernels[0].duration_ns, 6750);
  EXPECT_EQ(a.kernels[0].device, 0);
  EXPECT_EQ(a.kernels[0].layer_type, LayerType::kMatmul);  // cublasGemv...
  EXPECT_EQ(Get(a.kernels[0].throughput_pct, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            9.15);
  EXPECT_EQ(Get(a.kernels[0].throughput_pct, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
            19.66);
  EXPECT_FALSE(a.kernels[0].flops.has_value());  // flop_count_*: "n/a", not read as 0
  NcuSummary b = SummarizeNcu(ImportOrDie("ncu/dsocr_rtx5090/kernel_0013.details.csv"));
  EXPECT_DOUBLE_EQ(*b.kernels[0].dram_bytes, 4.74e6);
  EXPECT_DOUBLE_EQ(*b.kernels[0].duration_ns, 10340);
  EXPECT_EQ(b.kernels[0].layer_type, LayerType::kAttention);  // flash_fwd_splitkv_kernel
}

// The MONAI summary: a partial reason set. Layer type "other" holds three kernels (no
// METRICS kernel-name rule matches them); from the file's rows (d = gpu_time_duration_ns):
//   vol2col  d=12390.56  memory = long_scoreboard 1.8876604273504274 (lg_throttle, membar,
//            tex_throttle 0); stalled = branch .4892707735042735 + dispatch .5982263376068376
//            + memory_dependency .06928811538461538 + 1.8876604273504274 + no_instruction
//            .3117117991452992 + short_scoreboard .3921637264957265 + wait 2.7686801495726496
//            = 6.517001329059829
//   vol2im   d=5985.824  memory 2.7160157692307694; stalled .2379610576923077
//            + .4300901923076923 + .21783748076923076 + 2.7160157692307694
//            + .10627359615384616 + .8405284807692308 + 3.066862826923077 = 7.615569403846154
//   multi_tensor_apply d=290.56  memory 33.57847975; stalled .18128750000000002 + .01766
//            + .18287183333333334 + 33.57847975 + .44901366666666664 + .45436058333333335
//            + 2.42597175 = 37.28964508333333
//   memory-stall fraction = Σ d·memory ÷ Σ d·stalled = 49403.325 ÷ 137169.633 = 0.360162
//   on-chip (short_scoreboard) = Σ d·short ÷ Σ d·stalled = 0.073066
TEST(NcuImport, MonaiSummaryByHandAndMissingReasons) {
  OPMAP_REQUIRE_SHARED("ncu/monai_h100_stall_summary.csv");
  NcuProfile p = ImportOrDie("ncu/monai_h100_stall_summary.csv");
  EXPECT_EQ(p.format, "monai-summary");
  ASSERT_EQ(p.kernels.size(), 56u);
  NcuSummary s = SummarizeNcu(p);
  EXPECT_THAT(s.stalls.missing, ElementsAre("barrier", "drain", "imc_miss", "math_pipe_throttle",
                                            "mio_throttle", "misc", "not_selected"));
  EXPECT_THAT(s.stalls.unrecognized, ElementsAre("memory_dependency"));
  EXPECT_EQ(s.stalls.status,
            "partial: reasons barrier, drain, imc_miss, math_pipe_throttle, mio_throttle, misc, "
            "not_selected absent");
  const NcuGroupRow* other = Layer(s, LayerType::kOther);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->kernels, 3);
  EXPECT_NEAR(other->duration_ns, 12390.56 + 5985.824 + 290.56, 1e-6);
  const double d[3] = {12390.56, 5985.8240000000005, 290.56};
  const double memory[3] = {1.8876604273504274, 2.7160157692307694, 33.57847975};
  const double stalled[3] = {6.517001329059829, 7.615569403846154, 37.28964508333333};
  const double on_chip[3] = {0.3921637264957265, 0.8405284807692308, 0.45436058333333335};
  double m = 0, st = 0, oc = 0;
  for (int i = 0; i < 3; ++i) {
    m += d[i] * memory[i];
    st += d[i] * stalled[i];
    oc += d[i] * on_chip[i];
  }
  EXPECT_NEAR(m / st, 0.360162, 1e-6);
  EXPECT_NEAR(*other->breakdown.MemoryFraction(), m / st, 1e-9);
  EXPECT_NEAR(*other->breakdown.OnChipFraction(), oc / st, 1e-9);
  EXPECT_EQ(other->stalls.status, s.stalls.status);
  // The first kernel (a FillFunctor) names the same gaps.
  EXPECT_THAT(s.kernels[0].stalls.status, StartsWith("partial: reasons barrier, drain"));
}

// Duration weighting by hand: two launches of one kernel, d = 1000 and 3000 ns.
//   launch 1: long_scoreboard 8, wait 2 (selected 1)  → memory 8/10
//   launch 2: long_scoreboard 1, wait 9               → memory 1/10
//   name: (1000·8 + 3000·1) ÷ (1000·10 + 3000·10) = 11000/40000 = 0.275
//   (the unweighted mean of fractions would be 0.45)
TEST(NcuSummary, WeightsLaunchesByDuration) {
  const std::string p = "smsp__average_warps_issue_stalled_";
  const std::string s = "_per_issue_active.ratio";
  std::string csv = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"," + ("\"" + p + "long_scoreboard" + s + "\",") +
                    ("\"" + p + "wait" + s + "\",") + ("\"" + p + "selected" + s + "\"\n") +
                    "\"\",\"\",\"usecond\",\"inst\",\"inst\",\"inst\"\n"
                    "\"0\",\"my_gemm_kernel\",\"1\",\"8\",\"2\",\"1\"\n"
                    "\"1\",\"my_gemm_kernel\",\"3\",\"1\",\"9\",\"1\"\n";
  absl::StatusOr<NcuProfile> prof = ImportNcuCsv(csv);
  ASSERT_TRUE(prof.ok()) << prof.status();
  NcuSummary sum = SummarizeNcu(*prof);
  ASSERT_EQ(sum.kernel_names.size(), 1u);
  EXPECT_DOUBLE_EQ(*sum.kernel_names[0].breakdown.MemoryFraction(), 0.275);
  EXPECT_DOUBLE_EQ(sum.kernel_names[0].duration_ns, 4000);
  EXPECT_EQ(sum.kernel_names[0].kernels, 2);
  EXPECT_DOUBLE_EQ(*sum.kernels[0].breakdown.MemoryFraction(), 0.8);
  EXPECT_THAT(sum.kernels[0].stalls.status, StartsWith("partial: reasons barrier, "));
  EXPECT_DOUBLE_EQ(*Layer(sum, LayerType::kMatmul)->breakdown.MemoryFraction(), 0.275);
}

// The i-th ncu row of a name joins the i-th launch of that name; ratios land in
// trace.stalls weighted by the trace launch's duration.
TEST(NcuSummary, JoinsByNameAndLaunchOrder) {
  Trace t;
  auto kernel = [&](const char* name, int64_t start, int64_t dur) {
    GpuEvent& g = t.gpu_events.emplace_back();
    g.name = t.strings.Intern(name);
    g.start_ns = start;
    g.dur_ns = dur;
  };
  kernel("k_a", 100, 10);
  kernel("k_b", 0, 20);  // earlier start: the first k_b launch
  kernel("k_a", 300, 30);
  NcuProfile p;
  for (const char* n : {"k_a", "k_a", "k_a", "k_b"}) {
    NcuKernel& k = p.kernels.emplace_back();
    k.name = n;
    k.stall_ratios = {{"long_scoreboard", 1.0}, {"wait", 1.0}};
  }
  p.kernels[1].dram_bytes = 4096;  // the second k_a row: measured work for the roofline
  p.kernels[1].flops = 1e6;
  NcuJoin j = AttachNcuStalls(p, t);
  EXPECT_EQ(j.ncu_kernels, 4);
  EXPECT_EQ(j.joined, 3);
  EXPECT_EQ(j.ncu_unjoined, 1);  // the third k_a row: the trace has two k_a launches
  EXPECT_EQ(j.trace_kernels_unprofiled, 0);
  ASSERT_EQ(t.stalls.size(), 6u);
  EXPECT_EQ(t.stalls[0].weight, 10);  // first k_a launch
  EXPECT_EQ(t.stalls[0].event, 0);
  EXPECT_EQ(t.stalls[2].weight, 30);  // second k_a launch
  EXPECT_EQ(t.stalls[2].event, 2);
  EXPECT_EQ(t.stalls[4].weight, 20);  // k_b
  EXPECT_EQ(t.stalls[4].event, 1);
  EXPECT_EQ(t.stalls[4].unit, StallUnit::kPerIssueRatio);
  // Measured DRAM bytes and FLOPs travel with the launch they were joined to.
  ASSERT_EQ(t.measured.size(), 1u);
  EXPECT_EQ(t.measured[0].event, 2);
  EXPECT_EQ(t.measured[0].dram_bytes, 4096.0);
  EXPECT_EQ(t.measured[0].flops, 1e6);
}

// "n/a" is unavailable, not an error and not 0.
TEST(NcuImport, NotAvailableIsNotZero) {
  absl::StatusOr<NcuProfile> p = ImportNcuCsv(
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\"\n"
      "\"\",\"\",\"nsecond\",\"Kbyte\"\n"
      "\"0\",\"k\",\"n/a\",\"1.5\"\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->kernels[0].duration_ns.has_value());
  EXPECT_EQ(p->kernels[0].dram_bytes, 1500.0);
}

// A long-format row may stop before the header's trailing columns (the fuzzer found the
// Device and Stream columns read past a short row's end): they are then absent.
TEST(NcuImport, LongFormRowShorterThanTheLaunchColumns) {
  absl::StatusOr<NcuProfile> p = ImportNcuCsv(
      "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Device\","
      "\"Stream\"\n"
      "\"0\",\"k\",\"dram__bytes.sum\",\"byte\",\"1,024\"\n"
      "\"1\",\"k2\",\"dram__bytes.sum\",\"byte\",\"8\",\"3\",\"9\"\n");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->kernels.size(), 2u);
  EXPECT_EQ(p->kernels[0].dram_bytes, 1024.0);
  EXPECT_EQ(p->kernels[0].device, NcuKernel{}.device);
  EXPECT_EQ(p->kernels[0].stream, NcuKernel{}.stream);
  EXPECT_EQ(p->kernels[1].device, 3);
  EXPECT_EQ(p->kernels[1].stream, 9);
}

std::string ErrorOf(std::string_view csv) {
  absl::StatusOr<NcuProfile> p = ImportNcuCsv(csv);
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : std::string(p.status().message());
}

TEST(NcuImport, BadInputMessages) {
  EXPECT_EQ(ErrorOf("{\"traceEvents\": []}\n"),
            "not an Nsight Compute CSV: the first row (line 1) starts with \"{\"traceEvents\": "
            "[]}\"; expected `ncu --csv --page raw` or `ncu --csv [--page details]` output (a "
            "header row starting \"ID\"), or a summary with kernel_name and "
            "stall_<reason>_ratio columns");
  EXPECT_EQ(ErrorOf("==PROF== Connected to process 1\n==PROF== Disconnected from process 1\n"),
            "not an Nsight Compute CSV: 2 ==PROF==/==WARNING== lines and no header row (did "
            "ncu profile any kernel?)");
  EXPECT_EQ(ErrorOf(""),
            "not an Nsight Compute CSV: no header row (expected `ncu --csv --page raw` or `ncu "
            "--csv [--page details]` output (a header row starting \"ID\"), or a summary with "
            "kernel_name and stall_<reason>_ratio columns)");
  EXPECT_EQ(ErrorOf("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
                    "\"\",\"\",\"ns\"\n"
                    "\"0\",\"k\",\"5\"\n"
                    "\"1\",\"k\"\n"),
            "line 4: 2 fields where the header (line 1) has 3");
  EXPECT_EQ(ErrorOf("==PROF== x\n\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
                    "\"\",\"\",\"ns\"\n"
                    "\"0\",\"k\",\"fast\"\n"),
            "line 4, column 3 (gpu__time_duration.sum): \"fast\" is not a number");
  EXPECT_EQ(ErrorOf("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
                    "\"\",\"\",\"fortnight\"\n"
                    "\"0\",\"k\",\"5\"\n"),
            "line 3, column 3 (gpu__time_duration.sum): unknown time unit \"fortnight\"");
  EXPECT_EQ(ErrorOf("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
                    "\"\",\"\",\"ns\"\n"
                    "\"x\",\"k\",\"5\"\n"),
            "line 3, column 1 (ID): \"x\" is not a kernel ID");
  EXPECT_EQ(ErrorOf("\"ID\",\"Process ID\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n"),
            "line 1: the header has no \"Kernel Name\" column");
  // ncu leaves the trailing Rule columns out when empty (line 2 is fine); a row that
  // stops before Metric Value is not.
  EXPECT_EQ(ErrorOf("\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
                    "\"Metric Value\",\"Rule Name\",\"Rule Type\"\n"
                    "\"0\",\"k\",\"s\",\"dram__bytes.sum\",\"byte\",\"1,024\",\n"
                    "\"0\",\"k\",\"s\",\"dram__bytes.sum\"\n"),
            "line 3: 4 fields where the header (line 1) has 8 (at least 6 needed)");
  EXPECT_EQ(ErrorOf("\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
                    "\"Metric Value\"\n"
                    "\"0\",\"k\",\"s\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\","
                    "\"high\"\n"),
            "line 2, column 6 (Metric Value of sm__throughput.avg.pct_of_peak_sustained_elapsed): "
            "\"high\" is not a number");
  EXPECT_EQ(ErrorOf("\"ID\",\"Kernel Name\"\n\"0\",\"k\n"),
            "line 2, column 2: quoted field never closed");
  EXPECT_EQ(ErrorOf("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n"),
            "line 1: a header but no kernel rows");
  EXPECT_EQ(ErrorOf("kernel_name,gpu_time_duration_ns,stall_wait_ratio\nk,12,0.5,9\n"),
            "line 2: 4 fields where the header (line 1) has 3");
}

}  // namespace
}  // namespace opmap::analysis
