#include "analysis/summary/modules.h"

#include <string>

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

class ModulesTest : public ::testing::Test {
 protected:
  int32_t AddRange(const char* name, RangeKind kind, int64_t start, int64_t end,
                   int64_t thread) {
    Range r;
    r.start_ns = start;
    r.dur_ns = end - start;
    r.name = trace_.strings.Intern(name);
    r.kind = kind;
    r.process = 1;
    r.thread = thread;
    trace_.ranges.push_back(r);
    return static_cast<int32_t>(trace_.ranges.size() - 1);
  }
  // A GPU event of `dur` ns mapped to operator range `range` (-1: unmapped).
  void AddEvent(int32_t range, int64_t dur) {
    GpuEvent g;
    g.start_ns = 10000 + static_cast<int64_t>(trace_.gpu_events.size()) * 100;
    g.dur_ns = dur;
    g.name = trace_.strings.Intern("kernel");
    trace_.gpu_events.push_back(g);
    EventMapping m;
    m.range = range;
    m.rule = range >= 0 ? MappingRule::kExternalId : MappingRule::kUnmapped;
    mapping_.events.push_back(m);
  }
  const ModuleStats* Find(const ModuleSummary& s, const std::string& name) {
    for (const ModuleStats& m : s.modules) {
      if (m.name == name) return &m;
    }
    ADD_FAILURE() << "no module " << name;
    return nullptr;
  }

  Trace trace_;
  MappingResult mapping_;
};

TEST_F(ModulesTest, InnermostModuleOnTheOperatorsThread) {
  const RangeKind nvtx = RangeKind::kNvtx;
  // Thread 7: an NVTX layer range around two operators, and a launch directly in it.
  int32_t layer0 = AddRange("decoder_layer.0", nvtx, 0, 100, 7);
  int32_t qkv7 = AddRange("demo::qkv_linear", nvtx, 10, 30, 7);
  int32_t softmax7 = AddRange("demo::softmax", nvtx, 40, 70, 7);
  // Thread 8: another layer; gelu lies in thread 7's layer by time but in no module on
  // its own thread.
  AddRange("decoder_layer.1", nvtx, 0, 50, 8);
  int32_t qkv8 = AddRange("demo::qkv_linear", nvtx, 5, 20, 8);
  int32_t gelu8 = AddRange("demo::gelu", nvtx, 60, 80, 8);
  // An FSDP hook range names its module in parentheses.
  AddRange("FSDP::pre_forward (blocks.12._checkpoint_wrapped_module)", nvtx, 100, 200, 8);
  int32_t copy8 = AddRange("aten::copy_", nvtx, 110, 120, 8);
  // emit_nvtx operator nesting is not a module; neither is a range enclosing nothing.
  AddRange("aten::linear", nvtx, 200, 260, 7);
  int32_t mm7 = AddRange("aten::mm", nvtx, 210, 250, 7);
  int32_t lonely7 = AddRange("lonely_range", nvtx, 300, 310, 7);
  // Kineto: nn.Module python functions, nested, one called twice.
  const RangeKind py = RangeKind::kPythonFunction;
  AddRange("nn.Module: BertLayer_0", py, 900, 1300, 9);
  AddRange("nn.Module: Linear_3", py, 1000, 1100, 9);
  int32_t addmm_a = AddRange("aten::addmm", RangeKind::kCpuOp, 1010, 1090, 9);
  int32_t softmax9 = AddRange("aten::softmax", RangeKind::kCpuOp, 1150, 1200, 9);
  AddRange("nn.Module: Linear_3", py, 1400, 1500, 9);
  int32_t addmm_b = AddRange("aten::addmm", RangeKind::kCpuOp, 1400, 1500, 9);  // same extent
  AddRange("not_a_module", py, 1390, 1510, 9);  // other python functions don't count

  AddEvent(qkv7, 5);
  AddEvent(softmax7, 7);
  AddEvent(layer0, 3);
  AddEvent(qkv8, 11);
  AddEvent(gelu8, 13);
  AddEvent(copy8, 17);
  AddEvent(mm7, 19);
  AddEvent(lonely7, 23);
  AddEvent(addmm_a, 29);
  AddEvent(addmm_b, 31);
  AddEvent(softmax9, 37);
  AddEvent(-1, 41);

  ModuleSummary s = SummarizeModules(trace_, mapping_);
  EXPECT_TRUE(s.unavailable.empty());
  // decoder_layer.0/.1, the FSDP hook, BertLayer_0 and two Linear_3 instances.
  EXPECT_EQ(s.module_range_count, 6);
  ASSERT_EQ(s.modules.size(), 5u);
  EXPECT_EQ(s.modules[0].name, "Linear_3");  // by GPU time, descending
  EXPECT_EQ(s.modules[0].module_type, "Linear");
  EXPECT_EQ(s.modules[0].count, 2);
  EXPECT_EQ(s.modules[0].gpu_time_ns, 29 + 31);
  EXPECT_DOUBLE_EQ(s.modules[0].instance_gpu_time_ns.p50, 30);
  EXPECT_EQ(Find(s, "BertLayer_0")->gpu_time_ns, 37);  // softmax only: addmm is Linear's
  EXPECT_EQ(Find(s, "blocks.12._checkpoint_wrapped_module")->gpu_time_ns, 17);
  EXPECT_EQ(Find(s, "blocks.12._checkpoint_wrapped_module")->module_type, "blocks");
  EXPECT_EQ(Find(s, "decoder_layer.0")->gpu_time_ns, 5 + 7 + 3);
  EXPECT_EQ(Find(s, "decoder_layer.0")->event_count, 3);
  EXPECT_EQ(Find(s, "decoder_layer.1")->gpu_time_ns, 11);

  EXPECT_EQ(s.events_with_module, 8);
  EXPECT_EQ(s.gpu_time_with_module_ns, 15 + 11 + 17 + 60 + 37);
  EXPECT_EQ(s.events_without_module, 3);  // gelu on thread 8, aten::mm, lonely_range
  EXPECT_EQ(s.gpu_time_without_module_ns, 13 + 19 + 23);
  EXPECT_EQ(s.events_unmapped, 1);
  EXPECT_EQ(s.gpu_time_unmapped_ns, 41);

  ASSERT_EQ(s.module_types.size(), 4u);
  EXPECT_EQ(s.module_types[0].module_type, "Linear");
  EXPECT_EQ(s.module_types[1].module_type, "BertLayer");
  EXPECT_EQ(s.module_types[2].module_type, "decoder_layer");
  EXPECT_EQ(s.module_types[2].modules, 2);
  EXPECT_EQ(s.module_types[2].count, 2);
  EXPECT_EQ(s.module_types[2].gpu_time_ns, 26);
  EXPECT_DOUBLE_EQ(s.module_types[2].instance_gpu_time_ns.p50, 13);  // {11, 15}
  EXPECT_EQ(s.module_types[3].module_type, "blocks");
}

