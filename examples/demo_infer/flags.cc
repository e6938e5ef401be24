#include "examples/demo_infer/flags.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace opmap::demo {
namespace {

// Each flag is parsed whole (std::from_chars must consume every character), so "12abc"
// and "" are errors rather than silently becoming 12 or 0.
bool ParseInt(std::string_view text, int64_t lo, int64_t hi, int64_t* out) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseDouble(std::string_view text, double lo, double hi, double* out) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v <= lo ||
      v > hi) {
    return false;
  }
  *out = v;
  return true;
}

struct IntFlag {
  const char* name;
  int64_t lo, hi;
};

// Bounds keep one worker's activations and the weights within a few GiB and the thread
// counts sane; they are limits of this demo, not of opmap.
constexpr IntFlag kLayers{"--layers", 1, 64};
constexpr IntFlag kHidden{"--hidden", 8, 4096};
constexpr IntFlag kHeads{"--heads", 1, 64};
constexpr IntFlag kSeq{"--seq", 1, 4096};
constexpr IntFlag kBatch{"--batch", 1, 256};
constexpr IntFlag kVocab{"--vocab", 2, 1 << 20};
constexpr IntFlag kClients{"--clients", 1, 256};
constexpr IntFlag kWorkers{"--workers", 1, 256};
constexpr IntFlag kQueue{"--queue", 1, 1 << 20};
constexpr IntFlag kRequests{"--requests", 1, 100'000'000};
constexpr IntFlag kSlowLayer{"--slow-layer", 0, 63};
constexpr IntFlag kSlowRepeat{"--slow-repeat", 2, 1000};
constexpr IntFlag kSlowEvery{"--slow-every", 1, 1'000'000};
constexpr IntFlag kStallUs{"--host-stall-us", 1, 10'000'000};
constexpr IntFlag kStallEvery{"--stall-every", 1, 1'000'000};
constexpr IntFlag kStallLayer{"--stall-layer", 0, 63};

std::string RangeError(const IntFlag& f, std::string_view value) {
  return std::string(f.name) + ": expected an integer in [" + std::to_string(f.lo) + ", " +
         std::to_string(f.hi) + "], got '" + std::string(value) + "'";
}

}  // namespace

std::string Usage() {
  return R"(usage: opmap-demo-infer [flags]

A small transformer-decoder inference server on the CPU (float32; real matmuls, attention,
layer norm, GELU), annotated with NVTX so opmap can capture it. Clients send requests at
Poisson arrival times into a bounded queue; workers run one prefill forward pass per request.
Prints per-request latency p50/p95/p99 (exact, arrival to completion), throughput and the
NVTX ranges it emitted.

model:
  --layers N       decoder layers                           (default 2)
  --hidden N       hidden size, a multiple of --heads       (default 128)
  --heads N        attention heads                          (default 4)
  --seq N          tokens per sequence                      (default 32)
  --batch N        sequences per request                    (default 1)
  --vocab N        vocabulary size                          (default 1024)
load:
  --rate R         offered requests/s, all clients together (default 200)
  --clients N      client threads generating arrivals       (default 2)
  --workers N      worker threads serving the queue         (default 2)
  --queue N        queue capacity; a full queue blocks the client (default 64)
  --requests N     total requests                           (default 200)
  --duration S     generate arrivals for S seconds instead of --requests
  --seed N         seed for arrivals, tokens and weights    (default 42)
regression (for A/B tests of opmap report):
  --slow-layer N   decoder layer N computes its MLP down projection --slow-repeat
                   times (same output, more work): a deliberate slowdown in one layer
  --slow-repeat R  (default 4)
  --slow-every K   only every K-th request (ids K-1, 2K-1, ...) is slowed   (default 1)
  --host-stall-us U  sleep U microseconds on the host inside decoder layer --stall-layer,
                   before its first operator (before its launches on cuda): a CPU-bound
                   gap, in every --stall-every-th request (ids K-1, 2K-1, ...)
  --stall-every K  (default 1)
  --stall-layer N  (default 0)
  --arrival-marks  an NVTX mark `arrival` (payload: the request id) at each arrival, and
                   the `request` range from when a worker takes the request to its
                   completion (default: the range runs from arrival)
other:
  --device cpu|cuda  where the operators run (cuda needs a build with OPMAP_DEMO_CUDA=ON
                     and a GPU; otherwise exits 2 with "unavailable: <reason>")
  --json           print a one-line JSON summary on stdout (fields: examples/README.md)
  --request-log F  write one line per completed request to F: id and CLOCK_REALTIME ns
                   just before and after its range's NVTX start and end calls, and
                   the ns --slow-every / --host-stall-us added to it
  --help           this text
  --version        print this build's version and exit (as the first argument)

Flags take "--flag value" or "--flag=value". Bad flags exit with code 2.
)";
}

