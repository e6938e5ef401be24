// Modules on real traces: the H100 Kineto traces (nn.Module python functions) and an
// Nsight Systems export with FSDP hook ranges (../shared). Every mapped GPU event is
// counted once, in a module or outside any; one module is recomputed by hand here.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/report/analyze_report.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/trace_summary.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using ::opmap::testing::ReadFileOrDie;
using ::opmap::testing::SharedPath;

struct Loaded {
  Trace trace;
  MappingResult mapping;
  ModuleSummary modules;
};

Loaded Load(const std::string& relative, bool nsys = false) {
  std::string bytes = ReadFileOrDie(SharedPath(relative));
  absl::StatusOr<Trace> trace = nsys ? ImportNsysSqlite(bytes) : ImportKinetoBytes(bytes);
  EXPECT_TRUE(trace.ok()) << relative << ": " << trace.status();
  Loaded l{std::move(trace).value(), {}, {}};
  l.mapping = MapGpuEvents(l.trace);
  l.modules = SummarizeModules(l.trace, l.mapping);
  return l;
}

// Per-module time plus the mapped time outside any module is the mapped GPU time, exactly.
void ExpectAttributionAddsUp(const Loaded& l) {
  int64_t mapped_ns = 0, unmapped_ns = 0, mapped_events = 0;
  for (size_t i = 0; i < l.trace.gpu_events.size(); ++i) {
    if (l.mapping.events[i].range >= 0) {
      mapped_ns += l.trace.gpu_events[i].dur_ns;
      ++mapped_events;
    } else {
      unmapped_ns += l.trace.gpu_events[i].dur_ns;
    }
  }
  const ModuleSummary& s = l.modules;
  int64_t modules_ns = 0, modules_events = 0, types_ns = 0;
  for (const ModuleStats& m : s.modules) {
    modules_ns += m.gpu_time_ns;
    modules_events += m.event_count;
  }
  for (const ModuleTypeStats& t : s.module_types) types_ns += t.gpu_time_ns;
  EXPECT_EQ(modules_ns, s.gpu_time_with_module_ns);
  EXPECT_EQ(types_ns, s.gpu_time_with_module_ns);
  EXPECT_EQ(modules_ns + s.gpu_time_without_module_ns, mapped_ns);
  EXPECT_EQ(modules_events + s.events_without_module, mapped_events);
  EXPECT_EQ(s.gpu_time_unmapped_ns, unmapped_ns);
}

const char* const kH100Traces[] = {
    "tl_h100_gaunernst_bert-small-uncased__1016001.json.gz",
    "tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz",
    "tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz",
};

TEST(ModulesOnH100, ModuleTimeAddsUpToMappedTime) {
  for (const char* file : kH100Traces) {
    SCOPED_TRACE(file);
    OPMAP_REQUIRE_SHARED(std::string("traces/") + file);
    Loaded l = Load(std::string("traces/") + file);
    EXPECT_TRUE(l.modules.unavailable.empty());
    EXPECT_GT(l.modules.module_range_count, 0);
    ExpectAttributionAddsUp(l);
  }
}

// The hand check, independent of modules.cc: the GPU events mapped to operator ranges that
// lie inside the module's range on its thread, minus those inside an inner nn.Module range.
int64_t HandComputedSelfTime(const Trace& trace, const MappingResult& mapping,
                             const std::string& module, int64_t* instances) {
  auto inside = [](const Range& inner, const Range& outer) {
    return inner.process == outer.process && inner.thread == outer.thread &&
           outer.start_ns <= inner.start_ns && inner.end_ns() <= outer.end_ns();
  };
  auto is_module = [&](const Range& r) {
    return r.kind == RangeKind::kPythonFunction &&
           trace.strings.Get(r.name).starts_with("nn.Module: ");
  };
  int64_t total = 0;
  *instances = 0;
  for (const Range& m : trace.ranges) {
    if (!is_module(m) || trace.strings.Get(m.name) != "nn.Module: " + module) continue;
    ++*instances;
    for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
      int32_t op = mapping.events[i].range;
      if (op < 0 || !inside(trace.ranges[op], m)) continue;
      bool in_submodule = false;
      for (const Range& sub : trace.ranges) {
        if (&sub != &m && is_module(sub) && inside(sub, m) && inside(trace.ranges[op], sub)) {
          in_submodule = true;
        }
      }
      if (!in_submodule) total += trace.gpu_events[i].dur_ns;
    }
  }
  return total;
}

