#include "bench/ingest_runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/collector_channel.h"
#include "client/ingest_sender.h"
#include "collector/clickhouse_client/http_client.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::bench {

std::string Commas(int64_t v) {
  std::string s = absl::StrCat(v), out;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it, ++n) {
    if (n && n % 3 == 0 && *it != '-') out.push_back(',');
    out.push_back(*it);
  }
  return std::string(out.rbegin(), out.rend());
}

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) end with ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
  uint64_t utime = 0, stime = 0;  // fields 14 and 15 of stat(5): 11 and 12 after ')'
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return -1;
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

double SelfCpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

absl::StatusOr<std::vector<std::unique_ptr<opmap::client::CollectorChannel>>> AgentChannels(
    const std::vector<opmap::testing::CollectorProcess*>& collectors) {
  std::vector<std::unique_ptr<opmap::client::CollectorChannel>> channels;
  for (auto* c : collectors) {
    opmap::client::ChannelOptions flags;
    flags.collectors = {c->address()};
    flags.token = opmap::testing::kAgentToken;
    auto channel = opmap::client::CollectorChannel::Create(flags);
    if (!channel.ok()) return channel.status();
    channels.push_back(std::move(*channel));
  }
  return channels;
}

absl::StatusOr<IngestResult> RunIngest(
    const IngestPlan& plan, const std::vector<opmap::testing::CollectorProcess*>& collectors) {
  const std::vector<opmap::v1::Batch>& tmpl = *plan.batches;
  auto channels = AgentChannels(collectors);
  if (!channels.ok()) return channels.status();
  std::vector<std::unique_ptr<opmap::client::CollectorChannel>>& clients = *channels;
  std::atomic<int64_t> next_session{0};
  std::atomic<int64_t> settled_batches{0};
  std::vector<std::thread> threads;
  std::vector<grpc::Status> statuses(plan.streams);
  IngestResult result;
  std::vector<double> cpu0;
  for (auto* c : collectors) cpu0.push_back(ProcessCpuSeconds(c->pid()));
  const double client_cpu0 = SelfCpuSeconds();
  const absl::Time start = absl::Now();
  for (int s = 0; s < plan.streams; ++s) {
    threads.emplace_back([&, s] {
      opmap::client::SenderOptions so;
      so.window = plan.window;
      so.progress_interval = absl::Milliseconds(200);
      int64_t last = 0;
      so.progress = [&](const opmap::client::SenderProgress& p) {
        settled_batches += p.settled - last;
        last = p.settled;
      };
      so.log = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
      opmap::client::IngestSender sender(clients[s % clients.size()].get(), so);
      int64_t current = -1;
      size_t index = 0;
      opmap::client::SenderResult r = sender.Run([&](opmap::v1::Batch* out) {
        if (current < 0 || index == tmpl.size()) {
          current = next_session.fetch_add(1);
          index = 0;
          if (current >= plan.sessions) return false;
        }
        *out = tmpl[index++];
        out->set_agent_id(absl::StrCat("bench-agent-", current % plan.agents));
        out->set_session_id(absl::StrCat(plan.label, "-", current));
        return true;
      });
      statuses[s] = r.status;
    });
  }
  // A line every 2 s while it runs.
  std::atomic<bool> done{false};
  std::thread ticker([&] {
    while (!done) {
      for (int i = 0; i < 20 && !done; ++i) absl::SleepFor(absl::Milliseconds(100));
      if (done) break;
      double secs = absl::ToDoubleSeconds(absl::Now() - start);
      int64_t k = settled_batches.load() * plan.session_kernels /
                  static_cast<int64_t>(tmpl.size());
      std::fprintf(stderr, "  %.0f s: ~%s kernels acked (~%s/s)\n", secs, Commas(k).c_str(),
                   Commas(static_cast<int64_t>(k / secs)).c_str());
    }
  });
  for (auto& t : threads) t.join();
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  for (size_t i = 0; i < collectors.size(); ++i) {
    result.collector_cpu.push_back(ProcessCpuSeconds(collectors[i]->pid()) - cpu0[i]);
  }
  result.client_cpu = SelfCpuSeconds() - client_cpu0;
  done = true;
  ticker.join();
  for (const grpc::Status& s : statuses) {
    if (!s.ok()) {
      std::string logs;
      for (auto* c : collectors) logs += c->Log();
      return absl::InternalError(absl::StrCat("ingest failed: ", opmap::client::StatusLine(s),
                                              "\ncollector log:\n", logs));
    }
  }
  return result;
}

