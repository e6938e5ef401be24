// DropReport: which of the outbox's batch drops the collector has been told of.
//
// A dropped batch cannot carry its own drop, so the counts ride on a later batch (the
// "carrier"). The carrier can be lost too: a full spool drops its oldest segment, carriers
// included, after the outbox took them. So a carrier's counts stay pending until the
// collector settles it, and go to the next carrier if the outbox no longer holds it.
// Every drop the outbox counts is then reported once (twice only if a batch the spool
// dropped had already been sent and is acked after all, as the outbox counted it twice).
//
// Thread safety: one mutex; Take/Untake/Carried from the producer, Settled from the
// sender thread (before it acks the outbox, so a carrier gone from the outbox and still
// pending here was dropped, not acked).
#ifndef OPMAP_AGENT_DAEMON_DROP_REPORT_H_
#define OPMAP_AGENT_DAEMON_DROP_REPORT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "agent/spool/outbox_types.h"

namespace opmap::agent {

class DropReport {
 public:
  using Counts = std::array<uint64_t, kDropCauseCount>;  // by DropCause

  // What the next carrier takes: `totals` (the outbox's drops since Open) not yet
  // attached to a carrier, plus the counts of carriers `held` says the outbox lost.
  Counts Take(const Counts& totals, const std::function<bool(const OutboxKey&)>& held);
  // The carrier of Take's counts was refused: the next one takes them.
  void Untake(const Counts& counts);
  // The outbox took the carrier `key` of `counts`.
  void Carried(OutboxKey key, const Counts& counts);
  // The collector settled batch `seq` of `session` (and, acks being cumulative, every
  // earlier one of that session).
  void Settled(std::string_view session, uint64_t seq);

  size_t pending_carriers() const;

 private:
  struct Carrier {
    OutboxKey key;
    Counts counts;
  };
  static void Add(Counts& into, const Counts& counts);

  mutable std::mutex mu_;
  Counts attached_{};  // of the outbox's totals, attached to some carrier
  Counts returned_{};  // from lost or refused carriers, for the next one
  std::vector<Carrier> pending_;  // taken by the outbox, not yet settled
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_DROP_REPORT_H_
