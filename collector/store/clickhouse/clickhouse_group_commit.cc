// ClickHouseStore ingest: a group of batches (of many sessions and agents) stored with one
// INSERT per table. Each batch is decided as if committed alone, in order (a duplicate, a
// seq past a complete session, stored); then the raw batches are inserted, then the rows
// of the sessions the group completes (every row marked with the group's flush), the
// sessions rows last. Why this is exactly once whichever collector a resend reaches:
// clickhouse_store.h, "Exactly once".
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "collector/store/clickhouse/clickhouse_internal.h"
#include "collector/store/clickhouse/clickhouse_rowbinary.h"
#include "collector/store/clickhouse/clickhouse_store.h"
#include "collector/store/rollup_buckets.h"

namespace opmap::collector {

using clickhouse_client::QuoteString;
using clickhouse_internal::RowBinaryReader;
using clickhouse_internal::RowBinaryWriter;

namespace {

using SessionId = std::pair<std::string, std::string>;  // agent, session
using BatchId = std::tuple<std::string, std::string, uint64_t>;

// What the store holds of the group's sessions before the group.
struct Stored {
  absl::flat_hash_map<SessionId, uint64_t> complete_seq;  // complete sessions: last seq
  absl::flat_hash_map<BatchId, bool> batches;             // stored seqs: whether last
};

// A flush id: random and never 0 (0 marks rows stored before schema v3).
uint64_t NewFlush() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen();
  absl::MutexLock lock(&mu);
  uint64_t f = 0;
  while (f == 0) f = absl::Uniform<uint64_t>(*gen);
  return f;
}

// Visits RowBinary rows of (agent String, session String, UInt64, and with `with_flag` a
// UInt8), the shape of both group lookups.
absl::Status ForEachSessionRow(
    std::string_view body, bool with_flag,
    const std::function<void(std::string_view, std::string_view, uint64_t, bool)>& visit) {
  RowBinaryReader r(body);
  while (!r.done()) {
    ASSIGN_OR_RETURN(const std::string_view agent, r.String());
    ASSIGN_OR_RETURN(const std::string_view session, r.String());
    ASSIGN_OR_RETURN(const uint64_t value, r.UInt64());
    uint8_t flag = 0;
    if (with_flag) {
      ASSIGN_OR_RETURN(flag, r.UInt8());
    }
    visit(agent, session, value, flag != 0);
  }
  return absl::OkStatus();
}

void WriteBatchRow(const BatchCommit& commit, RowBinaryWriter& w) {
  const opmap::v1::Batch& b = *commit.batch;
  const clickhouse_internal::Labels labels = clickhouse_internal::SortedLabels(b.resource());
  w.String(b.agent_id());
  w.String(b.session_id());
  w.UInt64(b.seq());
  w.UInt8(commit.rollup != nullptr ? 1 : 0);
  w.UInt32(clickhouse_internal::CaptureDay(b.window_start_ns(), b.window_end_ns()));
  w.Int64(b.window_start_ns());
  w.Int64(b.window_end_ns());
  w.Int64(commit.record_count);
  w.UInt32(commit.string_count_after);
  w.String(b.resource().host());
  w.String(b.resource().model_name());
  w.String(b.resource().model_revision());
  w.ArrayString(labels.keys);
  w.ArrayString(labels.values);
  w.String(commit.payload);
}

}  // namespace

absl::StatusOr<CommitOutcome> ClickHouseStore::CommitBatch(const BatchCommit& commit) {
  const BatchCommit* one[] = {&commit};
  return std::move(CommitBatches(one)[0]);
}

