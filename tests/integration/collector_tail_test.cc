// `opmap query tail` against `opmap analyze` on one capture file of the real demo with a
// slowed layer: the collector, fed by `opmap import`, answers from its request-breakdown
// rollups (latency buckets, tail_buckets.h) what analyze answers from every request —
// the same request count and, over the same tail, the same largest components. A bucket
// boundary can take a few more requests into the collector's tail (how many depends on
// how the demo's run queued, i.e. on the machine's load); then analyze's leading
// component must still hold at least half its excess there.
#include <simdjson.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/agent_fixture.h"
#include "tests/integration/collector_test_fixture.h"

namespace opmap::testing::collector_it {
namespace {

struct Top {
  int64_t requests = 0;
  std::string module_kind, module_label, type_kind, type_label;
  double excess_us = 0, share = 0;
  int64_t tail_requests = 0;
};

// The p99 explanation of key "request" in a "tail" object.
Top TopOf(simdjson::dom::element tail) {
  Top t;
  t.requests = int64_t(tail["requests"]);
  for (simdjson::dom::element e : tail["explanations"].get_array()) {
    if (std::string_view(e["key"]) != "request" || double(e["quantile"]) != 0.99) continue;
    simdjson::dom::element m = e["by_module"].at(0), l = e["by_layer_type"].at(0);
    t.module_kind = std::string(std::string_view(m["kind"]));
    t.module_label = std::string(std::string_view(m["label"]));
    t.type_kind = std::string(std::string_view(l["kind"]));
    t.type_label = std::string(std::string_view(l["label"]));
    t.excess_us = double(m["excess_us"]);
    t.share = double(m["share"]);
    t.tail_requests = int64_t(e["tail_requests"]);
  }
  return t;
}

// The excess (a mean per tail request, µs) of by_module component (kind, label) in the
// p99 explanation of key "request"; -1 when the tail does not list it.
double ModuleExcessOf(simdjson::dom::element tail, const std::string& kind,
                      const std::string& label) {
  for (simdjson::dom::element e : tail["explanations"].get_array()) {
    if (std::string_view(e["key"]) != "request" || double(e["quantile"]) != 0.99) continue;
    for (simdjson::dom::element m : e["by_module"].get_array()) {
      if (std::string_view(m["kind"]) == kind && std::string_view(m["label"]) == label) {
        return double(m["excess_us"]);
      }
    }
  }
  return -1;
}

class CollectorTailTest : public CollectorTest {};

TEST_F(CollectorTailTest, QueryTailAnswersAsAnalyzeDoes) {
  const std::string capture = dir_.File("slow.opcap");
  RunResult demo = opmap::testing::Run({DemoBin(), "--requests", "300", "--rate", "30", "--workers", "2",
                        "--slow-every", "50", "--slow-layer", "1", "--slow-repeat", "300"},
                       dir_.path(),
                       {"NVTX_INJECTION64_PATH=" + InjectLib(), "OPMAP_CAPTURE_FILE=" + capture,
                        "OPMAP_CAPTURE_SECONDS=120"},
                       absl::Seconds(120));
  ASSERT_EQ(demo.exit_code, 0) << demo.err;

  RunResult a = Opmap({"analyze", capture, "--format", "json"}, dir_.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  simdjson::dom::parser parser;
  const Top analyzed = TopOf(parser.parse(a.out)["tail"]);
  ASSERT_GE(analyzed.requests, 290);
  ASSERT_FALSE(analyzed.module_kind.empty()) << a.out.substr(0, 400);
  // Which component leads is the machine's business (this test runs beside others: their
  // load can make queueing the tail); that both answers agree is this test's.
  const std::string top_row = "| " + analyzed.module_kind + " | " +
                              (analyzed.module_label.empty() ? "-" : analyzed.module_label);

  // The handoff report carries the same explanation.
  RunResult md = Opmap({"analyze", capture, "--report", "md", "--output", dir_.File("h.md")},
                       dir_.path());
  ASSERT_EQ(md.exit_code, 0) << md.err;
  const std::string report = ReadFileOrEmpty(dir_.File("h.md"));
  EXPECT_NE(report.find("## Tail latency"), std::string::npos);
  EXPECT_NE(report.find(top_row), std::string::npos)
      << top_row << "\n" << report.substr(report.find("## Tail latency"));

  const double breakdown_before =
      collector_->MetricValue("opmap_collector_request_breakdown_cpu_seconds_total");
  ASSERT_GE(breakdown_before, 0) << "the collector exposes the breakdown's CPU";
  RunResult imp = Import(capture, {"--label", "trace=tail"});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  // The imported session's 300 requests were broken down, and the collector counted the cost.
  EXPECT_GT(collector_->MetricValue("opmap_collector_request_breakdown_cpu_seconds_total"),
            breakdown_before);

  // The slowest exemplar, exported alone: the events that start within its extent.
  {
    simdjson::dom::parser p2;
    simdjson::dom::element ex = p2.parse(a.out)["tail"]["explanations"].at(0)["exemplars"].at(0);
    const int64_t id = int64_t(ex["request_id"]), start = int64_t(ex["start_ns"]);
    const double extent_us = double(ex["extent_us"]);
    // The collector's own exemplars (each window's slowest): the same request first, with
    // its session.
    RunResult q2 = Query({"tail", "--label", "trace=tail"});
    ASSERT_EQ(q2.exit_code, 0) << q2.err;
    simdjson::dom::parser p3;
    simdjson::dom::element qex =
        p3.parse(q2.out)["groups"].at(0)["tail"]["explanations"].at(0)["exemplars"].at(0);
    EXPECT_EQ(int64_t(qex["request_id"]), id);
    EXPECT_EQ(int64_t(qex["start_ns"]), start);
    const std::string session_key = std::string(std::string_view(qex["session"]));
    const std::string session = session_key.substr(session_key.find('/') + 1);
    RunResult exp = Opmap({"export", "--collector", collector_->address(), "--token",
                           kAnalystToken, "--session", session, "--request",
                           std::to_string(id), "--out", dir_.File("exemplar.json"), "--quiet"},
                          dir_.path());
    ASSERT_EQ(exp.exit_code, 0) << exp.err;
    simdjson::dom::parser p4;
    simdjson::dom::element trace = p4.load(dir_.File("exemplar.json"));
    int64_t events = 0, requests = 0;
    for (simdjson::dom::element e : trace["traceEvents"].get_array()) {
      if (std::string_view(e["ph"]) != "X") continue;
      ++events;
      // Epoch microseconds near 1.8e15 are doubles 0.25 us apart (and start_ns as a double
      // is 256 ns apart), so the bounds are checked to half a microsecond.
      const double ts_us = double(e["ts"]);
      const double start_us = double(start / 1000) + double(start % 1000) / 1000.0;
      EXPECT_GE(ts_us, start_us - 0.5);
      EXPECT_LE(ts_us, start_us + extent_us + 0.5);
      if (std::string_view(e["name"]) == "request") ++requests;
    }
    EXPECT_GE(events, 20) << "the request, its forward, layers and operators";
    EXPECT_GE(requests, 1);
    RunResult missing = Opmap({"export", "--collector", collector_->address(), "--token",
                               kAnalystToken, "--session", session, "--request", "99999",
                               "--out", dir_.File("none.json")},
                              dir_.path());
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find("no request range carries payload 99999"), std::string::npos)
        << missing.err;
  }
  RunResult q = Query({"tail", "--label", "trace=tail", "--group-by", "host"});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  simdjson::dom::parser qparser;
  simdjson::dom::element doc = qparser.parse(q.out);
  simdjson::dom::array groups = doc["groups"];
  ASSERT_EQ(groups.size(), 1u) << q.out.substr(0, 400);
  const Top queried = TopOf(groups.at(0)["tail"]);
  // From buckets: per-request facts the rows do not hold are left out, not printed as 0.
  EXPECT_TRUE(bool(groups.at(0)["tail"]["from_latency_buckets"]));
  EXPECT_EQ(groups.at(0)["tail"]["requests_with_gpu_events"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(queried.requests, analyzed.requests);
  EXPECT_GE(queried.tail_requests, analyzed.tail_requests);
  if (queried.tail_requests == analyzed.tail_requests) {
    // The same tail: the same leading components.
    EXPECT_EQ(queried.module_kind, analyzed.module_kind);
    EXPECT_EQ(queried.module_label, analyzed.module_label);
    EXPECT_EQ(queried.type_kind, analyzed.type_kind);
    EXPECT_EQ(queried.type_label, analyzed.type_label);
  }
  // Bucket boundaries may take more requests into the tail (under load, a few more than
  // the slowed ones, with their queueing: queueing then led the collector's tail once),
  // so the leader and the shares may differ. The slowed requests are in both tails:
  // analyze's leading component, summed over the collector's tail, must hold at least
  // half of its excess summed over analyze's.
  const double there = ModuleExcessOf(groups.at(0)["tail"], analyzed.module_kind,
                                      analyzed.module_label);
  EXPECT_GE(there * queried.tail_requests, 0.5 * analyzed.excess_us * analyzed.tail_requests)
      << analyzed.module_kind << " " << analyzed.module_label << ": " << there << " us of "
      << queried.tail_requests << " tail requests (the collector's leader: "
      << queried.module_kind << " " << queried.module_label << ") against analyze's "
      << analyzed.excess_us << " us of " << analyzed.tail_requests;

  // The table says where its answer came from.
  RunResult table = Opmap({"query", "tail", "--collector", collector_->address(), "--token",
                           kAnalystToken, "--label", "trace=tail"},
                          dir_.path());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("from latency buckets"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(analyzed.module_kind), std::string::npos) << table.out;
}

TEST_F(CollectorTailTest, BadTailArgumentsExitTwo) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"tail", "--quantile", "1.5"},
        std::vector<std::string>{"tail", "--group-by", "kernel"},
        std::vector<std::string>{"latency", "--quantile", "0.9"}}) {
    RunResult r = Query(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
  }
  RunResult csv = Opmap({"query", "tail", "--collector", collector_->address(), "--token",
                         kAnalystToken, "--format", "csv"},
                        dir_.path());
  EXPECT_EQ(csv.exit_code, 2) << csv.err;
  EXPECT_NE(csv.err.find("not csv"), std::string::npos) << csv.err;
}

}  // namespace
}  // namespace opmap::testing::collector_it
