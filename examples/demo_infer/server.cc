#include "examples/demo_infer/server.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "examples/demo_infer/bounded_queue.h"

namespace opmap::demo {
namespace {

using Clock = std::chrono::steady_clock;

struct Request {
  uint64_t id = 0;
  Clock::time_point arrival;
  RangeId range = 0;
  std::vector<int32_t> tokens;
  RequestTimes times;
};

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Exponential inter-arrival gaps from a per-client SplitMix64 stream: platform-independent,
// so the arrival schedule depends only on --seed, --rate and --clients.
class Arrivals {
 public:
  Arrivals(uint64_t seed, int client, double rate)
      : state_(seed ^ (uint64_t(client + 1) * 0xa0761d6478bd642full) ^ 0xe7037ed1a0b428dbull),
        rate_(rate) {}
  double NextGapSeconds() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const double u = double(z >> 11) * 0x1.0p-53;  // [0, 1)
    return -std::log1p(-u) / rate_;
  }

 private:
  uint64_t state_;
  double rate_;
};

uint64_t Digest(uint64_t id, const std::vector<int32_t>& next) {
  uint64_t h = (id + 1) * 0x9e3779b97f4a7c15ull;
  for (int32_t t : next) h = (h ^ uint64_t(uint32_t(t))) * 0x100000001b3ull;
  return h;
}

struct WorkerTotals {
  std::vector<int64_t> latencies_ns;
  std::vector<RequestTimes> times;
  Clock::time_point last_completion{};
  uint64_t checksum = 0;
  uint64_t failed = 0;
  std::string first_error;
};

}  // namespace

ServeResult Serve(const Config& config, const Model& model, NvtxMarks& marks,
                  const std::function<std::unique_ptr<Backend>()>& make_backend) {
  ServeResult result;
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<Model::Workspace> workspaces;
  for (int w = 0; w < config.workers; ++w) {
    backends.push_back(make_backend());
    if (backends.back() == nullptr) {
      result.first_error = "could not create a backend for worker " + std::to_string(w);
      return result;
    }
    workspaces.push_back(model.NewWorkspace(*backends.back()));
  }
  const MarkId request_mark = marks.Register("request", "request");
  const MarkId arrival_mark = config.arrival_marks ? marks.Register("arrival", "arrival") : -1;

  BoundedQueue<Request> queue(size_t(config.queue));
  std::atomic<uint64_t> full_waits{0};
  const Clock::time_point start = Clock::now();

  auto client = [&](int c) {
    Arrivals arrivals(config.seed, c, config.rate / config.clients);
    const bool by_duration = config.duration_s > 0;
    // Client c sends ids c, c+clients, c+2*clients, ...: ids 0..N-1 exactly once overall.
    const int64_t quota = config.requests / config.clients + (c < config.requests % config.clients);
    double offset_s = 0;
    for (int64_t k = 0;; ++k) {
      offset_s += arrivals.NextGapSeconds();
      if (by_duration ? offset_s >= config.duration_s : k >= quota) break;
      if (!config.stop_file.empty() && access(config.stop_file.c_str(), F_OK) == 0) break;
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(offset_s)));
      Request r;
      r.id = uint64_t(c) + uint64_t(k) * uint64_t(config.clients);
      r.tokens = model.RequestTokens(r.id);
      r.arrival = Clock::now();
      r.times.id = r.id;
      if (config.arrival_marks) {
        marks.Instant(arrival_mark, r.id);
      } else {
        r.times.start_before = RealtimeNs();
        r.range = marks.Start(request_mark, r.id);
        r.times.start_after = RealtimeNs();
      }
      if (queue.Push(std::move(r))) full_waits.fetch_add(1, std::memory_order_relaxed);
    }
  };

  std::vector<WorkerTotals> totals(size_t(config.workers));
  auto worker = [&](int w) {
    WorkerTotals& t = totals[w];
    while (std::optional<Request> r = queue.Pop()) {
      if (config.arrival_marks) {  // the range is the service; the mark was the arrival
        r->times.start_before = RealtimeNs();
        r->range = marks.Start(request_mark, r->id);
        r->times.start_after = RealtimeNs();
      }
      std::vector<int32_t> next = model.Forward(*backends[w], workspaces[w], r->tokens, r->id,
                                                 &r->times.injected_ns);
      const Clock::time_point done = Clock::now();
      r->times.end_before = RealtimeNs();
      marks.End(r->range);
      r->times.end_after = RealtimeNs();
      if (!config.request_log.empty()) t.times.push_back(r->times);
      t.latencies_ns.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(done - r->arrival).count());
      t.last_completion = done;
      if (next.empty()) {
        if (t.failed++ == 0) t.first_error = backends[w]->Error();
        continue;
      }
      t.checksum += Digest(r->id, next);
    }
  };

  std::vector<std::thread> workers, clients;
  for (int w = 0; w < config.workers; ++w) workers.emplace_back(worker, w);
  for (int c = 0; c < config.clients; ++c) clients.emplace_back(client, c);
  for (std::thread& th : clients) th.join();
  queue.Close();
  for (std::thread& th : workers) th.join();

  Clock::time_point last = start;
  for (WorkerTotals& t : totals) {
    result.latencies_ns.insert(result.latencies_ns.end(), t.latencies_ns.begin(),
                               t.latencies_ns.end());
    result.times.insert(result.times.end(), t.times.begin(), t.times.end());
    if (!t.latencies_ns.empty() && t.last_completion > last) last = t.last_completion;
    result.output_checksum += t.checksum;
    result.failed += t.failed;
    if (result.first_error.empty()) result.first_error = t.first_error;
  }
  result.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(last - start).count();
  result.queue_full_waits = full_waits.load();
  return result;
}

}  // namespace opmap::demo