absl::StatusOr<ClickHouseStore::SessionWindow> ClickHouseStore::WindowOf(
    const BatchCommit& commit, int64_t pending_start_ns, int64_t pending_end_ns) {
  const opmap::v1::Batch& b = *commit.batch;
  SessionWindow window;
  // From the caller when it tracked it (the same on every collector); else read back.
  window.start_ns = commit.session_window_start_ns;
  window.end_ns = commit.session_window_end_ns;
  if (!commit.has_session_window) {
    ASSIGN_OR_RETURN(
        const std::string hull,
        Query(absl::StrFormat("SELECT toInt64(minIf(window_start_ns, window_start_ns > 0)), "
                              "toInt64(max(window_end_ns)) FROM %s WHERE %s AND seq != %d "
                              "FORMAT RowBinary",
                              Table("batches"),
                              clickhouse_internal::SessionKey(b.agent_id(), b.session_id()),
                              b.seq())));
    RowBinaryReader hr(hull);
    ASSIGN_OR_RETURN(window.start_ns, hr.Int64());
    ASSIGN_OR_RETURN(window.end_ns, hr.Int64());
    window.start_ns = clickhouse_internal::HullStart(
        clickhouse_internal::HullStart(window.start_ns, pending_start_ns), b.window_start_ns());
    window.end_ns = std::max({window.end_ns, pending_end_ns, b.window_end_ns()});
  }
  const analysis::SessionRollup& rollup = *commit.rollup;
  if (rollup.first_start_ns != 0 || rollup.last_end_ns != 0) {
    window.start_ns = clickhouse_internal::HullStart(window.start_ns, rollup.first_start_ns);
    window.end_ns = std::max(window.end_ns, rollup.last_end_ns);
  }
  window.bucket = BucketOf(window.start_ns, window.end_ns, bucket_ns_);
  return window;
}

