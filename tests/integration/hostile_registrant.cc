// A process that registers with opmap-agent the way libopmap_inject does (kHello with a
// ring memfd) and then misbehaves, for the trust-boundary tests and the soak
// (tests/soak/soak.sh). The agent must survive each mode and keep serving the
// well-behaved workload next to it.
//
// usage: hostile_registrant AGENT_SOCKET MODE SECONDS
// modes:
//   shrink    a memfd resized (shrunk and grown) in a loop, sealed against shrinking at a
//             random moment: the SIGBUS race of a reader that sizes before it seals
//   flood     a well-formed ring written as fast as one thread can (valid kernel records)
//   counters  a well-formed ring whose producer-written counters jump to random values
//   windows   100,000 distinct window marks per window (a linear window lookup is slow)
//   garbage   random bytes over the ring's records and positions (poisons the reader)
//   deaf      shuts its socket's read side after the welcome: the agent's next command
//             fails to send (EPIPE) while reads still see a live peer
//   foreign   as uid 65534 (needs root; exit 3 otherwise), connects and closes as fast as
//             it can: the agent refuses every connection (a local user's flood)
// Prints "registered" once the agent welcomed it; answers the agent's window commands.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "agent/inject/control_socket.h"
#include "abi/ring_records.h"
#include "abi/control_messages.h"
#include "agent/inject/ring_memfd.h"
#include "agent/inject/ring_writer.h"