// On equal extents the module range encloses the operator, whichever the trace lists first
// (the nesting sweep's own tie order is by index: the operator first here).
TEST_F(ModulesTest, AModuleEnclosesAnOperatorOfTheSameExtentListedBeforeIt) {
  const RangeKind py = RangeKind::kPythonFunction;
  const int32_t addmm = AddRange("aten::addmm", RangeKind::kCpuOp, 100, 200, 3);
  AddRange("nn.Module: Linear_0", py, 100, 200, 3);
  AddRange("nn.Module: MLP_0", py, 50, 250, 3);
  AddEvent(addmm, 7);
  const ModuleSummary s = SummarizeModules(trace_, mapping_);
  ASSERT_NE(Find(s, "Linear_0"), nullptr);
  EXPECT_EQ(Find(s, "Linear_0")->gpu_time_ns, 7);
  EXPECT_EQ(s.modules.size(), 1u);  // MLP_0 launched nothing of its own
}

TEST_F(ModulesTest, NoModuleRangesIsUnavailableNotZero) {
  int32_t op = AddRange("aten::mm", RangeKind::kCpuOp, 0, 10, 1);
  AddRange("ProfilerStep#3", RangeKind::kNvtx, 0, 20, 1);  // encloses, but is no module
  AddEvent(op, 5);
  ModuleSummary s = SummarizeModules(trace_, mapping_);
  EXPECT_EQ(s.unavailable, "the trace has no nn.Module or enclosing NVTX module ranges");
  EXPECT_TRUE(s.modules.empty());
  EXPECT_TRUE(s.module_types.empty());
  EXPECT_EQ(s.module_range_count, 0);
  EXPECT_EQ(s.gpu_time_without_module_ns, 5);
}