ParseResult ParseFlags(const std::vector<std::string>& args) {
  ParseResult r;
  Config& c = r.config;
  bool saw_requests = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_value = false;
    if (size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    if (flag == "--help" || flag == "-h") {
      r.help = true;
      return r;
    }
    if (flag == "--json" || flag == "--arrival-marks") {
      if (has_value) {
        r.error = flag + " takes no value";
        return r;
      }
      (flag == "--json" ? c.json : c.arrival_marks) = true;
      continue;
    }
    // Every other flag takes a value.
    auto need_value = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= args.size()) {
        r.error = flag + ": missing value";
        return false;
      }
      value = args[++i];
      return true;
    };
    auto int_flag = [&](const IntFlag& f, int64_t* out) -> bool {
      if (!need_value()) return false;
      if (!ParseInt(value, f.lo, f.hi, out)) {
        r.error = RangeError(f, value);
        return false;
      }
      return true;
    };
    int64_t v = 0;
    const struct {
      const IntFlag* spec;
      int* field;
    } int_fields[] = {{&kLayers, &c.layers},   {&kHidden, &c.hidden},   {&kHeads, &c.heads},
                      {&kSeq, &c.seq},         {&kBatch, &c.batch},     {&kVocab, &c.vocab},
                      {&kClients, &c.clients}, {&kWorkers, &c.workers}, {&kQueue, &c.queue},
                      {&kSlowLayer, &c.slow_layer}, {&kSlowRepeat, &c.slow_repeat},
                      {&kSlowEvery, &c.slow_every}, {&kStallUs, &c.host_stall_us},
                      {&kStallEvery, &c.stall_every}, {&kStallLayer, &c.stall_layer}};
    bool matched = false;
    for (const auto& f : int_fields) {
      if (flag != f.spec->name) continue;
      if (!int_flag(*f.spec, &v)) return r;
      *f.field = static_cast<int>(v);
      matched = true;
    }
    if (matched) continue;
    if (flag == kRequests.name) {
      if (!int_flag(kRequests, &c.requests)) return r;
      saw_requests = true;
    } else if (flag == "--rate") {
      if (!need_value()) return r;
      if (!ParseDouble(value, 0.0, 1e6, &c.rate)) {
        r.error = "--rate: expected requests per second in (0, 1e6], got '" + value + "'";
        return r;
      }
    } else if (flag == "--duration") {
      if (!need_value()) return r;
      if (!ParseDouble(value, 0.0, 86400.0, &c.duration_s)) {
        r.error = "--duration: expected seconds in (0, 86400], got '" + value + "'";
        return r;
      }
    } else if (flag == "--seed") {
      if (!need_value()) return r;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), c.seed);
      if (ec != std::errc() || end != value.data() + value.size()) {
        r.error = "--seed: expected an unsigned 64-bit integer, got '" + value + "'";
        return r;
      }
    } else if (flag == "--request-log") {
      if (!need_value()) return r;
      if (value.empty()) {
        r.error = "--request-log: expected a file name";
        return r;
      }
      c.request_log = value;
    } else if (flag == "--device") {
      if (!need_value()) return r;
      if (value == "cpu") {
        c.device = Device::kCpu;
      } else if (value == "cuda") {
        c.device = Device::kCuda;
      } else {
        r.error = "--device: expected cpu or cuda, got '" + value + "'";
        return r;
      }
    } else {
      r.error = "unknown flag " + flag + " (see --help)";
      return r;
    }
  }
  if (saw_requests && c.duration_s > 0) {
    r.error = "--requests and --duration are exclusive: give one";
    return r;
  }
  if (c.slow_layer >= c.layers) {
    r.error = "--slow-layer " + std::to_string(c.slow_layer) + " is not a layer (the model has " +
              std::to_string(c.layers) + ": 0.." + std::to_string(c.layers - 1) + ")";
    return r;
  }
  if (c.stall_layer >= c.layers) {
    r.error = "--stall-layer " + std::to_string(c.stall_layer) + " is not a layer (the model has " +
              std::to_string(c.layers) + ": 0.." + std::to_string(c.layers - 1) + ")";
    return r;
  }
  if (c.hidden % c.heads != 0) {
    r.error = "--hidden " + std::to_string(c.hidden) + " is not a multiple of --heads " +
              std::to_string(c.heads);
    return r;
  }
  // The attention scores (batch x heads x seq x seq floats) are the largest activation;
  // refuse shapes whose per-worker buffers would not fit comfortably in memory.
  const double scores_bytes = 4.0 * c.batch * c.heads * double(c.seq) * c.seq;
  if (scores_bytes > 4.0 * (1ull << 30)) {
    r.error = "--batch x --heads x --seq^2 needs " + std::to_string(scores_bytes / (1 << 30)) +
              " GiB of attention scores per worker (limit 4 GiB)";
    return r;
  }
  return r;
}

}  // namespace opmap::demo
