// Command-line configuration of opmap-demo-infer, parsed by the flag system every opmap
// binary uses (common/config/flag_config.h). Parsing never exits or throws: it returns
// either a Config or one error line naming the flag, and main turns that into exit code 2.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_FLAGS_H_
#define OPMAP_EXAMPLES_DEMO_INFER_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace opmap::demo {

enum class Device { kCpu, kCuda };

struct Config {
  // Model shape.
  int layers = 2;
  int hidden = 128;
  int heads = 4;
  int seq = 32;   // tokens per sequence (one prefill forward pass per request)
  int batch = 1;  // sequences per request
  int vocab = 1024;
  // Load.
  double rate = 200.0;  // offered requests per second, all clients together (Poisson)
  int clients = 2;
  int workers = 2;
  int queue = 64;          // bounded request queue; a full queue makes the client wait
  int64_t requests = 200;  // used unless duration_s > 0
  bool requests_given = false;  // --requests was on the command line
  double duration_s = 0;   // > 0: clients generate arrivals for this long instead
  // Non-empty: clients stop generating arrivals once this file exists (the queued
  // requests are still served), so a test can end a long run when it has what it needs.
  std::string stop_file;
  uint64_t seed = 42;
  // A deliberate regression for A/B tests: decoder layer `slow_layer` (-1: none) runs its
  // MLP down projection `slow_repeat` times (same result, more work).
  int slow_layer = -1;
  int slow_repeat = 4;
  int slow_every = 1;  // only requests with (id + 1) % slow_every == 0 are slowed
  // A host-side stall for tail tests: requests with (id + 1) % stall_every == 0 sleep
  // host_stall_us (0: never) inside decoder layer `stall_layer`, before its first operator.
  int host_stall_us = 0;
  int stall_every = 1;
  int stall_layer = 0;
  // An NVTX mark `arrival` (payload = request id) when a request arrives; its `request`
  // range then starts when a worker takes it (service), not at arrival.
  bool arrival_marks = false;
  Device device = Device::kCpu;
  bool json = false;
  // Non-empty: write one line per completed request to this file (RequestTimes,
  // server.h) for tests that match captured ranges to requests.
  std::string request_log;
};

struct ParseResult {
  Config config;
  bool help = false;  // --help: print Usage() and exit 0
  std::string error;  // non-empty: print it and exit 2
};

ParseResult ParseFlags(const std::vector<std::string>& args);
std::string Usage();

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_FLAGS_H_
