// Host-side work and counters through the real `opmap-collector` on 127.0.0.1 and a real
// SQLite file, as a machine without a GPU sends them: batches of NVTX ranges only (no
// kernels), CounterSamples in two batches, DropCounters with an unavailable entry.
//  - request and operator-CPU latency: exact counts, sums, min and max; percentiles
//    within the sketch's α of the exact lower-rank values computed here;
//  - counters summed exactly, the multiplex scaling and per-second rate, absent (not 0)
//    when a counter never ran; drops summed by (stage, kind, reason); unavailable listed;
//  - resending every batch (duplicates) changes nothing;
//  - `opmap query latency --subject request` and `opmap query counters` (table, JSON);
//  - a schema v2 file and a v3 file are migrated on open and keep their data; module
//    groupings name the sessions rolled up before v4 as unavailable.
#include <grpcpp/grpcpp.h>
#include <simdjson.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/stats/ddsketch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "opmap/v1/ingest.grpc.pb.h"
#include "opmap/v1/query.grpc.pb.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"

namespace opmap::testing {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kBase = 1'700'000'000'000'000'000;
constexpr int64_t kWindowNs = 2'000'000'000;  // each session's capture window: 2 s
constexpr uint32_t kPid = 4242;

// Session string table (wire ids).
enum : uint32_t {
  kRequestId = 1, kLinearId, kNormId, kCyclesId, kTaskClockId, kMissesId, kIterationId
};

struct Values {
  std::vector<int64_t> requests, linear, norm;
};

// One batch of `session`: `n` request ranges (each with a linear and a norm operator
// inside) from row `first`, recording every duration in `v`.
opmap::v1::Batch HostBatch(const std::string& session, const std::string& host, uint64_t seq,
                           int first, int n, Values* v) {
  opmap::v1::Batch b;
  b.set_agent_id("host-agent");
  b.set_session_id(session);
  b.set_seq(seq);
  opmap::v1::Resource* res = b.mutable_resource();
  res->set_host(host);
  res->set_pid(kPid);
  res->set_model_name("demo");
  res->set_model_revision("r1");
  b.set_window_start_ns(kBase);
  b.set_window_end_ns(kBase + kWindowNs);
  if (seq == 1) {
    for (const char* s : {"", "request", "aten::linear", "layer_norm", "PAPI_TOT_CYC",
                          "task-clock", "PAPI_L2_DCM", "Iteration"}) {
      b.mutable_strings()->add_strings(s);
    }
  }
  opmap::v1::RangeColumns* r = b.mutable_ranges();
  auto add = [&](int64_t start, int64_t dur, uint32_t name, opmap::v1::RangeKind kind,
                 uint32_t tid) {
    r->add_start_ns(start);
    r->add_dur_ns(dur);
    r->add_name_id(name);
    r->add_kind(kind);
    r->add_tid(tid);
  };
  for (int i = first; i < first + n; ++i) {
    const int64_t start = kBase + 1'000'000 + int64_t{i} * 10'000'000;
    // Spread over two orders of magnitude, distinct.
    const int64_t req = 200'000 + int64_t{i} * int64_t{i} * 2'003;
    const int64_t lin = 50'000 + int64_t{i} * 997;
    const int64_t norm = 8'000 + int64_t{i} * 31;
    add(start, req, kRequestId, opmap::v1::RANGE_KIND_NVTX_START_END, 1 + i % 4);
    add(start + 1'000, lin, kLinearId, opmap::v1::RANGE_KIND_NVTX_PUSH_POP, 10 + i % 4);
    add(start + 1'000 + lin, norm, kNormId, opmap::v1::RANGE_KIND_NVTX_PUSH_POP, 10 + i % 4);
    v->requests.push_back(req);
    v->linear.push_back(lin);
    v->norm.push_back(norm);
  }
  return b;
}

void AddCounter(opmap::v1::Batch& b, uint32_t name, opmap::v1::CounterSource source,
                int64_t value, int64_t enabled, int64_t running) {
  opmap::v1::CounterSamples* c = b.mutable_counters();
  c->add_name_id(name);
  c->add_source(source);
  c->add_ts_ns(kBase + 500'000'000);
  c->add_value(value);
  c->add_time_enabled_ns(enabled);
  c->add_time_running_ns(running);
}

void AddDrop(opmap::v1::Batch& b, opmap::v1::DropStage stage, opmap::v1::EventKind kind,
             uint64_t count, const std::string& reason) {
  opmap::v1::DropCount* d = b.mutable_drops()->add_counts();
  d->set_stage(stage);
  d->set_kind(kind);
  d->set_count(count);
  d->set_reason(reason);
}

void AddUnavailable(opmap::v1::Batch& b, const std::string& what, const std::string& reason) {
  opmap::v1::Unavailable* u = b.mutable_drops()->add_unavailable();
  u->set_what(what);
  u->set_reason(reason);
}

// The three batches of a host-only session: 12 + 20 + 8 requests; counters in batches 1
// and 2; drops in both; "cupti: no CUDA driver" reported twice (listed once).
std::vector<opmap::v1::Batch> HostSession(const std::string& session, const std::string& host,
                                          Values* v) {
  std::vector<opmap::v1::Batch> batches;
  batches.push_back(HostBatch(session, host, 1, 0, 12, v));
  batches.push_back(HostBatch(session, host, 2, 12, 20, v));
  batches.push_back(HostBatch(session, host, 3, 32, 8, v));
  opmap::v1::Batch& b1 = batches[0];
  AddCounter(b1, kCyclesId, opmap::v1::COUNTER_SOURCE_PAPI, 1'000'000, 100'000'000, 50'000'000);
  AddCounter(b1, kTaskClockId, opmap::v1::COUNTER_SOURCE_PERF_EVENT, 5'000, 200, 200);
  AddDrop(b1, opmap::v1::DROP_STAGE_RING, opmap::v1::EVENT_KIND_RANGE, 3, "ring full");
  AddUnavailable(b1, "cupti", "no CUDA driver");
  opmap::v1::Batch& b2 = batches[1];
  AddCounter(b2, kCyclesId, opmap::v1::COUNTER_SOURCE_PAPI, 3'000'001, 300'000'000, 150'000'000);
  AddCounter(b2, kTaskClockId, opmap::v1::COUNTER_SOURCE_PERF_EVENT, 7'000, 300, 300);
  // Multiplexed out the whole interval: its value is unknown, not zero.
  AddCounter(b2, kMissesId, opmap::v1::COUNTER_SOURCE_PAPI, 0, 100, 0);
  AddDrop(b2, opmap::v1::DROP_STAGE_RING, opmap::v1::EVENT_KIND_RANGE, 2, "ring full");
  AddDrop(b2, opmap::v1::DROP_STAGE_QUEUE, opmap::v1::EVENT_KIND_BATCH, 1, "queue over budget");
  AddUnavailable(b2, "cupti", "no CUDA driver");
  AddUnavailable(b2, "counter PAPI_MEM_SCY", "no PMU in this VM");
  batches[2].set_last_in_session(true);
  return batches;
}

class HostTest : public ::testing::Test {
 protected:
  void StartCollector() {
    CollectorProcess::Options options;
    options.dir = dir_.path();
    collector_ = std::make_unique<CollectorProcess>(options);
    ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  }
  void TearDown() override {
    if (HasFailure() && collector_) std::cerr << "collector stderr:\n" << collector_->Log();
  }
  std::shared_ptr<grpc::Channel> Channel() {
    return grpc::CreateChannel(collector_->address(), grpc::InsecureChannelCredentials());
  }
  // Sends `batches` on one stream; returns each ack's durable_seq (expects no rejection).
  std::vector<uint64_t> Send(const std::vector<opmap::v1::Batch>& batches) {
    auto stub = opmap::v1::Ingest::NewStub(Channel());
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kAgentToken));
    auto stream = stub->Ingest(&ctx);
    std::vector<uint64_t> durable;
    for (const opmap::v1::Batch& b : batches) {
      opmap::v1::Ack ack;
      EXPECT_TRUE(stream->Write(b));
      EXPECT_TRUE(stream->Read(&ack));
      EXPECT_EQ(ack.rejected_size(), 0) << ack.ShortDebugString();
      durable.push_back(ack.durable_seq());
    }
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
    return durable;
  }
  template <typename Request, typename Response, typename Call>
  Response Query(const Request& req, Call call) {
    auto stub = opmap::v1::Query::NewStub(Channel());
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kAnalystToken));
    Response resp;
    grpc::Status st = call(*stub, &ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_code() << ": " << st.error_message();
    return resp;
  }
  opmap::v1::LatencyResponse Latency(opmap::v1::LatencySubject subject,
                                     std::vector<opmap::v1::GroupBy> group_by,
                                     const std::string& host = "") {
    opmap::v1::LatencyRequest req;
    req.set_subject(subject);
    for (auto g : group_by) req.add_group_by(g);
    for (double q : {0.0, 0.5, 0.95, 0.99, 1.0}) req.add_quantiles(q);
    if (!host.empty()) req.mutable_filter()->set_host(host);
    return Query<opmap::v1::LatencyRequest, opmap::v1::LatencyResponse>(
        req, [](opmap::v1::Query::Stub& s, grpc::ClientContext* c, const auto& r, auto* out) {
          return s.LatencyPercentiles(c, r, out);
        });
  }
  opmap::v1::CountersResponse Counters(std::vector<opmap::v1::GroupBy> group_by,
                                       const std::string& host = "") {
    opmap::v1::CountersRequest req;
    for (auto g : group_by) req.add_group_by(g);
    if (!host.empty()) req.mutable_filter()->set_host(host);
    return Query<opmap::v1::CountersRequest, opmap::v1::CountersResponse>(
        req, [](opmap::v1::Query::Stub& s, grpc::ClientContext* c, const auto& r, auto* out) {
          return s.Counters(c, r, out);
        });
  }
  RunResult Cli(std::vector<std::string> args) {
    args.insert(args.end(), {"--collector", collector_->address(), "--token", kAnalystToken});
    return Opmap(args, dir_.path());
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
};

// Exact count/sum/min/max; each quantile within α of the exact lower-rank value.
void ExpectLatencyRow(const opmap::v1::LatencyRow& row, std::vector<int64_t> values,
                      const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_FALSE(values.empty());
  std::sort(values.begin(), values.end());
  int64_t sum = 0;
  for (int64_t v : values) sum += v;
  EXPECT_EQ(row.count(), values.size());
  EXPECT_EQ(row.sum_ns(), sum);
  EXPECT_EQ(row.min_ns(), values.front());
  EXPECT_EQ(row.max_ns(), values.back());
  const double alpha = stats::DDSketch::kRelativeAccuracy;
  EXPECT_DOUBLE_EQ(row.relative_accuracy(), alpha);
  const std::vector<double> qs = {0.0, 0.5, 0.95, 0.99, 1.0};
  ASSERT_EQ(row.quantile_ns_size(), static_cast<int>(qs.size()));
  for (size_t i = 0; i < qs.size(); ++i) {
    const double exact = static_cast<double>(values[LowerRank(qs[i], values.size())]);
    EXPECT_LE(std::fabs(row.quantile_ns(static_cast<int>(i)) - exact), alpha * exact * (1 + 1e-9))
        << "q=" << qs[i] << " exact " << exact;
  }
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const opmap::v1::CounterRow* FindCounter(const opmap::v1::CountersResponse& r,
                                         const std::string& name,
                                         const std::vector<std::string>& key = {}) {
  for (const auto& row : r.rows()) {
    if (row.name() == name && std::vector<std::string>(row.key().begin(), row.key().end()) == key) {
      return &row;
    }
  }
  return nullptr;
}

// The checks both tests make of host-a's session.
void ExpectHostA(const opmap::v1::CountersResponse& c) {
  const opmap::v1::CounterRow* cycles = FindCounter(c, "PAPI_TOT_CYC");
  ASSERT_NE(cycles, nullptr);
  EXPECT_EQ(cycles->source(), "papi");
  EXPECT_EQ(cycles->value(), 4'000'001);
  EXPECT_EQ(cycles->time_enabled_ns(), 400'000'000);
  EXPECT_EQ(cycles->time_running_ns(), 200'000'000);
  ASSERT_TRUE(cycles->has_scaled());
  EXPECT_DOUBLE_EQ(cycles->scaled(), 8'000'002.0);          // × 400 / 200
  ASSERT_TRUE(cycles->has_per_second());
  EXPECT_DOUBLE_EQ(cycles->per_second(), 8'000'002.0 / 2);  // over the 2 s window
  EXPECT_EQ(cycles->samples(), 2u);
  EXPECT_EQ(cycles->sessions(), 1u);
  const opmap::v1::CounterRow* clock = FindCounter(c, "task-clock");
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->source(), "perf_event");
  EXPECT_EQ(clock->value(), 12'000);
  EXPECT_DOUBLE_EQ(clock->scaled(), 12'000.0);
  EXPECT_DOUBLE_EQ(clock->per_second(), 6'000.0);
  const opmap::v1::CounterRow* misses = FindCounter(c, "PAPI_L2_DCM");
  ASSERT_NE(misses, nullptr);
  EXPECT_EQ(misses->value(), 0);
  EXPECT_EQ(misses->time_enabled_ns(), 100);
  EXPECT_EQ(misses->time_running_ns(), 0);
  EXPECT_FALSE(misses->has_scaled());  // never ran: unknown, not 0
  EXPECT_FALSE(misses->has_per_second());
}

std::map<std::string, uint64_t> DropsOf(const opmap::v1::CountersResponse& c) {
  std::map<std::string, uint64_t> out;
  for (const auto& d : c.drops()) {
    out[absl::StrCat(opmap::v1::DropStage_Name(d.stage()), "/",
                     opmap::v1::EventKind_Name(d.kind()), "/", d.reason())] += d.count();
  }
  return out;
}

std::vector<std::string> UnavailableOf(const google::protobuf::RepeatedPtrField<
                                       opmap::v1::Unavailable>& list) {
  std::vector<std::string> out;
  for (const auto& u : list) out.push_back(u.what() + ": " + u.reason());
  return out;
}

TEST_F(HostTest, RangesOnlyAndCountersEndToEnd) {
  StartCollector();
  Values a, b;
  const std::vector<opmap::v1::Batch> session_a = HostSession("s-a", "host-a", &a);
  EXPECT_EQ(Send(session_a), (std::vector<uint64_t>{1, 2, 3}));
  // A second session on another host: ranges only, counters from another pid.
  std::vector<opmap::v1::Batch> session_b = HostSession("s-b", "host-b", &b);
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < session_b[b].counters().name_id_size(); ++i) {
      session_b[b].mutable_counters()->add_pid(7);
    }
  }
  // An `Iteration` range: another request key.
  session_b[2].mutable_ranges()->add_start_ns(kBase + 1'500'000'000);
  session_b[2].mutable_ranges()->add_dur_ns(123'456);
  session_b[2].mutable_ranges()->add_name_id(kIterationId);
  session_b[2].mutable_ranges()->add_kind(opmap::v1::RANGE_KIND_USER_ANNOTATION);
  session_b[2].mutable_ranges()->add_tid(1);
  EXPECT_EQ(Send(session_b), (std::vector<uint64_t>{1, 2, 3}));

  auto check = [&] {
    // ---- request latency: one key "request", exact against the values sent ----
    opmap::v1::LatencyResponse req = Latency(opmap::v1::LATENCY_SUBJECT_REQUEST, {});
    EXPECT_EQ(req.unavailable_size(), 0) << req.ShortDebugString();
    ASSERT_EQ(req.rows_size(), 1);
    ExpectLatencyRow(req.rows(0), Concat(Concat(a.requests, b.requests), {123'456}), "all");
    req = Latency(opmap::v1::LATENCY_SUBJECT_REQUEST,
                  {opmap::v1::GROUP_BY_HOST, opmap::v1::GROUP_BY_REQUEST});
    ASSERT_EQ(req.rows_size(), 3) << req.ShortDebugString();
    std::map<std::string, const opmap::v1::LatencyRow*> by_key;
    for (const auto& row : req.rows()) by_key[row.key(0) + "/" + row.key(1)] = &row;
    ASSERT_EQ(by_key.count("host-a/request"), 1u);
    ASSERT_EQ(by_key.count("host-b/request"), 1u);
    ASSERT_EQ(by_key.count("host-b/iteration"), 1u);
    ExpectLatencyRow(*by_key["host-a/request"], a.requests, "host-a");
    ExpectLatencyRow(*by_key["host-b/request"], b.requests, "host-b");
    ExpectLatencyRow(*by_key["host-b/iteration"], {123'456}, "iteration");

    // ---- operator-CPU latency by layer type and operator ----
    opmap::v1::LatencyResponse ops =
        Latency(opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU,
                {opmap::v1::GROUP_BY_LAYER_TYPE, opmap::v1::GROUP_BY_OPERATOR}, "host-a");
    ASSERT_EQ(ops.rows_size(), 2) << ops.ShortDebugString();
    // Largest total first: the linear operators.
    EXPECT_EQ(ops.rows(0).key(0), "matmul");
    EXPECT_EQ(ops.rows(0).key(1), "aten::linear");
    ExpectLatencyRow(ops.rows(0), a.linear, "linear");
    EXPECT_EQ(ops.rows(1).key(0), "norm");
    EXPECT_EQ(ops.rows(1).key(1), "layer_norm");
    ExpectLatencyRow(ops.rows(1), a.norm, "norm");
    // No GPU event anywhere: kernel latency has no rows, and says so.
    opmap::v1::LatencyResponse kernels = Latency(opmap::v1::LATENCY_SUBJECT_KERNEL, {});
    EXPECT_EQ(kernels.rows_size(), 0);

    // ---- counters ----
    opmap::v1::CountersResponse c = Counters({}, "host-a");
    EXPECT_EQ(c.rows_size(), 3);
    ExpectHostA(c);
    EXPECT_EQ(DropsOf(c), (std::map<std::string, uint64_t>{
                              {"DROP_STAGE_RING/EVENT_KIND_RANGE/ring full", 5},
                              {"DROP_STAGE_QUEUE/EVENT_KIND_BATCH/queue over budget", 1}}));
    EXPECT_EQ(c.drops(0).count(), 5u);  // largest first
    EXPECT_EQ(UnavailableOf(c.unavailable()),
              (std::vector<std::string>{"counter PAPI_MEM_SCY: no PMU in this VM",
                                        "cupti: no CUDA driver"}));
    // Both sessions, by pid: host-b's counters came from pid 7.
    c = Counters({opmap::v1::GROUP_BY_PID});
    EXPECT_EQ(c.rows_size(), 6);
    ASSERT_NE(FindCounter(c, "PAPI_TOT_CYC", {"7"}), nullptr);
    EXPECT_EQ(FindCounter(c, "PAPI_TOT_CYC", {"7"})->value(), 4'000'001);
    ASSERT_NE(FindCounter(c, "PAPI_TOT_CYC", {std::to_string(kPid)}), nullptr);
    // Summed over both sessions: values, and the rate over both windows (4 s).
    c = Counters({});
    const opmap::v1::CounterRow* cycles = FindCounter(c, "PAPI_TOT_CYC");
    ASSERT_NE(cycles, nullptr);
    EXPECT_EQ(cycles->value(), 8'000'002);
    EXPECT_EQ(cycles->sessions(), 2u);
    EXPECT_DOUBLE_EQ(cycles->per_second(), 16'000'004.0 / 4);
    EXPECT_EQ(DropsOf(c)["DROP_STAGE_RING/EVENT_KIND_RANGE/ring full"], 10u);
    EXPECT_EQ(c.unavailable_size(), 2);  // distinct pairs, over both sessions
  };
  check();

  // Everything again: duplicates, acknowledged, nothing doubles.
  EXPECT_EQ(Send(session_a), (std::vector<uint64_t>{3, 3, 3}));
  EXPECT_EQ(Send({session_b[1]}), (std::vector<uint64_t>{3}));
  check();
  // ... also across a restart of the collector (state rebuilt from the store).
  ASSERT_EQ(collector_->Stop(), 0);
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  EXPECT_EQ(Send(session_a), (std::vector<uint64_t>{3, 3, 3}));
  check();

  // ---- the CLI ----
  RunResult r = Cli({"query", "latency", "--subject", "request", "--group-by", "host",
                     "--host", "host-a", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LatencyResult lat;
  ASSERT_TRUE(ParseLatencyJson(r.out, {"host"}, {"p50", "p95", "p99"}, &lat));
  ASSERT_EQ(lat.rows.size(), 1u);
  EXPECT_EQ(lat.rows[0].count, static_cast<int64_t>(a.requests.size()));
  int64_t sum = 0;
  for (int64_t v : a.requests) sum += v;
  EXPECT_EQ(lat.rows[0].sum_ns, sum);
  EXPECT_THAT(r.out, HasSubstr("\"subject\":\"request\""));
  r = Cli({"query", "latency", "--subject", "operator-cpu", "--group-by", "operator"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("latency of operator ranges' host durations (inclusive of nested ranges), by operator: 2 rows"));
  EXPECT_THAT(r.out, HasSubstr("aten::linear"));
  r = Cli({"query", "latency", "--subject", "sideways"});
  EXPECT_EQ(r.exit_code, 2);

  r = Cli({"query", "counters", "--host", "host-a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("counters: 3 rows"));
  EXPECT_THAT(r.out, HasSubstr("PAPI_TOT_CYC"));
  EXPECT_THAT(r.out, HasSubstr("8000002.0"));
  EXPECT_THAT(r.out, HasSubstr("unavailable: cupti: no CUDA driver\n"));
  EXPECT_THAT(r.out, HasSubstr("unavailable: counter PAPI_MEM_SCY: no PMU in this VM\n"));
  EXPECT_THAT(r.out, HasSubstr("ring"));
  EXPECT_THAT(r.out, HasSubstr("queue over budget"));
  r = Cli({"query", "counters", "--group-by", "host,pid", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(std::string_view(doc["query"]), "counters");
  int nulls = 0, rows = 0;
  for (simdjson::dom::element row : simdjson::dom::array(doc["rows"])) {
    ++rows;
    if (row["scaled"].is_null()) {
      ++nulls;
      EXPECT_EQ(std::string_view(row["name"]), "PAPI_L2_DCM");
      EXPECT_TRUE(row["per_second"].is_null());
    }
  }
  EXPECT_EQ(rows, 6);
  EXPECT_EQ(nulls, 2);
  EXPECT_EQ(simdjson::dom::array(doc["unavailable"]).size(), 2u);
  EXPECT_EQ(simdjson::dom::array(doc["drops"]).size(), 2u);
  r = Cli({"query", "counters", "--group-by", "kernel"});
  EXPECT_EQ(r.exit_code, 2);
}

// A restart between a session's batches: the collector rebuilds the session from the
// stored batches, counters and drops included, so its totals are the same.
TEST_F(HostTest, RestartMidSessionKeepsCountersExact) {
  StartCollector();
  Values a;
  const std::vector<opmap::v1::Batch> batches = HostSession("mid", "host-a", &a);
  EXPECT_EQ(Send({batches[0], batches[1]}), (std::vector<uint64_t>{1, 2}));
  collector_->Kill();
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  EXPECT_EQ(Send(batches), (std::vector<uint64_t>{2, 2, 3}));  // 1, 2 resent: duplicates
  opmap::v1::CountersResponse c = Counters({});
  ExpectHostA(c);
  EXPECT_EQ(DropsOf(c)["DROP_STAGE_RING/EVENT_KIND_RANGE/ring full"], 5u);
  EXPECT_EQ(c.unavailable_size(), 2);
  opmap::v1::LatencyResponse req = Latency(opmap::v1::LATENCY_SUBJECT_REQUEST, {});
  ASSERT_EQ(req.rows_size(), 1);
  ExpectLatencyRow(req.rows(0), a.requests, "mid");
}

// ---- a schema v2 file ----

void Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK)
      << sql << ": " << (error != nullptr ? error : "");
}

int64_t IntOf(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

// A session with two kernels (what a v2 collector rolled up).
std::vector<opmap::v1::Batch> KernelSession() {
  opmap::v1::Batch b;
  b.set_agent_id("gpu-agent");
  b.set_session_id("gpu-session");
  b.set_seq(1);
  b.set_last_in_session(true);
  b.mutable_resource()->set_host("gpu-host");
  b.mutable_resource()->set_pid(1);
  b.set_window_start_ns(kBase);
  b.set_window_end_ns(kBase + kWindowNs);
  for (const char* s : {"", "sm90_gemm"}) b.mutable_strings()->add_strings(s);
  opmap::v1::KernelColumns* k = b.mutable_kernels();
  for (int64_t dur : {1'000, 3'000}) {
    k->add_start_ns(kBase + dur);
    k->add_dur_ns(dur);
    k->add_name_id(1);
    k->add_device(0);
    k->add_stream(7);
  }
  return {b};
}

// Back to the v3 shape: no module columns, rollup_buckets keyed without the module
// (these sessions have no module ranges, so no two bucket rows differ by module only).
void ToVersionThree(sqlite3* db) {
  for (const char* sql :
       {"ALTER TABLE sessions DROP COLUMN module_rollup", "ALTER TABLE rollups DROP COLUMN module",
        "CREATE TABLE rollup_buckets_v3(resource_id INTEGER NOT NULL, subject INTEGER NOT NULL, "
        "bucket_ns INTEGER NOT NULL, layer_type TEXT NOT NULL, operator TEXT NOT NULL, "
        "kernel TEXT NOT NULL, count INTEGER NOT NULL, sum_ns INTEGER NOT NULL, "
        "min_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL, sketch_scale INTEGER NOT NULL, "
        "sketch_offset INTEGER NOT NULL, sketch_zero INTEGER NOT NULL, sketch_sum REAL NOT NULL, "
        "sketch_min REAL NOT NULL, sketch_max REAL NOT NULL, sketch_bins BLOB NOT NULL, "
        "PRIMARY KEY(resource_id, subject, bucket_ns, layer_type, operator, kernel)) "
        "WITHOUT ROWID",
        "INSERT INTO rollup_buckets_v3 SELECT resource_id, subject, bucket_ns, layer_type, "
        "operator, kernel, count, sum_ns, min_ns, max_ns, sketch_scale, sketch_offset, "
        "sketch_zero, sketch_sum, sketch_min, sketch_max, sketch_bins FROM rollup_buckets",
        "DROP TABLE rollup_buckets", "ALTER TABLE rollup_buckets_v3 RENAME TO rollup_buckets",
        "PRAGMA user_version=3"}) {
    Exec(db, sql);
  }
}

TEST_F(HostTest, VersionTwoFileMigratesAndKeepsItsData) {
  StartCollector();
  Values a;
  Send(KernelSession());
  Send(HostSession("old", "host-a", &a));
  ASSERT_EQ(collector_->Stop(), 0);
  {
    // Back to exactly what a v2 collector would have left: no session_* tables, no
    // host_rollup column, no rows of the new subjects (2 = request, 3 = operator CPU).
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(collector_->db().c_str(), &db), SQLITE_OK);
    ToVersionThree(db);
    for (const char* sql :
         {"DROP TABLE session_counters", "DROP TABLE session_drops",
          "DROP TABLE session_unavailable", "ALTER TABLE sessions DROP COLUMN host_rollup",
          "DELETE FROM rollups WHERE subject IN (2, 3)",
          "DELETE FROM rollup_buckets WHERE subject IN (2, 3)", "PRAGMA user_version=2"}) {
      Exec(db, sql);
    }
    sqlite3_close(db);
  }
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  EXPECT_EQ(IntOf(collector_->db(), "PRAGMA user_version"), 5);
  EXPECT_EQ(IntOf(collector_->db(), "SELECT count(*) FROM sessions WHERE host_rollup = 0"), 2);

  // The kernels are all there.
  opmap::v1::LatencyResponse k = Latency(opmap::v1::LATENCY_SUBJECT_KERNEL, {});
  ASSERT_EQ(k.rows_size(), 1);
  EXPECT_EQ(k.rows(0).count(), 2u);
  EXPECT_EQ(k.rows(0).sum_ns(), 4'000);
  // The old sessions' host values are missing, and the answer says so rather than zero.
  opmap::v1::LatencyResponse req = Latency(opmap::v1::LATENCY_SUBJECT_REQUEST, {});
  EXPECT_EQ(req.rows_size(), 0);
  EXPECT_THAT(UnavailableOf(req.unavailable()),
              ::testing::ElementsAre(HasSubstr("sessions before schema v3: 2 selected sessions")));
  opmap::v1::CountersResponse c = Counters({});
  EXPECT_EQ(c.rows_size(), 0);
  EXPECT_THAT(UnavailableOf(c.unavailable()),
              ::testing::ElementsAre(HasSubstr("sessions before schema v3")));

  // A session after the migration is rolled up in full beside them.
  Values b;
  Send(HostSession("new", "host-b", &b));
  req = Latency(opmap::v1::LATENCY_SUBJECT_REQUEST, {});
  ASSERT_EQ(req.rows_size(), 1);
  ExpectLatencyRow(req.rows(0), b.requests, "new");
  EXPECT_THAT(UnavailableOf(req.unavailable()),
              ::testing::ElementsAre(HasSubstr("2 selected sessions")));
  c = Counters({}, "host-b");
  ExpectHostA(c);  // the same counters as host-a's session sent
  EXPECT_EQ(c.unavailable_size(), 2);
}

// A v3 file: every stored row keeps its place in the other groupings; module groupings
// leave its sessions out and say how many, and a session rolled up after the migration
// has its modules.
TEST_F(HostTest, VersionThreeFileMigratesWithoutModules) {
  StartCollector();
  Values a;
  Send(KernelSession());
  Send(HostSession("old", "host-a", &a));
  ASSERT_EQ(collector_->Stop(), 0);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(collector_->db().c_str(), &db), SQLITE_OK);
    ToVersionThree(db);
    sqlite3_close(db);
  }
  const int64_t bucket_rows = IntOf(collector_->db(), "SELECT count(*) FROM rollup_buckets");
  ASSERT_GT(bucket_rows, 0);
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  EXPECT_EQ(IntOf(collector_->db(), "PRAGMA user_version"), 5);
  EXPECT_EQ(IntOf(collector_->db(), "SELECT count(*) FROM signoffs"), 0);  // v5 table
  EXPECT_EQ(IntOf(collector_->db(), "SELECT count(*) FROM sessions WHERE module_rollup = 0"), 2);
  EXPECT_EQ(IntOf(collector_->db(), "SELECT count(*) FROM sessions WHERE host_rollup = 0"), 0);
  // Every stored row is kept, marked as rolled up without modules.
  EXPECT_EQ(IntOf(collector_->db(), "SELECT count(*) FROM rollup_buckets"), bucket_rows);
  EXPECT_EQ(IntOf(collector_->db(), "SELECT count(*) FROM rollup_buckets WHERE module = "
                                    "char(1) || 'before schema v4'"),
            bucket_rows);
  EXPECT_EQ(IntOf(collector_->db(), "SELECT count(*) FROM rollups WHERE module != "
                                    "char(1) || 'before schema v4'"),
            0);

  // Without a module key the answers are the old ones.
  opmap::v1::LatencyResponse k = Latency(opmap::v1::LATENCY_SUBJECT_KERNEL, {});
  ASSERT_EQ(k.rows_size(), 1);
  EXPECT_EQ(k.rows(0).count(), 2u);
  EXPECT_EQ(k.rows(0).sum_ns(), 4'000);
  opmap::v1::LatencyResponse ops =
      Latency(opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU, {opmap::v1::GROUP_BY_OPERATOR});
  ASSERT_EQ(ops.rows_size(), 2);
  EXPECT_EQ(ops.unavailable_size(), 0);
  // By module: no row, and why.
  k = Latency(opmap::v1::LATENCY_SUBJECT_KERNEL, {opmap::v1::GROUP_BY_MODULE});
  EXPECT_EQ(k.rows_size(), 0);
  EXPECT_THAT(UnavailableOf(k.unavailable()),
              ::testing::ElementsAre(HasSubstr("sessions before schema v4: 2 selected sessions")));
  ops = Latency(opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU, {opmap::v1::GROUP_BY_MODULE});
  EXPECT_EQ(ops.rows_size(), 0);
  EXPECT_THAT(UnavailableOf(ops.unavailable()),
              ::testing::ElementsAre(HasSubstr("sessions before schema v4: 2 selected sessions")));

  // A session after the migration: its operator ranges (outside any module range: the
  // request ranges are on other threads) are the "" module row, exactly.
  Values b;
  Send(HostSession("new", "host-b", &b));
  ops = Latency(opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU,
                {opmap::v1::GROUP_BY_MODULE, opmap::v1::GROUP_BY_OPERATOR});
  ASSERT_EQ(ops.rows_size(), 2);
  for (const opmap::v1::LatencyRow& row : ops.rows()) {
    EXPECT_EQ(row.key(0), "");
    ExpectLatencyRow(row, row.key(1) == "aten::linear" ? b.linear : b.norm, row.key(1));
  }
  EXPECT_THAT(UnavailableOf(ops.unavailable()),
              ::testing::ElementsAre(HasSubstr("sessions before schema v4: 2 selected sessions")));
  // Only the new session selected: nothing is missing.
  ops = Latency(opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU, {opmap::v1::GROUP_BY_MODULE}, "host-b");
  ASSERT_EQ(ops.rows_size(), 1);
  EXPECT_EQ(ops.rows(0).count(), b.linear.size() + b.norm.size());
  EXPECT_EQ(ops.unavailable_size(), 0);
  // The CLI's table names the row.
  RunResult t = Cli({"query", "latency", "--subject", "operator-cpu", "--group-by", "module",
                     "--host", "host-b"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("(no module)"));
}

}  // namespace
}  // namespace opmap::testing
