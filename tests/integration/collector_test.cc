// `opmap import`, `opmap query` and `opmap export` against the real `opmap-collector`
// binary on 127.0.0.1 with a real SQLite file:
//  - every trace of ../shared/traces imported and queried gives `opmap analyze`'s counts
//    and totals exactly and its percentiles within the sketch's stated α (see
//    ExpectPercentile for the rank-convention tolerance);
//  - the collector SIGKILLed three times during an import and restarted on the same
//    database: the import finishes by itself and nothing is lost or stored twice;
//  - re-importing the same file is deduplicated;
//  - `opmap export` gives a file the Kineto importer reads back, with every GPU event;
//  - `query latency --group-by module` (and module_type, module with layer_type / host)
//    gives `opmap analyze --format json`'s modules[] counts and GPU time exactly.

#include <sys/stat.h>
#include <signal.h>
#include <simdjson.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include "absl/strings/str_cat.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/summary/modules.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"
#include "tests/testing/shared_data.h"
#include "tests/integration/collector_test_fixture.h"

namespace opmap::testing {
namespace {

using ::testing::HasSubstr;
using collector_it::CollectorTest;
using collector_it::kQuantileNames;


TEST_F(CollectorTest, EverySharedTraceQueriesLikeAnalyze) {
  OPMAP_REQUIRE_SHARED("traces/MANIFEST.csv");
  for (const std::string& name : SharedTraceNames()) {
    SCOPED_TRACE(name);
    const std::string path = SharedPath("traces/" + name);
    Expected e = Analyze(path);
    RunResult imp = Import(path, {"--label", "trace=" + name});
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
    EXPECT_THAT(imp.out, HasSubstr(absl::StrCat(e.summary.gpu_event_count, " GPU events")));
    ExpectQueriesMatch(e, "trace=" + name);
  }
}

// Nsight Systems exports are imported streamed too (opened in place, tables merged by
// start): what the collector answers is what analyze computes on the whole export. Their
// two processes number launches alike, so kernels keep their process on the wire.
TEST_F(CollectorTest, NsightExportsQueryLikeAnalyze) {
  for (const std::string name : {"h100_2gpu_1s.sqlite", "mfu_2gpu_before.sqlite"}) {
    SCOPED_TRACE(name);
    OPMAP_REQUIRE_SHARED("nsys/" + name);
    const std::string path = SharedPath("nsys/" + name);
    Expected e = Analyze(path);
    RunResult imp = Import(path, {"--label", "trace=" + name, "--batch-records", "500"});
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
    EXPECT_THAT(imp.out, HasSubstr(absl::StrCat(e.summary.gpu_event_count, " GPU events")));
    ExpectQueriesMatch(e, "trace=" + name);
  }
}

TEST_F(CollectorTest, ReimportIsStoredOnce) {
  const std::string name = "tl_h100_gaunernst_bert-small-uncased__1016001.json.gz";
  OPMAP_REQUIRE_SHARED("traces/" + name);
  const std::string path = SharedPath("traces/" + name);
  Expected e = Analyze(path);
  RunResult first = Import(path, {"--label", "trace=bert", "--batch-records", "50"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  RunResult again = Import(path, {"--label", "trace=bert", "--batch-records", "50"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  // Same session id both times (derived from the file's bytes and the options).
  auto session = [](const std::string& out) { return out.substr(out.rfind("session ")); };
  EXPECT_EQ(session(first.out), session(again.out));
  EXPECT_GT(collector_->Metric("opmap_collector_duplicates_total"), 0);
  LatencyResult all = Latency("kernel", {}, "trace=bert");
  ASSERT_EQ(all.rows.size(), 1u);
  EXPECT_EQ(all.rows[0].count, e.summary.gpu_event_count);
  EXPECT_EQ(all.rows[0].sum_ns, e.summary.gpu_time_ns);
}

// A Kineto file is streamed to the collector, but only after it has been read through
// once: a trace broken near its end (the 2,000th of 2,001 events) is refused with the event
// named, exit 2, and the collector holds nothing of it.
TEST_F(CollectorTest, TraceBrokenNearItsEndSendsNothing) {
  std::string json = R"({"traceEvents": [)";
  for (int i = 0; i < 1000; ++i) {
    absl::StrAppend(&json, i ? "," : "",
                    R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)",
                    10 * i, R"(,"dur":2,"args":{"correlation":)", i + 1, "}},",
                    R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)", 10 * i + 3,
                    R"(,"dur":4,"args":{"device":0,"stream":7,"correlation":)", i + 1, "}}");
  }
  absl::StrAppend(&json, R"(,{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":99999,"dur":"abc","args":{"device":0,"stream":7}}]})");
  const std::string path = dir_.File("broken.json");
  WriteFileOrDie(path, json);
  RunResult r = Import(path, {"--label", "trace=broken", "--batch-records", "50"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("traceEvents[2000]"));
  EXPECT_THAT(r.err, HasSubstr("\"dur\""));
  LatencyResult none = Latency("kernel", {}, "trace=broken");
  EXPECT_TRUE(none.rows.empty() || none.rows[0].count == 0);
  EXPECT_EQ(collector_->Metric("opmap_collector_batches_total"), 0);
}

// Group commit (collector/group_commit.h): four imports at once put batches of four
// streams in one transaction; the collector is SIGKILLed twice mid-way (a group in
// flight is lost whole, none of it acknowledged) and restarted. Each import's trace is
// then stored exactly: nothing lost, nothing twice.
TEST_F(CollectorTest, ExportReadsBackWithEveryGpuEvent) {
  const std::string name = "tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
  OPMAP_REQUIRE_SHARED("traces/" + name);
  const std::string path = SharedPath("traces/" + name);
  Expected e = Analyze(path);
  RunResult imp = Import(path, {"--label", "trace=qwen", "--format", "json"});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(imp.out);
  const std::string session{std::string_view(doc["session_id"])};
  EXPECT_EQ(int64_t(doc["gpu_events"]), e.summary.gpu_event_count);

  // Another trace in the same store: --session must leave it out.
  RunResult other = Import(
      SharedPath("traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz"),
      {"--label", "trace=bert"});
  ASSERT_EQ(other.exit_code, 0) << other.err;

  const std::string out = dir_.File("qwen.json");
  WriteFileOrDie(out, "old contents");
  RunResult exp = Opmap({"export", "--collector", collector_->address(), "--token",
                         kAnalystToken, "--session", session, "--out", out},
                        dir_.path());
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  EXPECT_THAT(exp.out, HasSubstr("exported "));
  absl::StatusOr<analysis::Trace> back = analysis::ImportKinetoBytes(ReadFileOrEmpty(out));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->gpu_events.size(), e.trace.gpu_events.size());
  int64_t gpu_time = 0;
  for (const analysis::GpuEvent& g : back->gpu_events) gpu_time += g.dur_ns;
  EXPECT_EQ(gpu_time, e.summary.gpu_time_ns);
  // No temporary file left next to it.
  int entries = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_.path())) {
    entries += f.path().filename().string().rfind("qwen.json", 0) == 0;
  }
  EXPECT_EQ(entries, 1);

  // A failed export leaves the old file alone: wrong role.
  WriteFileOrDie(out, "old contents");
  RunResult denied = Opmap({"export", "--collector", collector_->address(), "--token",
                            kAgentToken, "--out", out},
                           dir_.path());
  EXPECT_EQ(denied.exit_code, 2) << denied.err;
  EXPECT_THAT(denied.err, HasSubstr("PERMISSION_DENIED"));
  EXPECT_EQ(ReadFileOrEmpty(out), "old contents");
}