absl::StatusOr<QueryResult> RunLatencyQuery(opmap::testing::CollectorProcess& collector,
                                            int runs, bool range_cut, int64_t range_start_ns,
                                            uint64_t expect_kernels, double settle_seconds) {
  opmap::client::ChannelOptions flags;
  flags.collectors = {collector.address()};
  flags.token = opmap::testing::kAnalystToken;
  auto analyst = opmap::client::CollectorChannel::Create(flags);
  if (!analyst.ok()) return analyst.status();
  auto stub = opmap::v1::Query::NewStub((*analyst)->NewChannel(0));
  opmap::v1::LatencyRequest req;
  req.set_subject(opmap::v1::LATENCY_SUBJECT_KERNEL);
  req.add_group_by(opmap::v1::GROUP_BY_LAYER_TYPE);
  if (range_cut) {
    req.mutable_range()->set_start_ns(range_start_ns);
    req.mutable_range()->set_end_ns(range_start_ns + int64_t{3600} * 1'000'000'000);
  }
  for (double q : {0.5, 0.95, 0.99}) req.add_quantiles(q);
  QueryResult result;
  auto call = [&](opmap::v1::LatencyResponse* resp, double* ms) -> absl::Status {
    grpc::ClientContext ctx;
    (*analyst)->PrepareContext(&ctx, absl::Seconds(120));
    absl::Time t = absl::Now();
    grpc::Status s = stub->LatencyPercentiles(&ctx, req, resp);
    *ms = absl::ToDoubleMilliseconds(absl::Now() - t);
    if (!s.ok()) return absl::InternalError("query failed: " + opmap::client::StatusLine(s));
    return absl::OkStatus();
  };
  // Warm-up (the connection, caches) until the answer counts every kernel stored.
  const absl::Time settle_end = absl::Now() + absl::Seconds(settle_seconds);
  for (;;) {
    opmap::v1::LatencyResponse resp;
    double ms = 0;
    if (absl::Status s = call(&resp, &ms); !s.ok()) return s;
    result.counted = 0;
    for (const auto& r : resp.rows()) result.counted += r.count();
    result.groups = resp.rows_size();
    if (result.counted == expect_kernels || absl::Now() > settle_end) break;
    absl::SleepFor(absl::Milliseconds(500));
  }
  const double cpu0 = ProcessCpuSeconds(collector.pid());
  for (int i = 0; i < runs; ++i) {
    opmap::v1::LatencyResponse resp;
    double ms = 0;
    if (absl::Status s = call(&resp, &ms); !s.ok()) return s;
    result.ms.push_back(ms);
  }
  result.collector_cpu_ms = (ProcessCpuSeconds(collector.pid()) - cpu0) * 1e3 / runs;
  std::sort(result.ms.begin(), result.ms.end());
  return result;
}

absl::StatusOr<std::unique_ptr<BenchCluster>> BenchCluster::Acquire(const std::string& script) {
  std::unique_ptr<BenchCluster> c(new BenchCluster());
  c->script_ = script;
  std::string env_path;
  const char* shared = std::getenv("OPMAP_CLICKHOUSE_ENV");
  if (shared != nullptr && *shared != '\0') {
    env_path = shared;
  } else {
    if (access(script.c_str(), X_OK) != 0) {
      return absl::NotFoundError(absl::StrCat("no executable cluster script at ", script,
                                              " (--cluster-script, or OPMAP_CLICKHOUSE_ENV)"));
    }
    c->temp_ = std::make_unique<opmap::testing::TempDir>();
    c->dir_ = c->temp_->File("cluster");
    opmap::testing::RunResult r =
        opmap::testing::Run({script, "start", c->dir_}, c->temp_->path(), {},
                            absl::Seconds(180));
    if (r.exit_code != 0) {
      // Stop whatever came up before failing.
      opmap::testing::Run({script, "stop", c->dir_}, c->temp_->path(), {}, absl::Seconds(60));
      return absl::UnavailableError(absl::StrCat(script, " start ", c->dir_, " exited ",
                                                 r.exit_code, ": ", r.out, r.err));
    }
    c->owned_ = true;
    std::fprintf(stderr, "  %s", r.out.c_str());
    env_path = c->dir_ + "/cluster.env";
  }
  std::ifstream in(env_path);
  if (!in) return absl::NotFoundError("can't read " + env_path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (kv.size() == 2) c->env_[kv[0]] = kv[1];
  }
  std::string url = c->Env("CH_URL");
  const size_t db = url.find("/default?");
  if (db == std::string::npos) return absl::InvalidArgumentError("unexpected CH_URL " + url);
  c->database_ = absl::StrCat("opmap_bench_", getpid());
  c->url_head_ = url.substr(0, db + 1);
  c->url_tail_ = url.substr(db + 8);
  return c;
}

std::string BenchCluster::Url(const std::string& suffix) const {
  if (std::find(handed_out_.begin(), handed_out_.end(), suffix) == handed_out_.end()) {
    handed_out_.push_back(suffix);
  }
  return absl::StrCat(url_head_, database(suffix), url_tail_);
}

const std::string& BenchCluster::Env(const std::string& key) const {
  static const std::string kEmpty;
  auto it = env_.find(key);
  return it == env_.end() ? kEmpty : it->second;
}

std::vector<pid_t> BenchCluster::ServerPids() const {
  std::vector<pid_t> pids;
  for (absl::string_view p : absl::StrSplit(Env("CH_PIDS"), ',', absl::SkipEmpty())) {
    int v = 0;
    if (absl::SimpleAtoi(p, &v)) pids.push_back(v);
  }
  return pids;
}

absl::StatusOr<std::string> BenchCluster::Query(const std::string& sql) const {
  auto parsed = opmap::collector::clickhouse_client::ParseClickHouseUrl(Env("CH_URL"));
  if (!parsed.ok()) return parsed.status();
  parsed->client.request_timeout = absl::Seconds(120);
  opmap::collector::clickhouse_client::HttpClient client(parsed->client);
  return client.Query(sql);
}

BenchCluster::~BenchCluster() {
  if (owned_) {
    opmap::testing::Run({script_, "stop", dir_}, temp_->path(), {}, absl::Seconds(60));
  } else {
    for (const std::string& suffix : handed_out_) {
      (void)Query(absl::StrCat("DROP DATABASE IF EXISTS ", database(suffix), " ON CLUSTER ",
                               Env("CH_CLUSTER")));
    }
  }
}

}  // namespace opmap::bench
