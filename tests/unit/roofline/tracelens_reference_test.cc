// The roofline groups against AMD TraceLens' performance model on the same real traces
// (../shared/reference/tracelens_perf/<trace>/roofline_ops.csv, TraceLens 0.1.0): for every
// group TraceLens models with numbers, opmap's executed FLOPs and bytes per instance equal
// TraceLens' within 1% and the roofline's expected class equals TraceLens' bound, except
// where docs/metrics.md says we differ on purpose:
//   - reductions: TraceLens never parses the reduced dims from the trace's Concrete Inputs
//     (they are strings) and counts the output as one element; opmap writes the reduced
//     shape, so its bytes are larger by (N_out − 1) elements;
//   - conv bias: TraceLens leaves aten::convolution's bias out of FLOPs and bytes; opmap
//     counts it (N·Cout·∏out FLOPs, Cout elements read), < 0.1% here.
// Then the coverage the issue asks for: on each trace ≥ 95% of GPU time in groups with
// FLOPs and bytes, and ≥ 95% classified.
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_replace.h"
#include "analysis/bottleneck/mapping_sheet.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/roofline/input_dims.h"
#include "analysis/roofline/op_args.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using Shapes = std::vector<std::vector<int64_t>>;
using Key = std::tuple<std::string, Shapes, std::vector<std::string>, std::vector<std::string>>;

Shapes ShapesOf(const std::string& json) {
  Shapes out;
  auto parsed = ParseInputDims(json);
  if (!parsed.ok()) return out;
  for (const ArgDims& a : *parsed) {
    if (a.is_list) {
      for (const auto& l : a.list) out.push_back(l);
    } else {
      out.push_back(a.dims);
    }
  }
  return out;
}

// TraceLens writes Python tuples: "((512,), (141, 512), ())" and "('c10::BFloat16', '')".
Shapes ShapesOfTuple(std::string t) {
  t = absl::StrReplaceAll(t, {{",)", ")"}});
  t = absl::StrReplaceAll(t, {{"(", "["}, {")", "]"}});
  return ShapesOf(t);
}
std::vector<std::string> QuotedStrings(const std::string& t, char quote) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = t.find(quote, i)) != std::string::npos) {
    const size_t end = t.find(quote, i + 1);
    if (end == std::string::npos) break;
    out.push_back(t.substr(i + 1, end - i - 1));
    i = end + 1;
  }
  return out;
}

struct TraceCase {
  const char* trace;
  const char* reference_dir;
  const char* envelope;  // the peaks TraceLens was given (reference/tracelens_perf/arch)
  // GPU-time share of operators whose cost the trace cannot give (fused MoE without its
  // expert weights, vLLM paged attention under a step annotation without the per-request
  // sums, as vLLM's own `execute_context_…`): the 95% target is met on the rest, and the
  // costed share is at least 0.95 − this.
  double not_derivable_share = 0;
};

const TraceCase kCases[] = {
    {"traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz",
     "reference/tracelens_perf/tl_h100_gaunernst_bert-small-uncased__1016001", "H100 SXM5 80GB"},
    {"traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
     "reference/tracelens_perf/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005", "H100 SXM5 80GB"},
    {"traces/tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz",
     "reference/tracelens_perf/tl_h100_facebook_timesformer-base-finetuned-k400__1016002",
     "H100 SXM5 80GB"},
    // No TraceLens reference (coverage only): a ViT image classifier on the same H100.
    {"traces/tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz", "", "H100 SXM5 80GB"},
    // vllm::moe_forward holds 52.1% of this trace's GPU time and unified attention 4.2%.
    {"traces/tl_b200_eager_trace.json.gz", "reference/tracelens_perf/tl_b200_eager_trace",
     "B200 HGX 180GB", 0.563},
};

struct Built {
  Trace trace;
  HardwareEnvelope envelope;
  MappingSheet sheet;
};

Built Build(const TraceCase& c) {
  absl::StatusOr<Trace> t =
      ImportKinetoBytes(testing::ReadFileOrDie(testing::SharedPath(c.trace)));
  EXPECT_TRUE(t.ok()) << t.status();
  Built b{*std::move(t), *EnvelopeForGpuName(c.envelope), {}};
  const MappingResult mapping = MapGpuEvents(b.trace);
  MappingSheetOptions options;
  options.envelope = &b.envelope;
  b.sheet = BuildMappingSheet(b.trace, mapping, options);
  return b;
}

class TraceLensReference : public ::testing::TestWithParam<TraceCase> {};

