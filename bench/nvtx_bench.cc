// NVTX push+pop cost with libopmap_inject.so: no tool loaded (NVTX's own no-op, the
// baseline), the library loaded but dormant (no window), and capturing (window open, this
// process draining the ring on another thread, as the agent would). Targets (docs/benchmarks.md):
// dormant ≤ 20 ns, capturing ≤ 150 ns per push+pop pair.
//
//   nvtx_bench LIB                               every mode, each in a fresh process: a table
//   nvtx_bench --mode MODE --threads N LIB       one mode (off | dormant | capture): the
//                                                table's row, its cells separated by tabs
//
// NVTX loads its tool once per process at the first call, which is why each mode runs in its
// own process (this binary re-executes itself).
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/transport/control_channel.h"
#include "agent/transport/ring_reader.h"
#include "common/base/wall_clock.h"
#include "common/config/flag_config.h"
#include "common/text/aligned_table.h"

namespace {

constexpr int kPairs = 2'000'000;  // per thread per repetition
constexpr int kRepetitions = 7;

// Thread CPU time (base::ThreadCpuNs): what the calling thread pays — this machine's 2
// cores are shared with other work, which made wall-clock figures swing 2-3x between runs.
double ThreadCpuNs() { return static_cast<double>(opmap::base::ThreadCpuNs()); }

// CPU ns per push+pop pair on each of `threads` threads, median over repetitions of the
// slowest thread. `registered` uses the demo's pattern (domain + registered string), else
// nvtxRangePushA (the message is copied at the push).
double Measure(int threads, bool registered) {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("opmap.bench");
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nvtxDomainRegisterStringA(domain, "demo::gelu{flops=147456,bytes=131072}");
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  std::vector<double> samples;
  for (int rep = 0; rep < kRepetitions; ++rep) {
    std::vector<double> per_thread(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        nvtxEventAttributes_t attr = a;
        const double start = ThreadCpuNs();
        for (int i = 0; i < kPairs; ++i) {
          if (registered) {
            attr.payload.ullValue = i;
            nvtxDomainRangePushEx(domain, &attr);
            nvtxDomainRangePop(domain);
          } else {
            nvtxRangePushA("demo::gelu{flops=147456,bytes=131072}");
            nvtxRangePop();
          }
        }
        per_thread[t] = (ThreadCpuNs() - start) / kPairs;
      });
    }
    for (auto& th : pool) th.join();
    samples.push_back(*std::max_element(per_thread.begin(), per_thread.end()));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// Capture mode: this process is its own agent. The library's control thread connects to
// the listener; the first NVTX call waits (OPMAP_INIT_WAIT_MS) until the window is open.
struct InProcessAgent {
  std::unique_ptr<opmap::transport::ControlListener> listener;
  std::unique_ptr<opmap::transport::ControlChannel> channel;
  std::unique_ptr<opmap::transport::RingReader> reader;
  std::thread thread;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> records{0};

