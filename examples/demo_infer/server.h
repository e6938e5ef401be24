// The serving loop: --clients threads generate requests at Poisson arrival times (each
// client at rate/clients, which sums to a Poisson process at --rate) into a bounded queue;
// --workers threads each own a Backend and a Workspace and run one forward pass per request.
//
// A request's NVTX "request" range starts on its client at arrival and ends on the worker
// at completion; its latency is the same interval on the steady clock.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_SERVER_H_
#define OPMAP_EXAMPLES_DEMO_INFER_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "examples/demo_infer/flags.h"
#include "examples/demo_infer/model.h"
#include "examples/demo_infer/nvtx_marks.h"

namespace opmap::demo {

// When a request's NVTX range started and ended, each bracketed by CLOCK_REALTIME reads
// taken just before and just after the NVTX call, so a tool that timestamps inside the
// call (libopmap_inject does) puts its start in [start_before, start_after]: the soak test
// (tests/soak/) matches what the collector stored against these, request by request.
struct RequestTimes {
  uint64_t id = 0;
  int64_t start_before = 0, start_after = 0;
  int64_t end_before = 0, end_after = 0;
  int64_t injected_ns = 0;  // what --slow-every / --host-stall-us added to this request
};

struct ServeResult {
  std::vector<int64_t> latencies_ns;  // one per completed request, unordered
  std::vector<RequestTimes> times;    // with Config::request_log only; unordered
  int64_t wall_ns = 0;                // first client start to last completion
  uint64_t queue_full_waits = 0;      // arrivals that found the queue full
  // Order-independent digest of (request id, next tokens): equal across runs with the
  // same flags whatever the thread interleaving, so it shows the work was the same.
  uint64_t output_checksum = 0;
  uint64_t failed = 0;  // requests whose backend reported an error
  std::string first_error;
};

// Makes one Backend per worker with `make_backend` before any thread starts; a nullptr
// from it fails the run (first_error says so) before any request is generated.
ServeResult Serve(const Config& config, const Model& model, NvtxMarks& marks,
                  const std::function<std::unique_ptr<Backend>()>& make_backend);

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_SERVER_H_