namespace {

using namespace opmap;        // NOLINT
using namespace opmap::ring;  // NOLINT

constexpr uint64_t kCapacity = uint64_t{1} << 22;  // 4 MiB of records

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A kernel record with a short name, as CUPTI would give the library.
void WriteKernel(RingWriter& w, uint64_t i) {
  static constexpr std::string_view kName = "hostile_flood_kernel";
  auto* r = w.Reserve<KernelRecord>(kKernel, kName.size());
  if (r == nullptr) return;
  const int64_t t = NowNs();
  r->start_ns = t;
  r->end_ns = t + 1000;
  r->correlation_id = i + 1;
  r->name_len = kName.size();
  RingWriter::CopyAfter(r, kName);
  w.Commit(&r->h, sizeof(*r) + kName.size());
}

void WriteWindowMark(RingWriter& w, uint64_t id, uint32_t mark) {
  auto* r = w.Reserve<WindowRecord>(kWindow, 0);
  if (r == nullptr) return;
  r->window_id = id;
  r->time_ns = NowNs();
  r->mark = mark;
  w.Commit(&r->h, sizeof(*r));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: hostile_registrant AGENT_SOCKET MODE SECONDS\n");
    return 2;
  }
  const std::string socket_path = argv[1];
  const std::string mode = argv[2];
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[3]));
  std::mt19937_64 rng(std::random_device{}());

  if (mode == "foreign") {
    if (getuid() != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
      std::fprintf(stderr, "foreign: cannot become uid 65534 (needs root)\n");
      return 3;
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
    int64_t connections = 0;
    while (std::chrono::steady_clock::now() < until) {
      const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) ++connections;
      close(fd);
    }
    std::printf("foreign connections %lld\n", static_cast<long long>(connections));
    return 0;
  }

  inject::RingMemory ring;
  std::atomic<bool> stop{false};
  std::thread mischief;
  if (mode == "shrink") {
    // Not sealed yet: shrink and grow it until a random moment, then shrink and seal.
    ring.fd = memfd_create("hostile-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ring.capacity = kCapacity;
    const off_t big = static_cast<off_t>(kHeaderBytes + kCapacity);
    if (ring.fd < 0 || ftruncate(ring.fd, big) != 0) return 1;
    void* base = mmap(nullptr, big, PROT_READ | PROT_WRITE, MAP_SHARED, ring.fd, 0);
    auto* h = static_cast<RingHeader*>(base);
    h->magic = kMagic;
    h->version = kVersion;
    h->header_bytes = kHeaderBytes;
    h->pid = static_cast<uint32_t>(getpid());
    h->capacity = kCapacity;
    munmap(base, big);
    const uint64_t seal_after = 1 + rng() % 2000;
    mischief = std::thread([&, seal_after] {
      for (uint64_t i = 0; !stop.load(); ++i) {
        (void)ftruncate(ring.fd, i % 2 == 0 ? kHeaderBytes : big);
        if (i == seal_after) {
          (void)ftruncate(ring.fd, kHeaderBytes);
          (void)fcntl(ring.fd, F_ADD_SEALS, F_SEAL_SHRINK);
        }
      }
    });
  } else if (!inject::CreateRing(kCapacity, &ring)) {
    std::fprintf(stderr, "hostile_registrant: cannot create a ring\n");
    return 1;
  }

  const int fd = inject::ConnectUnix(socket_path, 2000);
  if (fd < 0) {
    std::fprintf(stderr, "hostile_registrant: cannot connect to %s\n", socket_path.c_str());
    return 1;
  }
  HelloBody hello{};
  hello.version = kVersion;
  hello.pid = static_cast<uint32_t>(getpid());
  hello.ring_capacity = ring.capacity;
  const std::string metadata = "model=hostile\nmodel_revision=" + mode + "\n";
  hello.metadata_len = static_cast<uint32_t>(metadata.size());
  if (!inject::SendMessage(fd, kHello, &hello, sizeof(hello), metadata.data(), metadata.size(),
                           ring.fd)) {
    return 1;
  }
  ControlHeader h{};
  std::string body;
  const bool welcomed =
      inject::ReadMessage(fd, 5000, &h, &body) == inject::ReadResult::kMessage && h.type == kWelcome;
  std::printf("%s\n", welcomed ? "registered" : "refused");
  std::fflush(stdout);
  if (mode == "deaf") {
    shutdown(fd, SHUT_RD);
    std::this_thread::sleep_until(until);
    close(fd);
    return 0;
  }

  if (ring.base != nullptr && mode != "shrink") {
    mischief = std::thread([&] {
      RingWriter w(ring.base);
      RingHeader* rh = w.header();
      auto* data = static_cast<uint8_t*>(ring.base) + kHeaderBytes;
      for (uint64_t i = 0; !stop.load(); ++i) {
        if (mode == "flood") {
          WriteKernel(w, i);
        } else if (mode == "counters") {
          for (auto& d : rh->drops) d.store(rng(), std::memory_order_relaxed);
          rh->records_committed.store(rng(), std::memory_order_relaxed);
          WriteKernel(w, i);
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        } else if (mode == "windows") {
          WriteWindowMark(w, i, kWindowBegin);
          if (i % 1024 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
        } else if (mode == "garbage") {
          for (int j = 0; j < 64; ++j) data[rng() % kCapacity] = static_cast<uint8_t>(rng());
          if (i % 16 == 0) rh->write_pos.store(rng() % (kCapacity * 4));
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        } else {
          return;
        }
      }
    });
  }

  // Answer window commands like the library: a window ends at its duration.
  uint64_t window = 0;
  int64_t window_end_ns = 0;
  while (std::chrono::steady_clock::now() < until && welcomed) {
    const inject::ReadResult r = inject::ReadMessage(fd, 50, &h, &body);
    if (r == inject::ReadResult::kClosed) break;
    if (r == inject::ReadResult::kMessage && h.type == kStartWindow &&
        body.size() >= sizeof(StartWindowBody)) {
      StartWindowBody start;
      std::memcpy(&start, body.data(), sizeof(start));
      window = start.window_id;
      window_end_ns = NowNs() + start.duration_ns;
    }
    const bool stop_asked = r == inject::ReadResult::kMessage && h.type == kStopWindow;
    if (window != 0 && (stop_asked || NowNs() >= window_end_ns)) {
      WindowDoneBody done{};
      done.window_id = window;
      (void)inject::SendMessage(fd, kWindowDone, &done, sizeof(done), nullptr, 0);
      window = 0;
    }
  }
  stop.store(true);
  if (mischief.joinable()) mischief.join();
  close(fd);
  return 0;
}