  bool Start(const std::string& path) {
    auto l = opmap::transport::ControlListener::Listen(path);
    if (!l.ok()) return false;
    listener = std::move(*l);
    thread = std::thread([this] {
      auto c = listener->Accept(absl::Seconds(30));
      if (!c.ok()) return;
      channel = std::move(*c);
      auto r = opmap::transport::RingReader::AttachFd(channel->TakeRingFd());
      if (!r.ok()) return;
      reader = std::move(*r);
      if (!channel->StartWindow(1, absl::InfiniteDuration(), opmap::ring::kCaptureNvtx).ok()) {
        return;
      }
      while (!stop.load(std::memory_order_relaxed)) {
        auto n = reader->Drain([](std::span<const uint8_t>) { return true; });
        if (!n.ok()) return;
        records.fetch_add(*n, std::memory_order_relaxed);
        if (*n == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    return true;
  }
  uint64_t Drops() { return reader ? reader->Counters().TotalDrops() : 0; }
  void Stop() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

int RunMode(const std::string& lib, const std::string& mode, int threads) {
  InProcessAgent agent;
  const std::string sock = "/tmp/opmap_nvtx_bench_" + std::to_string(getpid()) + ".sock";
  if (mode == "dormant" || mode == "capture") {
    setenv("NVTX_INJECTION64_PATH", lib.c_str(), 1);
    setenv("OPMAP_AGENT_SOCKET", sock.c_str(), 1);  // nobody listens in dormant mode
  }
  if (mode == "capture") {
    setenv("OPMAP_INIT_WAIT_MS", "30000", 1);
    if (!agent.Start(sock)) {
      std::fprintf(stderr, "cannot listen on %s\n", sock.c_str());
      return 1;
    }
  }
  nvtxInitialize(nullptr);
  const double reg = Measure(threads, true);
  const double ascii = Measure(threads, false);
  agent.Stop();
  std::printf("%s\t%d\t%.1f\t%.1f\t%llu\t%llu\n", mode.c_str(), threads, reg, ascii,
              static_cast<unsigned long long>(agent.records.load()),
              static_cast<unsigned long long>(agent.Drops()));
  return 0;
}

// Runs `self LIB MODE THREADS` in a fresh process; its row's cells, or nullopt on failure.
std::optional<std::vector<std::string>> RunChild(const char* self, const char* lib,
                                                 const char* mode, const char* threads) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl(self, self, "--mode", mode, "--threads", threads, lib, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return absl::StrSplit(out, '\t');
}

}  // namespace

struct Flags {
  std::string mode;  // empty: every mode
  int64_t threads = 1;
};

int main(int argc, char** argv) {
  const std::vector<opmap::config::ConfigKey<Flags>> keys = {
      {"mode", false, "MODE", "run one mode only: off, dormant or capture (prints its row)",
       [](std::string_view v, Flags* f) -> absl::Status {
         if (v != "off" && v != "dormant" && v != "capture") {
           return absl::InvalidArgumentError(
               absl::StrCat("'", std::string(v), "' is not off, dormant or capture"));
         }
         f->mode = std::string(v);
         return absl::OkStatus();
       }},
      {"threads", false, "N", "threads pushing and popping, with --mode (default 1)",
       opmap::config::ParsedSetter(&Flags::threads, &opmap::config::ParsePositive)},
  };
  const opmap::config::CommandShape shape{.config_file = false, .operands = true};
  const std::string usage = "usage: nvtx_bench [--mode MODE --threads N] LIBOPMAP_INJECT\n";
  Flags flags;
  std::vector<std::string> operands;
  absl::StatusOr<bool> help = opmap::config::ParseCommandLine(
      std::vector<std::string>(argv + 1, argv + argc), keys, shape, &flags, &operands);
  if (help.ok() && *help) {
    std::printf("%s%s", usage.c_str(), opmap::config::FlagHelp(keys, shape).c_str());
    return 0;
  }
  if (!help.ok() || operands.size() != 1) {
    std::fprintf(stderr, "nvtx_bench: %s\n%s",
                 help.ok() ? "one operand, the library's path" :
                             std::string(help.status().message()).c_str(),
                 usage.c_str());
    return 2;
  }
  if (!flags.mode.empty()) {
    return RunMode(operands[0], flags.mode, static_cast<int>(std::min<int64_t>(flags.threads, 64)));
  }
  std::printf("NVTX push+pop pair, thread CPU ns (median of %d x %d pairs per thread, "
              "slowest thread)\n",
              kRepetitions, kPairs);
  opmap::text::AlignedTable table(
      {"mode", "threads", "registered", "ascii", "records_read", "drops"},
      {false, true, true, true, true, true});
  for (const char* mode : {"off", "dormant", "capture"}) {
    for (const char* threads : {"1", "2"}) {
      std::optional<std::vector<std::string>> row =
          RunChild(argv[0], operands[0].c_str(), mode, threads);
      if (!row.has_value()) {
        std::fprintf(stderr, "mode %s failed\n", mode);
        return 1;
      }
      table.Add(std::move(*row));
    }
  }
  std::fputs(table.Render().c_str(), stdout);
  return 0;
}
