// CallWatchdog: cancels a call that waits on its peer past a deadline — a request body
// that never comes, a reader that stops reading an export, an Ingest stream that goes
// idle.
//
// Why: the synchronous server's Read and Write wait as long as the peer wants, on a
// thread of the collector's bounded pool; a peer could hold threads (and an export's
// buffered chunks) for ever. The watchdog calls ServerContext::TryCancel once the armed
// deadline passes: the blocked Read/Write returns false and the handler ends the call.
//
//   {
//     CallWatchdog::Arm arm = watchdog->Watch(context, absl::Seconds(10));
//     if (!stream->Read(&request)) ...   // false, and context->IsCancelled(), past 10 s
//   }                                     // disarmed here
//
// A context is cancelled only while its Arm lives (under the watchdog's lock), so never
// after the handler has returned. One thread, waking every `tick`.
#ifndef OPMAP_COLLECTOR_CALL_WATCHDOG_H_
#define OPMAP_COLLECTOR_CALL_WATCHDOG_H_

#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace grpc {
class ServerContext;
}

namespace opmap::collector {

class CallWatchdog {
 public:
  // `counter` (may be null) counts the calls it cancels too (a metric).
  explicit CallWatchdog(std::atomic<int64_t>* counter = nullptr,
                        absl::Duration tick = absl::Milliseconds(100));
  ~CallWatchdog();  // stops the thread; no Arm may outlive the watchdog
  CallWatchdog(const CallWatchdog&) = delete;
  CallWatchdog& operator=(const CallWatchdog&) = delete;

  class Arm {
   public:
    Arm() = default;
    Arm(Arm&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), id_(other.id_) {}
    Arm& operator=(Arm&&) = delete;
    ~Arm();

   private:
    friend class CallWatchdog;
    Arm(CallWatchdog* owner, uint64_t id) : owner_(owner), id_(id) {}
    CallWatchdog* owner_ = nullptr;
    uint64_t id_ = 0;
  };

  // Cancels `context` once `timeout` passes, unless the returned Arm is gone by then.
  [[nodiscard]] Arm Watch(grpc::ServerContext* context, absl::Duration timeout);

  int64_t cancelled() const;  // calls cancelled so far

 private:
  struct Entry {
    grpc::ServerContext* context;
    absl::Time deadline;
  };
  void Loop();

  std::atomic<int64_t>* const counter_;
  const absl::Duration tick_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, Entry> armed_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  int64_t cancelled_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_CALL_WATCHDOG_H_
