// The library's settings, read once from the environment when it loads. Every variable is
// the process owner's own choice (it is their environment); nothing here comes from the
// agent, so no remote party chooses a path inside the profiled process.
//
//   OPMAP_AGENT_SOCKET     the agent's Unix socket (default /run/opmap/agent.sock)
//   OPMAP_RING_BYTES       ring data capacity; rounded up to a power of two and clamped
//                          to [64 KiB, 1 GiB] (default 8 MiB)
//   OPMAP_CAPTURE_FILE     debug mode without an agent: capture one window into this file
//   OPMAP_CAPTURE_SECONDS  ... of this many seconds (default 10)
//   OPMAP_STALLS=1         ... with CUPTI PC-sampling stall reasons too
//   OPMAP_INIT_WAIT_MS     wait up to this long at load for the agent's first window, so a
//                          short process is captured from its first NVTX call (default 0;
//                          in OPMAP_CAPTURE_FILE mode 5000, for the library's own window)
//   OPMAP_GRAPH_NODES=1    record CUDA graph nodes with their NVTX ranges as graphs are
//                          built (agent/inject/README.md): holds CUPTI's subscriber for the
//                          life of the process and keeps NVTX stacks outside windows
//   OPMAP_MODEL, OPMAP_MODEL_REVISION, OPMAP_PRECISION   sent in the hello metadata
#ifndef OPMAP_AGENT_INJECT_INJECT_CONFIG_H_
#define OPMAP_AGENT_INJECT_INJECT_CONFIG_H_

#include <cstdint>
#include <string>

namespace opmap::inject {

struct InjectConfig {
  std::string socket_path;
  uint64_t ring_bytes = 0;
  std::string capture_file;  // empty: agent mode
  int64_t capture_seconds = 10;
  bool stalls = false;
  bool graph_nodes = false;
  int64_t init_wait_ms = 0;
  std::string model;
  std::string model_revision;
  std::string precision;
  std::string labels;  // OPMAP_LABELS: "key=value,..." job labels, parsed by the agent

  static InjectConfig FromEnv();
};

// Rounds `requested` up to a power of two inside the ring's bounds (0 = the default).
uint64_t RingCapacityFor(uint64_t requested);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_INJECT_CONFIG_H_
