#include "agent/inject/control_client.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "agent/inject/capture_state.h"
#include "agent/inject/control_socket.h"
#include "agent/inject/metadata.h"

namespace opmap::inject {
namespace {

constexpr int64_t kFirstBackoffMs = 1000;
constexpr int64_t kMaxBackoffMs = 30'000;
constexpr int kConnectTimeoutMs = 1000;
constexpr int kWelcomeTimeoutMs = 5000;

void SleepMs(int64_t ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1'000'000)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

uint32_t Capabilities() {
#if OPMAP_INJECT_HAVE_CUPTI
  return ring::kCaptureNvtx | ring::kCaptureCupti | ring::kCaptureStalls;
#else
  return ring::kCaptureNvtx;
#endif
}

}  // namespace

ControlClient::ControlClient(const InjectConfig& config, const RingMemory& ring,
                             WindowController* windows, FirstWindowLatch* latch,
                             const std::atomic<uint32_t>* loaded_by)
    : config_(config), ring_(ring), windows_(windows), latch_(latch), loaded_by_(loaded_by) {}

void ControlClient::Run() {
  int64_t backoff_ms = kFirstBackoffMs;
  while (true) {
    const int fd = ConnectUnix(config_.socket_path, kConnectTimeoutMs);
    if (fd >= 0 && Hello(fd)) {
      {
        std::lock_guard<std::mutex> lock(send_mu_);
        fd_ = fd;
      }
      const bool detached = Serve(fd);
      {
        std::lock_guard<std::mutex> lock(send_mu_);
        fd_ = -1;
        close(fd);
      }
      if (detached) return;
      backoff_ms = kFirstBackoffMs;  // it was a working agent: come back soon
    } else if (fd >= 0) {
      close(fd);
    }
    latch_->Settle();  // nobody to wait for right now
    SleepMs(backoff_ms);
    backoff_ms = std::min(backoff_ms * 2, kMaxBackoffMs);
  }
}

bool ControlClient::Hello(int fd) {
  const std::string metadata =
      BuildMetadata(config_, loaded_by_->load(std::memory_order_relaxed));
  ring::HelloBody hello{};
  hello.version = ring::kVersion;
  hello.pid = static_cast<uint32_t>(getpid());
  hello.ring_capacity = ring_.capacity;
  hello.capabilities = Capabilities();
  hello.metadata_len = static_cast<uint32_t>(metadata.size());
  if (!SendMessage(fd, ring::kHello, &hello, sizeof(hello), metadata.data(), metadata.size(),
                   ring_.fd)) {
    return false;
  }
  ring::ControlHeader h{};
  std::string body;
  return ReadMessage(fd, kWelcomeTimeoutMs, &h, &body) == ReadResult::kMessage &&
         h.type == ring::kWelcome;
}

bool ControlClient::Serve(int fd) {
  while (true) {
    const int64_t deadline = windows_->deadline_ns();
    int timeout_ms = -1;
    if (deadline != 0 && deadline != INT64_MAX) {
      const int64_t left_ns = std::max<int64_t>(0, deadline - NowNs());
      timeout_ms = static_cast<int>(std::min<int64_t>(INT_MAX, (left_ns + 999'999) / 1'000'000));
    }
    ring::ControlHeader h{};
    std::string body;
    const ReadResult r = ReadMessage(fd, timeout_ms, &h, &body);
    if (r == ReadResult::kTimeout) {
      if (deadline != 0 && NowNs() >= deadline) EndAndReport(false);
      continue;
    }
    if (r == ReadResult::kClosed) {
      // The agent is gone (or spoke nonsense). End the window so its end mark is in the
      // ring for whichever agent reads it next; the report has nowhere to go.
      EndAndReport(true);
      return false;
    }
    switch (h.type) {
      case ring::kStartWindow: {
        ring::StartWindowBody start{};
        if (body.size() < sizeof(start)) break;
        std::memcpy(&start, body.data(), sizeof(start));
        if (windows_->Begin(start.window_id, start.duration_ns, start.flags, this, latch_)) {
          window_id_ = start.window_id;
        }
        latch_->Settle();
        break;
      }
      case ring::kStopWindow: {
        ring::StopWindowBody stop{};
        if (body.size() < sizeof(stop)) break;
        std::memcpy(&stop, body.data(), sizeof(stop));
        if (window_id_ != 0 && stop.window_id == window_id_) EndAndReport(false);
        break;
      }
      case ring::kDetach: {
        ring::WindowDoneBody done{};
        bool ended = false;
        windows_->Finalize(&done, &ended);
        if (ended) SendDone(done, false);
        window_id_ = 0;
        return true;
      }
      default:
        break;  // kWelcome again, or a newer agent's message: nothing to do
    }
  }
}

void ControlClient::EndAndReport(bool dont_wait) {
  ring::WindowDoneBody done{};
  if (windows_->End(&done)) SendDone(done, dont_wait);
  window_id_ = 0;
}

void ControlClient::SendDone(const ring::WindowDoneBody& done, bool dont_wait) {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (fd_ >= 0) {
    SendMessage(fd_, ring::kWindowDone, &done, sizeof(done), nullptr, 0, -1, dont_wait);
  }
}

void ControlClient::Status(uint16_t component, uint16_t code, std::string_view message) {
  ring::StatusUpdateBody s{};
  s.component = component;
  s.code = code;
  const size_t n = std::min<size_t>(message.size(), ring::kMaxControlBody - sizeof(s));
  s.message_len = static_cast<uint32_t>(n);
  std::lock_guard<std::mutex> lock(send_mu_);
  if (fd_ >= 0) SendMessage(fd_, ring::kStatusUpdate, &s, sizeof(s), message.data(), n);
}

void ControlClient::AtExit() {
  ring::WindowDoneBody done{};
  bool ended = false;
  windows_->Finalize(&done, &ended, 200'000'000);
  if (!ended) return;
  // Bounded too: the control thread might be inside a send right now.
  std::unique_lock<std::mutex> lock(send_mu_, std::try_to_lock);
  if (lock.owns_lock() && fd_ >= 0) {
    SendMessage(fd_, ring::kWindowDone, &done, sizeof(done), nullptr, 0, -1, true);
  }
}

}  // namespace opmap::inject