TEST_P(TraceLensReference, FlopsBytesAndBoundPerGroup) {
  const TraceCase& c = GetParam();
  if (c.reference_dir[0] == '\0') GTEST_SKIP() << c.trace << ": no TraceLens reference (coverage test only)";
  const std::string csv = std::string(c.reference_dir) + "/roofline_ops.csv";
  OPMAP_REQUIRE_SHARED(c.trace);
  OPMAP_REQUIRE_SHARED(csv);
  const Built b = Build(c);
  std::map<Key, const SheetGroup*> ours;
  for (const SheetGroup& g : b.sheet.groups) {
    Key k{g.op, ShapesOf(g.input_dims), {}, {}};
    if (auto t = ParseStringArray(g.input_type, "Input type"); t.ok()) std::get<2>(k) = *t;
    if (auto cc = ParseStringArray(g.concrete_inputs, "Concrete Inputs"); cc.ok()) {
      std::get<3>(k) = *cc;
    }
    ours[k] = &g;
  }
  int compared = 0, bounds = 0;
  for (const testing::CsvRow& row : testing::ReadCsv(testing::SharedPath(csv))) {
    if (row.at("has_perf_model") != "True" || row.at("gflops_per_instance").empty()) continue;
    const std::string& op = row.at("op_name");
    // TraceLens' Triton model reads torch.compile's cache files on the machine that ran the
    // job, not the trace; opmap has only the trace (docs/metrics.md).
    if (op.rfind("triton_", 0) == 0) continue;
    SCOPED_TRACE(op + " " + row.at("input_dims") + " " + row.at("concrete_inputs"));
    const Key k{op, ShapesOfTuple(row.at("input_dims")), QuotedStrings(row.at("input_type"), '\''),
                QuotedStrings(row.at("concrete_inputs"), '\'')};
    auto it = ours.find(k);
    ASSERT_NE(it, ours.end()) << "no opmap group for this TraceLens group";
    const SheetGroup& g = *it->second;
    ASSERT_TRUE(g.cost.flops && g.cost.bytes) << g.cost.missing;
    const double flops = *g.cost.flops / g.instances, bytes = *g.cost.bytes / g.instances;
    const double tl_flops = testing::ToDouble(row.at("gflops_per_instance")) * 1e9;
    EXPECT_NEAR(flops, tl_flops, 0.01 * tl_flops) << g.cost.formula;
    if (!row.at("bytes_per_instance").empty()) {
      const double tl_bytes = testing::ToDouble(row.at("bytes_per_instance"));
      if (g.cost.family == "reduction") {
        // On purpose (see the file comment): both read the N_in = FLOPs input elements;
        // TraceLens writes one output element, opmap the reduced shape's N_out ≤ N_in.
        const double eb = ElementBytes(g.figures.precision);
        EXPECT_NEAR(tl_bytes, flops * eb + eb, 1e-6 * tl_bytes) << "TraceLens' own rule";
        const double out = bytes - flops * eb;
        EXPECT_GT(out, 0) << g.cost.bytes_formula;
        EXPECT_LE(out, flops * eb) << g.cost.bytes_formula;
        EXPECT_EQ(std::fmod(out, eb), 0) << g.cost.bytes_formula;
      } else {
        EXPECT_NEAR(bytes, tl_bytes, 0.01 * tl_bytes) << g.cost.bytes_formula;
      }
    }
    if (!row.at("bound").empty()) {
      const BottleneckClass want = row.at("bound") == "COMPUTE_BOUND"
                                       ? BottleneckClass::kComputeBound
                                       : BottleneckClass::kMemoryBound;
      EXPECT_EQ(g.expected, want) << g.expected_basis << " (TraceLens spec "
                                  << row.at("compute_spec") << ")";
      ++bounds;
    }
    ++compared;
  }
  EXPECT_GT(compared, 5) << "TraceLens groups compared";
  EXPECT_GT(bounds, 5);
  std::cout << c.trace << ": " << compared << " TraceLens groups compared, " << bounds
            << " bounds\n";
}

TEST_P(TraceLensReference, CostedAndClassifiedCoverage) {
  const TraceCase& c = GetParam();
  OPMAP_REQUIRE_SHARED(c.trace);
  const Built b = Build(c);
  ASSERT_GT(b.sheet.mapped_ns, 0);
  const double costed = static_cast<double>(b.sheet.costed_ns) / b.sheet.mapped_ns;
  const double classified = static_cast<double>(b.sheet.classified_ns) / b.sheet.mapped_ns;
  std::cout << c.trace << ": FLOPs and bytes for " << 100 * costed << "% of GPU time, "
            << 100 * classified << "% classified, " << b.sheet.groups.size() << " groups\n";
  int64_t not_derivable_ns = 0;
  for (const SheetGroup& g : b.sheet.groups) {
    if ((!g.cost.flops || !g.cost.bytes) && (g.cost.family == "moe" || g.op.rfind("vllm::unified_attention", 0) == 0)) {
      not_derivable_ns += g.gpu_time_ns;
    }
  }
  const double not_derivable = static_cast<double>(not_derivable_ns) / b.sheet.mapped_ns;
  EXPECT_NEAR(not_derivable, c.not_derivable_share, 0.005);
  EXPECT_GE(costed, 0.95 - c.not_derivable_share);
  EXPECT_GE(costed / (1 - not_derivable), 0.95) << "of the GPU time the shapes can cost";
  EXPECT_GE(classified, 0.95);
  // Every classified group carries its evidence rows; unclassified ones name the missing
  // figure.
  for (const SheetGroup& g : b.sheet.groups) {
    EXPECT_FALSE(g.observed.evidence.empty()) << g.op;
    if (g.observed.cls == BottleneckClass::kUnclassified) {
      EXPECT_NE(g.observed.summary.find("missing"), std::string::npos) << g.op;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, TraceLensReference, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<TraceCase>& info) {
                           const std::string t = info.param.trace;
                           if (t.find("bert") != std::string::npos) return std::string("bert");
                           if (t.find("Qwen") != std::string::npos) return std::string("qwen");
                           if (t.find("timesformer") != std::string::npos) return std::string("timesformer");
                           if (t.find("Falconsai") != std::string::npos) return std::string("falconsai");
                           return std::string("b200");
                         });

}  // namespace
}  // namespace opmap::analysis
