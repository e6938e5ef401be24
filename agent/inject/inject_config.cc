#include "agent/inject/inject_config.h"

#include <cstdlib>
#include <cstring>

#include "abi/control_messages.h"
#include "abi/ring_protocol.h"

namespace opmap::inject {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// A malformed number reads as `fallback`: the library must never refuse to load (or
// abort its host) over a typo in an environment variable.
int64_t EnvInt(const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || n < lo || n > hi) return fallback;
  return n;
}

}  // namespace

uint64_t RingCapacityFor(uint64_t requested) {
  if (requested == 0) return ring::kDefaultCapacity;
  uint64_t c = ring::kMinCapacity;
  while (c < requested && c < ring::kMaxCapacity) c <<= 1;
  return c;
}

InjectConfig InjectConfig::FromEnv() {
  InjectConfig c;
  c.socket_path = Env("OPMAP_AGENT_SOCKET");
  if (c.socket_path.empty()) c.socket_path = ring::kDefaultAgentSocket;
  c.ring_bytes = RingCapacityFor(
      static_cast<uint64_t>(EnvInt("OPMAP_RING_BYTES", 0, 0, int64_t{1} << 40)));
  c.capture_file = Env("OPMAP_CAPTURE_FILE");
  c.capture_seconds = EnvInt("OPMAP_CAPTURE_SECONDS", 10, 1, 7 * 24 * 3600);
  c.stalls = Env("OPMAP_STALLS") == "1";
  c.graph_nodes = Env("OPMAP_GRAPH_NODES") == "1";
  c.init_wait_ms = EnvInt("OPMAP_INIT_WAIT_MS", 0, 0, 600'000);
  c.model = Env("OPMAP_MODEL");
  c.model_revision = Env("OPMAP_MODEL_REVISION");
  c.precision = Env("OPMAP_PRECISION");
  c.labels = Env("OPMAP_LABELS");
  return c;
}

}  // namespace opmap::inject
