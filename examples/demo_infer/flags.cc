#include "examples/demo_infer/flags.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/config/flag_config.h"

namespace opmap::demo {
namespace {

using config::ConfigKey;

// An integer flag in [lo, hi]: parsed whole, so "12abc" and "" are errors.
template <typename T>
auto IntIn(int64_t lo, int64_t hi, T Config::*field) {
  return [lo, hi, field](std::string_view v, Config* c) -> absl::Status {
    int64_t x = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi) {
      return absl::InvalidArgumentError(
          absl::StrFormat("expected an integer in [%d, %d], got '%s'", lo, hi, v));
    }
    c->*field = static_cast<T>(x);
    return absl::OkStatus();
  };
}

// A number in (lo, hi].
auto NumberIn(double lo, double hi, double Config::*field, std::string_view what) {
  return [lo, hi, field, what](std::string_view v, Config* c) -> absl::Status {
    double x = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(x) || x <= lo ||
        x > hi) {
      return absl::InvalidArgumentError(
          absl::StrFormat("expected %s in (%g, %g], got '%s'", what, lo, hi, v));
    }
    c->*field = x;
    return absl::OkStatus();
  };
}

// Bounds keep one worker's activations and the weights within a few GiB and the thread
// counts sane; they are limits of this demo, not of opmap. (Usage() is the help text.)
const std::vector<ConfigKey<Config>>& Keys() {
  static const std::vector<ConfigKey<Config>> keys = {
      {"layers", false, "N", "", IntIn(1, 64, &Config::layers)},
      {"hidden", false, "N", "", IntIn(8, 4096, &Config::hidden)},
      {"heads", false, "N", "", IntIn(1, 64, &Config::heads)},
      {"seq", false, "N", "", IntIn(1, 4096, &Config::seq)},
      {"batch", false, "N", "", IntIn(1, 256, &Config::batch)},
      {"vocab", false, "N", "", IntIn(2, 1 << 20, &Config::vocab)},
      {"rate", false, "R", "", NumberIn(0, 1e6, &Config::rate, "requests per second")},
      {"clients", false, "N", "", IntIn(1, 256, &Config::clients)},
      {"workers", false, "N", "", IntIn(1, 256, &Config::workers)},
      {"queue", false, "N", "", IntIn(1, 1 << 20, &Config::queue)},
      {"requests", false, "N", "",
       [](std::string_view v, Config* c) -> absl::Status {
         c->requests_given = true;
         return IntIn(1, 100'000'000, &Config::requests)(v, c);
       }},
      {"duration", false, "S", "", NumberIn(0, 86400, &Config::duration_s, "seconds")},
      {"stop-file", false, "F", "", config::StringSetter(&Config::stop_file)},
      {"seed", false, "N", "",
       [](std::string_view v, Config* c) -> absl::Status {
         auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), c->seed);
         if (ec != std::errc() || end != v.data() + v.size()) {
           return absl::InvalidArgumentError(
               absl::StrFormat("expected an unsigned 64-bit integer, got '%s'", v));
         }
         return absl::OkStatus();
       }},
      {"slow-layer", false, "N", "", IntIn(0, 63, &Config::slow_layer)},
      {"slow-repeat", false, "R", "", IntIn(2, 1000, &Config::slow_repeat)},
      {"slow-every", false, "K", "", IntIn(1, 1'000'000, &Config::slow_every)},
      {"host-stall-us", false, "U", "", IntIn(1, 10'000'000, &Config::host_stall_us)},
      {"stall-every", false, "K", "", IntIn(1, 1'000'000, &Config::stall_every)},
      {"stall-layer", false, "N", "", IntIn(0, 63, &Config::stall_layer)},
      {"arrival-marks", true, "", "", config::ParsedSetter(&Config::arrival_marks, &config::ParseBool)},
      {"device", false, "cpu|cuda", "",
       [](std::string_view v, Config* c) -> absl::Status {
         if (v == "cpu") {
           c->device = Device::kCpu;
         } else if (v == "cuda") {
           c->device = Device::kCuda;
         } else {
           return absl::InvalidArgumentError(
               absl::StrFormat("expected cpu or cuda, got '%s'", v));
         }
         return absl::OkStatus();
       }},
      {"json", true, "", "", config::ParsedSetter(&Config::json, &config::ParseBool)},
      {"request-log", false, "F", "", config::StringSetter(&Config::request_log)},
  };
  return keys;
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
  --stop-file F    stop generating arrivals once F exists (queued requests still served;
                   the run then ends as one that reached its end, exit 0)
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
  absl::StatusOr<bool> help = config::ParseCommandLine(
      args, Keys(), config::CommandShape{.config_file = false, .operands = false, .short_names = {}}, &c,
      nullptr);
  if (!help.ok()) {
    r.error = std::string(help.status().message());
    return r;
  }
  if (*help) {
    r.help = true;
    return r;
  }
  if (c.requests_given && c.duration_s > 0) {
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