std::vector<absl::StatusOr<CommitOutcome>> ClickHouseStore::CommitBatches(
    absl::Span<const BatchCommit* const> commits) {
  std::vector<absl::StatusOr<CommitOutcome>> outcomes(commits.size(),
                                                      absl::UnknownError("not committed"));
  std::vector<bool> refused(commits.size(), false);  // invalid: decided already
  // Which sessions and seqs to look up: the read-before-insert is skipped for a batch the
  // caller knows to follow its stored session (BatchCommit::follows_stored) unless it
  // completes the session.
  std::vector<std::string> session_keys, batch_keys;
  for (size_t i = 0; i < commits.size(); ++i) {
    const BatchCommit& c = *commits[i];
    if (absl::Status st = query_common::ValidateCommit(c); !st.ok()) {
      outcomes[i] = st;
      refused[i] = true;
      continue;
    }
    if (c.follows_stored && c.rollup == nullptr) continue;
    const opmap::v1::Batch& b = *c.batch;
    session_keys.push_back(
        absl::StrCat("(", QuoteString(b.agent_id()), ", ", QuoteString(b.session_id()), ")"));
    batch_keys.push_back(absl::StrCat("(", QuoteString(b.agent_id()), ", ",
                                      QuoteString(b.session_id()), ", ", b.seq(), ")"));
  }
  auto fail_pending = [&](const absl::Status& st) {
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (!refused[i]) outcomes[i] = st;
    }
    return outcomes;
  };
  Stored stored;
  if (!session_keys.empty()) {
    absl::StatusOr<std::string> body = Query(absl::StrFormat(
        "SELECT agent, session, toUInt64(max(last_seq)) FROM %s WHERE (agent, session) IN (%s) "
        "GROUP BY agent, session FORMAT RowBinary",
        Table("sessions"), absl::StrJoin(session_keys, ", ")));
    if (!body.ok()) return fail_pending(body.status());
    absl::Status read = ForEachSessionRow(
        *body, /*with_flag=*/false,
        [&](std::string_view agent, std::string_view session, uint64_t seq, bool) {
          stored.complete_seq[{std::string(agent), std::string(session)}] = seq;
        });
    if (!read.ok()) return fail_pending(read);
    body = Query(absl::StrFormat(
        "SELECT agent, session, seq, toUInt8(max(last)) FROM %s WHERE (agent, session, seq) IN "
        "(%s) GROUP BY agent, session, seq FORMAT RowBinary",
        Table("batches"), absl::StrJoin(batch_keys, ", ")));
    if (!body.ok()) return fail_pending(body.status());
    read = ForEachSessionRow(
        *body, /*with_flag=*/true,
        [&](std::string_view agent, std::string_view session, uint64_t seq, bool last) {
          stored.batches[{std::string(agent), std::string(session), seq}] = last;
        });
    if (!read.ok()) return fail_pending(read);
  }

  // Each batch in order, as if alone; the group's own batches count as stored for the
  // ones after them.
  RowBinaryWriter batch_rows;
  std::vector<size_t> completing;  // commits whose sessions this group completes
  struct Pending {
    int64_t start_ns = 0, end_ns = 0;
  };
  absl::flat_hash_map<SessionId, Pending> pending;  // this group's batches' windows
  for (size_t i = 0; i < commits.size(); ++i) {
    if (refused[i]) continue;
    const BatchCommit& c = *commits[i];
    const opmap::v1::Batch& b = *c.batch;
    SessionId sid{b.agent_id(), b.session_id()};
    BatchId bid{b.agent_id(), b.session_id(), b.seq()};
    if (auto it = stored.complete_seq.find(sid); it != stored.complete_seq.end()) {
      // A complete session's raw batches may have expired, so the batches table can't
      // tell a resend apart: anything up to its last seq is one.
      if (b.seq() <= it->second) {
        outcomes[i] = CommitOutcome::kDuplicate;
      } else {
        outcomes[i] = absl::FailedPreconditionError(absl::StrFormat(
            "seq: %d follows the last batch (%d) of complete session %s/%s", b.seq(),
            it->second, b.agent_id(), b.session_id()));
      }
      continue;
    }
    // A stored batch is a duplicate, unless it is the session's last one and the session
    // is not complete: a commit that failed after the batch; finish it.
    const auto st = stored.batches.find(bid);
    const bool is_stored = st != stored.batches.end();
    if (is_stored && (!st->second || c.rollup == nullptr)) {
      outcomes[i] = CommitOutcome::kDuplicate;
      continue;
    }
    Pending& p = pending[sid];
    if (!is_stored) {
      WriteBatchRow(c, batch_rows);
      stored.batches[bid] = c.rollup != nullptr;
    }
    if (c.rollup != nullptr) {
      completing.push_back(i);
      stored.complete_seq[sid] = b.seq();
    } else {
      p.start_ns = clickhouse_internal::HullStart(p.start_ns, b.window_start_ns());
      p.end_ns = std::max(p.end_ns, b.window_end_ns());
    }
    outcomes[i] = CommitOutcome::kStored;
  }

  // The completed sessions' rows, all of one flush.
  const uint64_t flush = NewFlush();
  clickhouse_internal::SessionRows rows;
  for (size_t i : completing) {
    const BatchCommit& c = *commits[i];
    const Pending& p = pending[SessionId{c.batch->agent_id(), c.batch->session_id()}];
    absl::StatusOr<SessionWindow> window = WindowOf(c, p.start_ns, p.end_ns);
    if (!window.ok()) return fail_pending(window.status());
    AppendSession(*c.batch, c, *window, flush, static_cast<uint32_t>(completing.size()), rows);
  }
  // A failure from here on fails every batch the group was storing (none is acknowledged);
  // the resends find what was stored and finish the rest.
  auto fail_stored = [&](const absl::Status& st) {
    for (auto& o : outcomes) {
      if (o.ok() && *o == CommitOutcome::kStored) o = st;
    }
    return outcomes;
  };
  if (!batch_rows.data().empty()) {
    if (absl::Status st = Insert("batches", clickhouse_internal::kBatchColumns, batch_rows.data());
        !st.ok()) {
      return fail_stored(st);
    }
  }
  if (absl::Status st = InsertSessionRows(rows); !st.ok()) return fail_stored(st);
  return outcomes;
}

}  // namespace opmap::collector
