// CallAdmission: how many calls of one kind (Query calls, trace exports, Ingest streams)
// may be in progress at once, in all and per principal (token).
//
// Why: the collector serves each call on a thread of its own (gRPC's synchronous server,
// whose thread pool is bounded). Without a per-token bound, one token's held calls —
// headers sent, body never — took every thread, and every other client, ingest included,
// was refused. With one, a token can hold at most its own share: the rest of its calls
// are refused at once (their thread returns), and every kind keeps its own reserve.
//
//   CallAdmission queries("Query calls", "--max-queries", 32, "--max-queries-per-token", 8);
//   absl::StatusOr<CallAdmission::Ticket> t = queries.Admit(principal.name);
//   if (!t.ok()) return ToGrpcStatus(t.status());   // RESOURCE_EXHAUSTED naming the limit
//   ... serve; the ticket's destructor releases the slot
//
// Thread safety: Admit and the tickets' destructors may run on any threads.
#ifndef OPMAP_COLLECTOR_CALL_ADMISSION_H_
#define OPMAP_COLLECTOR_CALL_ADMISSION_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace opmap::collector {

class CallAdmission {
 public:
  // `what` names the calls ("Query calls"); the flags name the limits in refusals.
  CallAdmission(std::string what, std::string total_flag, int64_t max_total,
                std::string per_principal_flag, int64_t max_per_principal);
  CallAdmission(const CallAdmission&) = delete;
  CallAdmission& operator=(const CallAdmission&) = delete;

  // Holds one slot while it lives (movable; a moved-from ticket holds none).
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept { *this = std::move(other); }
    Ticket& operator=(Ticket&& other) noexcept;
    ~Ticket() { Release(); }

   private:
    friend class CallAdmission;
    Ticket(CallAdmission* owner, std::string principal)
        : owner_(owner), principal_(std::move(principal)) {}
    void Release();
    CallAdmission* owner_ = nullptr;
    std::string principal_;
  };

  // A slot, or RESOURCE_EXHAUSTED naming the limit reached and its flag.
  absl::StatusOr<Ticket> Admit(const std::string& principal);

  int64_t in_progress() const;
  int64_t refused() const;

 private:
  void Release(const std::string& principal);

  const std::string what_, total_flag_, per_principal_flag_;
  const int64_t max_total_, max_per_principal_;
  mutable absl::Mutex mu_;
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, int64_t> by_principal_ ABSL_GUARDED_BY(mu_);
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_CALL_ADMISSION_H_