const ModuleStats* FindModule(const ModuleSummary& s, const std::string& name) {
  for (const ModuleStats& m : s.modules) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

TEST(ModulesOnH100, BertSelfAttentionByHand) {
  const std::string file = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";
  OPMAP_REQUIRE_SHARED(file);
  Loaded l = Load(file);
  // nn.Module: BertSdpaSelfAttention_0 holds the query/key/value Linear modules (their
  // addmm kernels are Linear_k's) and, itself, one flash-attention kernel of 10.080 µs:
  // eager attention is "attention" by module whatever its kernels' layer types.
  int64_t instances = 0;
  int64_t by_hand = HandComputedSelfTime(l.trace, l.mapping, "BertSdpaSelfAttention_0", &instances);
  EXPECT_EQ(by_hand, 10080);
  EXPECT_EQ(instances, 1);
  const ModuleStats* m = FindModule(l.modules, "BertSdpaSelfAttention_0");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->module_type, "BertSdpaSelfAttention");
  EXPECT_EQ(m->count, 1);
  EXPECT_EQ(m->event_count, 1);
  EXPECT_EQ(m->gpu_time_ns, 10080);
  // The whole model: 84 nn.Module ranges; every one of the 61 GPU events is in one.
  EXPECT_EQ(l.modules.module_range_count, 84);
  EXPECT_EQ(l.modules.events_with_module, 61);
  EXPECT_EQ(l.modules.gpu_time_with_module_ns, 309437);
  EXPECT_EQ(l.modules.events_without_module, 0);
}

TEST(ModulesOnH100, QwenAttentionByHand) {
  const std::string file = "traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
  OPMAP_REQUIRE_SHARED(file);
  Loaded l = Load(file);
  // Eager attention (matmul + softmax kernels, rotary, ...) under nn.Module:
  // Qwen2Attention_0, without its q/k/v/o Linear submodules: 15 GPU events, 521.792 µs
  // (also found from the raw JSON by External id, outside opmap).
  int64_t instances = 0;
  int64_t by_hand = HandComputedSelfTime(l.trace, l.mapping, "Qwen2Attention_0", &instances);
  const ModuleStats* m = FindModule(l.modules, "Qwen2Attention_0");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->gpu_time_ns, by_hand);
  EXPECT_EQ(m->count, instances);
  EXPECT_EQ(by_hand, 521792);
  EXPECT_EQ(m->event_count, 15);
}

// analyze's JSON and CSV: rows when the trace names modules; `"modules":[]` and the reason
// when it names none (HTA's alexnet trace has no python_function events).
TEST(ModulesReport, JsonAndCsvRowsOrUnavailable) {
  const std::string bert = "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";
  const std::string alexnet = "traces/hta_alexnet_a100.json.gz";
  OPMAP_REQUIRE_SHARED(bert);
  OPMAP_REQUIRE_SHARED(alexnet);
  Loaded l = Load(bert);
  TraceSummary s = Summarize(l.trace, l.mapping);
  std::string json = RenderAnalyzeJson(s, {.source = "bert", .top = 1});
  EXPECT_NE(json.find(R"("modules":[{"name":"Linear_25","module_type":"Linear","count":1,)"
                      R"("event_count":1,"gpu_time_us":41.280,"p50_us":41.280,)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("module_types":[{"module_type":"Linear","modules":26,"count":26,)"),
            std::string::npos);
  EXPECT_EQ(json.find("modules_unavailable"), std::string::npos);
  std::string csv = RenderAnalyzeCsv(s, {.source = "bert"}, /*with_header=*/false);
  EXPECT_NE(csv.find("bert,module,BertSdpaSelfAttention_0,BertSdpaSelfAttention,1,10.080,"),
            std::string::npos);
  EXPECT_NE(csv.find("bert,module_type,Linear,Linear,26,197.598,"), std::string::npos);

  Loaded a = Load(alexnet);
  std::string none = RenderAnalyzeJson(Summarize(a.trace, a.mapping), {.source = "alexnet"});
  EXPECT_NE(none.find(R"("modules":[],"module_types":[],)"), std::string::npos) << none;
  EXPECT_NE(none.find(R"("modules_unavailable":"the trace has no nn.Module or enclosing )"
                      R"(NVTX module ranges")"),
            std::string::npos);
}

// Nsight Systems, FSDP: `FSDP::pre_forward (blocks.N._checkpoint_wrapped_module)` ranges
// enclose the parameter copies they launch; the type drops the index and the wrapper.
TEST(ModulesOnNsys, FsdpHookRangesAreModules) {
  const std::string db = "nsys/mfu_2gpu_before.sqlite";
  OPMAP_REQUIRE_SHARED(db);
  Loaded l = Load(db, /*nsys=*/true);
  ExpectAttributionAddsUp(l);
  const ModuleTypeStats* blocks = nullptr;
  for (const ModuleTypeStats& t : l.modules.module_types) {
    if (t.module_type == "blocks") blocks = &t;
  }
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(blocks->modules, 17);  // blocks.3 .. blocks.19 in the window
  EXPECT_EQ(blocks->count, 34);    // one pre_forward per block on each of 2 ranks
  EXPECT_EQ(blocks->gpu_time_ns, 6956788);
}

}  // namespace
}  // namespace opmap::analysis