// What `opmap analyze --format json` says of one module (or module type).
struct AnalyzedModule {
  int64_t event_count = 0;
  int64_t gpu_time_ns = 0;
};

// The modules of bert-small and Qwen1.5-0.5B (nn.Module: X ranges) through the
// collector: per module, the GPU events' count and summed time equal analyze's modules[]
// exactly; the "" row holds the events outside any module (mapped or not: Qwen has 509
// unmapped, bert-small none), so the rows sum to every GPU event; percentiles within α
// of the exact per-module kernel durations.
// A graph replay merged with its capture (`--capture`): the collector's answers by
// module type and by operator are analyze's, since the merged trace travels as any other.
TEST_F(CollectorTest, MergedGraphReplayQueriesLikeAnalyze) {
  struct Case {
    const char* replay;
    const char* capture;
  } cases[] = {
      {"traces/inference/vllm_decode_full/graph_execution.json.gz",
       "traces/inference/vllm_decode_full/capture_traces"},
      {"traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
       "traces/inference/sglang_decode/capture_traces"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.replay);
    OPMAP_REQUIRE_SHARED(c.replay);
    const std::string replay = SharedPath(c.replay), capture = SharedPath(c.capture);
    const std::string label = std::string("trace=") + c.replay;
    RunResult a = Opmap({"analyze", replay, "--capture", capture, "--format", "json", "--quiet"},
                        dir_.path());
    ASSERT_EQ(a.exit_code, 0) << a.err;
    std::map<std::string, std::pair<int64_t, int64_t>> types, ops;  // count, GPU time ns
    int64_t graph_node_events = 0;
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(a.out);
    for (simdjson::dom::element m : simdjson::dom::array(doc["module_types"])) {
      types[std::string(std::string_view(m["module_type"]))] = {
          int64_t(m["event_count"]), UsToNs(double(m["gpu_time_us"]))};
    }
    for (simdjson::dom::element o : simdjson::dom::array(doc["operators"])) {
      ops[std::string(std::string_view(o["name"]))] = {int64_t(o["count"]),
                                                       UsToNs(double(o["gpu_time_us"]))};
    }
    graph_node_events = int64_t(doc["mapping"]["by_rule"]["graph_node"]);
    ASSERT_GT(graph_node_events, 400) << "the merge placed the replayed kernels";
    ASSERT_GE(types.size(), 2u);

    RunResult imp = Import(replay, {"--capture", capture, "--label", label});
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
    LatencyResult by_type = Latency("kernel", {"module_type"}, label);
    size_t typed_rows = 0;
    for (const LatencyRow& r : by_type.rows) {
      if (r.key[0].empty()) continue;  // outside any module
      SCOPED_TRACE(r.key[0]);
      ASSERT_TRUE(types.contains(r.key[0]));
      EXPECT_EQ(r.count, types[r.key[0]].first);
      EXPECT_EQ(r.sum_ns, types[r.key[0]].second);
      ++typed_rows;
    }
    EXPECT_EQ(typed_rows, types.size());
    LatencyResult by_op = Latency("operator", {"operator"}, label);
    ASSERT_EQ(by_op.rows.size(), ops.size());
    for (const LatencyRow& r : by_op.rows) {
      SCOPED_TRACE(r.key[0]);
      ASSERT_TRUE(ops.contains(r.key[0]));
      EXPECT_EQ(r.count, ops[r.key[0]].first);
      EXPECT_EQ(r.sum_ns, ops[r.key[0]].second);
    }
  }
}