// TensorRT layer ranges launch their kernels themselves: the module is in the layer path.
TEST_F(ModulesTest, TensorRtLayerPathsNameTheirModule) {
  const RangeKind nvtx = RangeKind::kNvtx;
  int32_t conv = AddRange("/layer1/layer1.0/conv1/Conv + /layer1/layer1.0/relu/Relu", nvtx, 0,
                          10, 3);
  int32_t conv2 = AddRange("/layer1/layer1.1/conv1/Conv", nvtx, 20, 30, 3);
  int32_t gemm = AddRange("/fc/Gemm", nvtx, 40, 50, 3);
  int32_t bare = AddRange("/Flatten", nvtx, 60, 70, 3);  // no module around the op
  AddEvent(conv, 100);
  AddEvent(conv, 20);
  AddEvent(conv2, 50);
  AddEvent(gemm, 7);
  AddEvent(bare, 3);
  ModuleSummary s = SummarizeModules(trace_, mapping_);
  EXPECT_EQ(s.module_range_count, 3);
  EXPECT_EQ(Find(s, "layer1/layer1.0/conv1")->gpu_time_ns, 120);
  EXPECT_EQ(Find(s, "layer1/layer1.0/conv1")->module_type, "layer1.layer1.conv1");
  EXPECT_EQ(Find(s, "layer1/layer1.1/conv1")->gpu_time_ns, 50);
  EXPECT_EQ(Find(s, "fc")->gpu_time_ns, 7);
  EXPECT_EQ(s.events_without_module, 1);
  EXPECT_EQ(s.gpu_time_without_module_ns, 3);
  // Both conv1 modules are one type: 170 ns over 2 instances.
  bool found = false;
  for (const ModuleTypeStats& t : s.module_types) {
    if (t.module_type != "layer1.layer1.conv1") continue;
    found = true;
    EXPECT_EQ(t.gpu_time_ns, 170);
    EXPECT_EQ(t.count, 2);
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(TensorRtLayerModule("aten::linear").has_value());
}

TEST(ModuleNames, TypeDropsInstanceIndices) {
  auto parse = [](RangeKind kind, std::string_view name) {
    std::optional<ModuleName> m = ParseModuleName(kind, name);
    return m.has_value() ? m->name + " | " + m->module_type : std::string("-");
  };
  const RangeKind py = RangeKind::kPythonFunction;
  const RangeKind nvtx = RangeKind::kNvtx;
  EXPECT_EQ(parse(py, "nn.Module: Owlv2Attention_3"), "Owlv2Attention_3 | Owlv2Attention");
  EXPECT_EQ(parse(py, "nn.Module: Conv2d_12"), "Conv2d_12 | Conv2d");
  EXPECT_EQ(parse(py, "torch/nn/modules/linear.py(116): forward"), "-");
  EXPECT_EQ(parse(RangeKind::kCpuOp, "nn.Module: Linear_0"), "-");
  EXPECT_EQ(parse(nvtx, "FSDP::pre_forward (blocks.12._checkpoint_wrapped_module)"),
            "blocks.12._checkpoint_wrapped_module | blocks");
  EXPECT_EQ(parse(nvtx, "FSDP::pre_forward (encoder.block.9.layer.1)"),
            "encoder.block.9.layer.1 | encoder.block.layer");
  EXPECT_EQ(parse(nvtx, "blocks.12"), "blocks.12 | blocks");
  EXPECT_EQ(parse(nvtx, "decoder_layer_7"), "decoder_layer_7 | decoder_layer");
  EXPECT_EQ(parse(nvtx, "layer_norm"), "layer_norm | layer_norm");
  EXPECT_EQ(parse(nvtx, "aten::linear"), "-");
  EXPECT_EQ(parse(nvtx, "nccl:all_reduce"), "-");
  EXPECT_EQ(parse(nvtx, "FSDP::root_pre_forward"), "-");
  EXPECT_EQ(parse(nvtx, "ProfilerStep#4"), "-");
  EXPECT_EQ(parse(nvtx, "Optimizer.step#SGD.step"), "-");
  EXPECT_EQ(parse(nvtx, "record_param_comms"), "-");
  EXPECT_EQ(parse(nvtx, "FlashAttnFunc"), "FlashAttnFunc | FlashAttnFunc");
  // opmap_torch: a module path and its class; the class is the type, wherever the name
  // is read again (the collector's rollups take ModuleTypeOf of the name).
  EXPECT_EQ(parse(nvtx, "encoder.layer.3.attention (BertAttention)"),
            "encoder.layer.3.attention (BertAttention) | BertAttention");
  EXPECT_EQ(ModuleTypeOf("encoder.layer.3.attention (BertAttention)"), "BertAttention");
  EXPECT_EQ(parse(nvtx, "BertModel (BertModel)"), "BertModel (BertModel) | BertModel");
  // vLLM / SGLang layerwise paths (import/nvtx_names.h gives the path).
  EXPECT_EQ(parse(nvtx, "top.model.layers.0.mlp"), "top.model.layers.0.mlp | top.model.layers.mlp");
}

}  // namespace
}  // namespace opmap::analysis
