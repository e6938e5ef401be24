#include "bench/fleet_sim.h"

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/ingest_runner.h"
#include "client/collector_channel.h"
#include "client/ingest_sender.h"

namespace opmap::bench {

double FleetResult::AckPct(double q) const {
  if (ack_ms.empty()) return 0;
  return ack_ms[static_cast<size_t>(q * static_cast<double>(ack_ms.size() - 1))];
}

absl::StatusOr<FleetResult> RunFleet(
    const FleetPlan& plan, const std::vector<opmap::testing::CollectorProcess*>& collectors) {
  // Which class and agent each window is: drawn up front, the same every run.
  std::mt19937_64 rng(plan.seed);
  std::vector<double> weights;
  for (const WindowClass& c : plan.classes) weights.push_back(c.weight);
  std::discrete_distribution<size_t> pick_class(weights.begin(), weights.end());
  std::uniform_int_distribution<int> pick_agent(0, plan.agents - 1);
  struct Window {
    size_t cls;
    int agent;
  };
  std::vector<Window> windows(static_cast<size_t>(plan.windows));
  FleetResult result;
  for (Window& w : windows) {
    w.cls = pick_class(rng);
    w.agent = pick_agent(rng);
    result.kernels += plan.classes[w.cls].kernels;
  }
  result.windows = plan.windows;

  auto made = AgentChannels(collectors);
  if (!made.ok()) return made.status();
  std::vector<std::unique_ptr<opmap::client::CollectorChannel>>& channels = *made;
  std::atomic<int64_t> next{0};
  std::mutex mu;
  std::vector<double> ack_ms;
  std::string first_error;
  std::vector<double> cpu0;
  for (auto* c : collectors) cpu0.push_back(ProcessCpuSeconds(c->pid()));
  const double client_cpu0 = SelfCpuSeconds();
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int s = 0; s < plan.streams; ++s) {
    threads.emplace_back([&, s] {
      opmap::client::SenderOptions so;
      so.retry_for = absl::Seconds(60);
      opmap::client::IngestSender sender(channels[s % channels.size()].get(), so);
      std::vector<double> mine;
      for (int64_t i; (i = next.fetch_add(1)) < plan.windows;) {
        const Window& w = windows[static_cast<size_t>(i)];
        const std::vector<opmap::v1::Batch>& batches = *plan.classes[w.cls].batches;
        size_t index = 0;
        const absl::Time t0 = absl::Now();
        opmap::client::SenderResult r = sender.Run([&](opmap::v1::Batch* out) {
          if (index == batches.size()) return false;
          *out = batches[index++];
          out->set_agent_id(absl::StrFormat("fleet-agent-%05d", w.agent));
          out->set_session_id(absl::StrCat(plan.label, "-", i));
          return true;
        });
        if (!r.status.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.empty()) first_error = opmap::client::StatusLine(r.status);
          return;
        }
        mine.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
      }
      std::lock_guard<std::mutex> lock(mu);
      ack_ms.insert(ack_ms.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& t : threads) t.join();
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  for (size_t i = 0; i < collectors.size(); ++i) {
    result.collector_cpu.push_back(ProcessCpuSeconds(collectors[i]->pid()) - cpu0[i]);
  }
  result.client_cpu = SelfCpuSeconds() - client_cpu0;
  if (!first_error.empty()) return absl::InternalError("fleet: a window failed: " + first_error);
  std::sort(ack_ms.begin(), ack_ms.end());
  result.ack_ms = std::move(ack_ms);
  return result;
}

void PrintFleet(const std::string& engine, const FleetPlan& plan, const FleetResult& r,
                const EngineCost& cost) {
  double collector_cpu = 0;
  for (double c : r.collector_cpu) collector_cpu += c;
  const double windows_per_s = r.windows / r.seconds;
  std::printf("fleet [%s]: %s windows of %s agent ids (%s kernels) acked in %.2f s, %d "
              "windows in flight\n",
              engine.c_str(), Commas(r.windows).c_str(), Commas(plan.agents).c_str(),
              Commas(r.kernels).c_str(), r.seconds, plan.streams);
  // The default cadence: a 2 s window per process every 60 s, 8 processes per host.
  const double hosts = windows_per_s * 60 / 8;
  std::printf("  -> %.0f windows/s sustained (%s kernels/s): at the default cadence (8 "
              "processes per host, a window each per 60 s) %s hosts\n",
              windows_per_s, Commas(static_cast<int64_t>(r.kernels / r.seconds)).c_str(),
              Commas(static_cast<int64_t>(hosts)).c_str());
  std::printf("  ack latency per window (first batch sent to last ack): p50 %.1f ms, p99 "
              "%.1f ms, max %.1f ms\n",
              r.AckPct(0.5), r.AckPct(0.99), r.ack_ms.empty() ? 0.0 : r.ack_ms.back());
  std::printf("  CPU: collector(s) %.1f s = %.2f ms per window, %.2f s per M kernels; client "
              "%.1f s\n",
              collector_cpu, collector_cpu / r.windows * 1e3, collector_cpu / r.kernels * 1e6,
              r.client_cpu);
  if (cost.server_cpu >= 0) {
    std::printf("  engine CPU: ClickHouse servers %.1f s = %.2f ms per window, %.2f s per M "
                "kernels; ZooKeeper %.1f s = %.2f ms per window\n",
                cost.server_cpu, cost.server_cpu / r.windows * 1e3,
                cost.server_cpu / r.kernels * 1e6, cost.zk_cpu,
                cost.zk_cpu / r.windows * 1e3);
  }
  if (cost.store_bytes >= 0) {
    std::printf("  store: %.0f MB, %.0f bytes per kernel\n", cost.store_bytes / 1e6,
                cost.store_bytes / r.kernels);
  }
  std::fflush(stdout);
}

}  // namespace opmap::bench