TEST_F(CollectorTest, GroupByModuleMatchesAnalyze) {
  for (const std::string& name : {std::string("tl_h100_gaunernst_bert-small-uncased__1016001.json.gz"),
                                  std::string("tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")}) {
    SCOPED_TRACE(name);
    ExpectModulesMatch(name);
    if (HasFatalFailure()) return;
  }
}

}  // namespace

void collector_it::CollectorTest::ExpectModulesMatch(const std::string& name) {
  OPMAP_REQUIRE_SHARED("traces/" + name);
  const std::string path = SharedPath("traces/" + name);
  const std::string label = "trace=" + name;
  const Expected e = Analyze(path);

  // analyze's own JSON: modules[], module_types[], module_attribution.
  RunResult a = Opmap({"analyze", path, "--format", "json", "--quiet"}, dir_.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  std::map<std::string, AnalyzedModule> modules, types;
  int64_t without_events = 0, without_ns = 0, unmapped_events = 0, unmapped_ns = 0;
  {
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(a.out);
    for (simdjson::dom::element m : simdjson::dom::array(doc["modules"])) {
      AnalyzedModule& am = modules[std::string(std::string_view(m["name"]))];
      am.event_count = int64_t(m["event_count"]);
      am.gpu_time_ns = UsToNs(double(m["gpu_time_us"]));
    }
    for (simdjson::dom::element m : simdjson::dom::array(doc["module_types"])) {
      AnalyzedModule& am = types[std::string(std::string_view(m["module_type"]))];
      am.event_count = int64_t(m["event_count"]);
      am.gpu_time_ns = UsToNs(double(m["gpu_time_us"]));
    }
    simdjson::dom::element at = doc["module_attribution"];
    without_events = int64_t(at["events_without_module"]);
    without_ns = UsToNs(double(at["gpu_time_without_module_us"]));
    unmapped_events = int64_t(at["events_unmapped"]);
    unmapped_ns = UsToNs(double(at["gpu_time_unmapped_us"]));
  }
  ASSERT_GT(modules.size(), 10u) << "the trace has nn.Module ranges";
  const size_t none_rows = without_events + unmapped_events > 0 ? 1 : 0;

  RunResult imp = Import(path, {"--label", label});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;

  // Exact kernel durations per module, from the same attribution, for the percentiles.
  const analysis::ModuleAttribution attribution = analysis::AttributeModules(e.trace);
  std::map<std::string, std::vector<double>> durations;
  for (size_t i = 0; i < e.trace.gpu_events.size(); ++i) {
    const int32_t op = e.mapping.events[i].range;
    const int32_t m = op >= 0 ? attribution.module_of[op] : -1;
    durations[m >= 0 ? attribution.names[m]->name : ""].push_back(
        static_cast<double>(e.trace.gpu_events[i].dur_ns));
  }
  for (auto& [k, v] : durations) std::sort(v.begin(), v.end());

  // Kernel subject by module.
  LatencyResult by_module = Latency("kernel", {"module"}, label);
  EXPECT_TRUE(by_module.unavailable.empty());
  ASSERT_EQ(by_module.rows.size(), modules.size() + none_rows);
  int64_t count = 0, sum = 0;
  bool saw_none = false;
  for (const LatencyRow& r : by_module.rows) {
    SCOPED_TRACE(r.key[0]);
    count += r.count;
    sum += r.sum_ns;
    if (r.key[0].empty()) {
      saw_none = true;
      EXPECT_EQ(r.count, without_events + unmapped_events);
      EXPECT_EQ(r.sum_ns, without_ns + unmapped_ns);
    } else {
      ASSERT_TRUE(modules.contains(r.key[0]));
      EXPECT_EQ(r.count, modules[r.key[0]].event_count);
      EXPECT_EQ(r.sum_ns, modules[r.key[0]].gpu_time_ns);
    }
    const std::vector<double>& d = durations[r.key[0]];
    ASSERT_EQ(static_cast<int64_t>(d.size()), r.count);
    EXPECT_EQ(r.min_ns, static_cast<int64_t>(d.front()));
    EXPECT_EQ(r.max_ns, static_cast<int64_t>(d.back()));
    for (size_t q = 0; q < kQuantiles.size(); ++q) {
      ExpectPercentile(r.quantile_ns[q], d, kQuantiles[q], d[LowerRank(kQuantiles[q], d.size())],
                       "module " + r.key[0]);
    }
  }
  EXPECT_EQ(saw_none, none_rows == 1);
  EXPECT_EQ(count, e.summary.gpu_event_count);
  EXPECT_EQ(sum, e.summary.gpu_time_ns);

  // By module type: analyze's module_types[].
  LatencyResult by_type = Latency("kernel", {"module_type"}, label);
  ASSERT_EQ(by_type.rows.size(), types.size() + none_rows);
  for (const LatencyRow& r : by_type.rows) {
    if (r.key[0].empty()) {
      EXPECT_EQ(r.count, without_events + unmapped_events);
      continue;
    }
    ASSERT_TRUE(types.contains(r.key[0])) << r.key[0];
    EXPECT_EQ(r.count, types[r.key[0]].event_count) << r.key[0];
    EXPECT_EQ(r.sum_ns, types[r.key[0]].gpu_time_ns) << r.key[0];
  }

  // Module with layer type and host: the per-module sums of the finer rows are the same.
  LatencyResult fine = Latency("kernel", {"host", "module", "layer_type"}, label);
  std::map<std::string, AnalyzedModule> merged;
  for (const LatencyRow& r : fine.rows) {
    merged[r.key[1]].event_count += r.count;
    merged[r.key[1]].gpu_time_ns += r.sum_ns;
  }
  ASSERT_EQ(merged.size(), by_module.rows.size());
  EXPECT_GT(fine.rows.size(), by_module.rows.size());
  for (const LatencyRow& r : by_module.rows) {
    EXPECT_EQ(merged[r.key[0]].event_count, r.count) << r.key[0];
    EXPECT_EQ(merged[r.key[0]].gpu_time_ns, r.sum_ns) << r.key[0];
  }

  // Operator instances' GPU time by module: the same time per module; the "" row is
  // the mapped time outside modules (unmapped events have no operator instance).
  LatencyResult ops = Latency("operator", {"module"}, label);
  ASSERT_EQ(ops.rows.size(), modules.size() + (without_events > 0 ? 1 : 0));
  count = sum = 0;
  for (const LatencyRow& r : ops.rows) {
    count += r.count;
    sum += r.sum_ns;
    EXPECT_EQ(r.sum_ns, r.key[0].empty() ? without_ns : modules[r.key[0]].gpu_time_ns)
        << r.key[0];
  }
  EXPECT_EQ(count, e.operator_instance_count);
  EXPECT_EQ(sum, e.operator_gpu_time_ns);

  // Operator ranges on the host by module: every range counted once.
  LatencyResult cpu_all = Latency("operator-cpu", {}, label);
  LatencyResult cpu = Latency("operator-cpu", {"module"}, label);
  ASSERT_EQ(cpu_all.rows.size(), 1u);
  count = sum = 0;
  for (const LatencyRow& r : cpu.rows) count += r.count, sum += r.sum_ns;
  EXPECT_EQ(count, cpu_all.rows[0].count);
  EXPECT_EQ(sum, cpu_all.rows[0].sum_ns);

  // Requests have no module.
  RunResult bad = Query({"latency", "--of", "request", "--group-by", "module"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("INVALID_ARGUMENT"));

  // The table names the row outside modules.
  std::vector<std::string> args = {"query", "latency", "--group-by", "module", "--label",
                                   label};
  for (auto& c : Conn(kAnalystToken)) args.push_back(c);
  RunResult t = Opmap(args, dir_.path());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  if (none_rows == 1) {
    EXPECT_THAT(t.out, HasSubstr("(no module)"));
  } else {
    EXPECT_THAT(t.out, ::testing::Not(HasSubstr("(no module)")));
  }
  EXPECT_THAT(t.out, HasSubstr(by_module.rows[0].key[0].empty()
                                   ? std::string("(no module)")
                                   : by_module.rows[0].key[0].substr(0, 30)));
}

}  // namespace opmap::testing
