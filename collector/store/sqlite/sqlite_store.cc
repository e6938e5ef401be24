// SqliteStore: opening, schema, ingest (CommitBatch), raw payloads and retention.
// The queries are in sqlite_query.cc.
#include "collector/store/sqlite/sqlite_store.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/mapping/kernel_mapper.h"
#include "collector/store/query_common.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sqlite/sqlite_buckets.h"
#include "collector/store/sketch_columns.h"
#include "collector/store/sqlite/sqlite_schema.h"
#include "collector/store/sqlite/sqlite_wal_check.h"
#include "common/text/json_writer.h"

namespace opmap::collector {
namespace {

// Labels as a JSON object with sorted keys (proto maps have no order), so equal label
// sets store equal text; queries match them with json_each.
std::string LabelsJson(const opmap::v1::Resource& resource) {
  std::vector<std::pair<std::string_view, std::string_view>> labels(resource.labels().begin(),
                                                                    resource.labels().end());
  std::sort(labels.begin(), labels.end());
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out.push_back(',');
    text::AppendJsonEscaped(labels[i].first, &out);
    out.push_back(':');
    text::AppendJsonEscaped(labels[i].second, &out);
  }
  out.push_back('}');
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                               const SqliteStoreOptions& options) {
  // Before SQLite reads the log (and would silently cut it at a damaged frame). What it
  // would ignore of a damaged log is copied aside first (SQLite's next write goes over
  // it); it then reads the valid prefix, and the commit mark below decides: every
  // acknowledged commit still there is a recovery, else a refusal.
  uint64_t damaged_from = 0;
  const absl::Status wal =
      path == ":memory:" ? absl::OkStatus() : CheckWalFile(path, &damaged_from);
  if (!wal.ok() && !absl::IsDataLoss(wal)) return wal;
  std::string kept;
  if (!wal.ok()) {
    absl::StatusOr<std::string> tail = KeepWalTail(path, damaged_from);
    if (!tail.ok()) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s; SQLite would silently drop the log from there on, and that part cannot be kept "
          "aside to recover from (%s): free space and start again (docs/operations.md, \"A "
          "damaged store\")",
          wal.message(), tail.status().message()));
    }
    kept = *std::move(tail);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db, sqlite::Database::Open(path));
  ASSIGN_OR_RETURN(const int64_t bucket_ns, SetUpSchema(*db, options));
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db), bucket_ns));
  {
    absl::MutexLock lock(&store->mu_);
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     store->db_->Prepare("SELECT value FROM meta WHERE key = 'commits'"));
    ASSIGN_OR_RETURN(bool row, st.Step());
    store->commits_ = row ? st.Int(0) : 0;
  }
  if (path == ":memory:") return store;  // a second connection would be another database
  {
    absl::MutexLock lock(&store->mu_);
    ASSIGN_OR_RETURN(store->mark_, CommitMark::Open(path));
    if (store->mark_->acknowledged() > store->commits_) {
      return absl::DataLossError(absl::StrFormat(
          "%s: the database holds %d batch commits but %d were acknowledged (%s): "
          "acknowledged data was lost, most likely with a damaged write-ahead log; it is not "
          "opened (docs/operations.md, \"A damaged store\")%s",
          path, store->commits_, store->mark_->acknowledged(), store->mark_->path(),
          wal.ok() ? "" : absl::StrCat("; the write-ahead log is damaged (", wal.message(),
                                       "): its bytes from the damage on are kept at ", kept)));
    }
    if (!wal.ok()) {
      // Every acknowledged commit is in the log's valid prefix: copy it into the database
      // and empty the log, so the damaged tail can never be read or appended after.
      ASSIGN_OR_RETURN(std::string busy, store->db_->PragmaValue("PRAGMA wal_checkpoint(TRUNCATE)"));
      if (busy != "0") {
        return absl::UnavailableError(absl::StrFormat(
            "%s: recovering the write-ahead log: the checkpoint was blocked (busy %s); what "
            "follows the damage is kept at %s",
            path, busy, kept));
      }
      store->open_notes_.push_back(absl::StrFormat(
          "recovered a damaged write-ahead log (%s): SQLite read it up to the damage, and the "
          "database holds all %d acknowledged batch commits (%d in all); the log's bytes from "
          "the damage on (never acknowledged) are kept at %s",
          wal.message(), store->mark_->acknowledged(), store->commits_, kept));
    }
  }

  ASSIGN_OR_RETURN(store->reader_, sqlite::Database::Open(path));
  RETURN_IF_ERROR(ConfigureConnection(*store->reader_, options));
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> ckpt, sqlite::Database::Open(path));
  RETURN_IF_ERROR(ConfigureConnection(*ckpt, options));
  ASSIGN_OR_RETURN(std::string page_size, ckpt->PragmaValue("PRAGMA page_size"));
  // In pages, as the wal hook counts; at most INT_MAX / 16 so the hard limit fits an int.
  const int pages = static_cast<int>(std::clamp<int64_t>(
      options.checkpoint_bytes / std::max(1, std::atoi(page_size.c_str())), 1,
      std::numeric_limits<int>::max() / 16));
  SqliteStore* self = store.get();
  store->checkpointer_ = std::make_unique<WalCheckpointer>(
      std::move(ckpt), pages, pages * 16, [self](absl::FunctionRef<void()> fn) {
        absl::MutexLock lock(&self->mu_);
        fn();
      });
  absl::MutexLock lock(&store->mu_);
  sqlite::Database* writer = store->db_.get();
  store->db_->SetWalHook([self, writer](int wal_pages) {
    // Inside the writer's COMMIT, under mu_. Past the hard limit the writer copies the
    // WAL itself (as SQLite's automatic checkpoint would); a failure leaves it for later.
    if (self->checkpointer_->OnCommit(wal_pages)) (void)writer->Checkpoint();
  });
  return store;
}

absl::Status SqliteStore::CheckIntegrity() {
  if (reader_ == nullptr) return absl::OkStatus();  // ":memory:" has no file to damage
  // A connection of its own: the query connection's page cache could hide damage done
  // to the file since those pages were read. Ingest and queries go on meanwhile.
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db, sqlite::Database::Open(reader_->path()));
  absl::StatusOr<std::string> check = db->PragmaValue("PRAGMA quick_check");
  if (check.ok() && *check == "ok") return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "%s: the store failed PRAGMA quick_check (%s): move it aside and restore the last "
      "backup (docs/operations.md, \"A damaged store\")",
      db->path(), check.ok() ? *check : std::string(check.status().message())));
}

absl::Status SqliteStore::RemoveAllRowsForTesting() {
  if (reader_ != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: only a \":memory:\" store can be emptied", reader_->path()));
  }
  absl::MutexLock lock(&mu_);
  std::vector<std::string> tables;
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("SELECT name FROM sqlite_master WHERE type = 'table'"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      tables.emplace_back(st.Text(0));
    }
  }
  ASSIGN_OR_RETURN(sqlite::Transaction tx, sqlite::Transaction::Begin(*db_));
  for (const std::string& table : tables) {
    if (table == "meta") {
      RETURN_IF_ERROR(db_->Exec("DELETE FROM meta WHERE key = 'commits'"));
    } else {
      RETURN_IF_ERROR(db_->Exec(absl::StrCat("DELETE FROM \"", table, "\"")));
    }
  }
  RETURN_IF_ERROR(tx.Commit());
  commits_ = 0;
  return absl::OkStatus();
}

SqliteStore::~SqliteStore() {
  // The hook points at the checkpointer; the writer closes last (its close checkpoints
  // what is left and removes the WAL).
  if (checkpointer_ != nullptr) {
    {
      absl::MutexLock lock(&mu_);
      db_->SetWalHook(nullptr);
    }
    checkpointer_.reset();
  }
  reader_.reset();
}

absl::StatusOr<SessionState> SqliteStore::GetSession(std::string_view agent_id,
                                                     std::string_view session_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(sqlite::Statement st,
                   db_->Prepare("SELECT last_seq, string_count, complete FROM sessions "
                                "WHERE agent = ?1 AND session = ?2"));
  st.BindText(1, agent_id).BindText(2, session_id);
  ASSIGN_OR_RETURN(bool row, st.Step());
  SessionState state;
  if (!row) return state;
  state.last_seq = static_cast<uint64_t>(st.Int(0));
  state.string_count = static_cast<uint32_t>(st.Int(1));
  state.complete = st.Int(2) != 0;
  return state;
}

absl::StatusOr<CommitOutcome> SqliteStore::CommitBatch(const BatchCommit& commit) {
  const BatchCommit* one[] = {&commit};
  std::vector<absl::StatusOr<CommitOutcome>> outcome = CommitBatches(one);
  return std::move(outcome[0]);
}

std::vector<absl::StatusOr<CommitOutcome>> SqliteStore::CommitBatches(
    absl::Span<const BatchCommit* const> commits) {
  std::vector<absl::StatusOr<CommitOutcome>> outcomes(commits.size(),
                                                      absl::UnknownError("not committed"));
  absl::MutexLock lock(&mu_);
  // One transaction for the group, a savepoint per batch: a batch that fails rolls back
  // alone; the group is durable at the one COMMIT (the guard rolls back on return).
  absl::StatusOr<sqlite::Transaction> tx = sqlite::Transaction::Begin(*db_);
  if (!tx.ok()) return std::vector<absl::StatusOr<CommitOutcome>>(commits.size(), tx.status());
  int64_t stored = 0;
  group_buckets_.Clear();  // what a failed group left
  for (size_t i = 0; i < commits.size(); ++i) {
    absl::Status begun = db_->Exec("SAVEPOINT batch");
    batch_buckets_.Clear();
    if (begun.ok()) outcomes[i] = CommitOneLocked(*commits[i]);
    if (!begun.ok()) {
      outcomes[i] = begun;
    } else if (!outcomes[i].ok()) {
      absl::Status undone = db_->Exec("ROLLBACK TO batch");
      undone.Update(db_->Exec("RELEASE batch"));
      // Not undone: the transaction is in an unknown state; nothing of it may commit.
      if (!undone.ok()) {
        return std::vector<absl::StatusOr<CommitOutcome>>(commits.size(), undone);
      }
    } else if (absl::Status released = db_->Exec("RELEASE batch"); !released.ok()) {
      return std::vector<absl::StatusOr<CommitOutcome>>(commits.size(), released);
    } else if (*outcomes[i] == CommitOutcome::kStored) {
      ++stored;
      group_buckets_.Absorb(batch_buckets_);
    }
  }
  batch_buckets_.Clear();
  // The group's bucket rows, merged once per key (a failure fails the whole group).
  if (absl::Status merged = group_buckets_.Flush(*db_); !merged.ok()) {
    group_buckets_.Clear();
    return std::vector<absl::StatusOr<CommitOutcome>>(commits.size(), merged);
  }
  if (stored > 0) {
    absl::StatusOr<sqlite::Statement> st =
        db_->Prepare("INSERT INTO meta(key, value) VALUES('commits', ?1) "
                     "ON CONFLICT(key) DO UPDATE SET value = ?1");
    absl::Status counted = st.status();
    if (st.ok()) counted = st->BindInt(1, commits_ + stored).Run();
    if (!counted.ok()) return std::vector<absl::StatusOr<CommitOutcome>>(commits.size(), counted);
  }
  if (absl::Status done = tx->Commit(); !done.ok()) {
    return std::vector<absl::StatusOr<CommitOutcome>>(commits.size(), done);
  }
  commits_ += stored;
  // After the commit returned: the mark never claims a commit the database may lack.
  // A failed write only weakens the check at the next open; the batches are stored.
  if (stored > 0 && mark_ != nullptr) (void)mark_->Write(commits_);
  return outcomes;
}

absl::StatusOr<CommitOutcome> SqliteStore::CommitOneLocked(const BatchCommit& commit) {
  RETURN_IF_ERROR(query_common::ValidateCommit(commit));
  const opmap::v1::Batch& b = *commit.batch;
  const int64_t seq = static_cast<int64_t>(b.seq());
  const opmap::v1::Resource& res = b.resource();
  const std::string labels = LabelsJson(res);
  int64_t session_rowid = 0;
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("SELECT id, last_seq, complete FROM sessions "
                                  "WHERE agent = ?1 AND session = ?2"));
    st.BindText(1, b.agent_id()).BindText(2, b.session_id());
    ASSIGN_OR_RETURN(bool found, st.Step());
    if (found) {
      session_rowid = st.Int(0);
      const int64_t last_seq = st.Int(1);
      // A complete session's raw batches may have expired, so the batches table can't
      // tell a resend apart: anything up to its last seq is one.
      if (st.Int(2) != 0) {
        if (seq <= last_seq) return CommitOutcome::kDuplicate;
        return absl::FailedPreconditionError(absl::StrFormat(
            "seq: %d follows the last batch (%d) of complete session %s/%s", seq, last_seq,
            b.agent_id(), b.session_id()));
      }
    }
  }
  if (session_rowid != 0) {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("SELECT 1 FROM batches WHERE session_id = ?1 AND seq = ?2"));
    st.BindInt(1, session_rowid).BindInt(2, seq);
    ASSIGN_OR_RETURN(bool exists, st.Step());
    if (exists) return CommitOutcome::kDuplicate;
  }
  if (session_rowid == 0) {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("INSERT INTO sessions(agent, session, last_seq, string_count, "
                                  "host, model, revision, labels_json, window_start_ns, "
                                  "window_end_ns) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
    st.BindText(1, b.agent_id()).BindText(2, b.session_id()).BindInt(3, seq);
    st.BindInt(4, commit.string_count_after).BindText(5, res.host()).BindText(6, res.model_name());
    st.BindText(7, res.model_revision()).BindText(8, labels);
    st.BindInt(9, b.window_start_ns()).BindInt(10, b.window_end_ns());
    RETURN_IF_ERROR(st.Run());
    session_rowid = db_->LastInsertRowid();
  } else {
    // Batches may arrive out of order after a reconnect: last_seq and the string count
    // follow the highest seq; the window is the hull of the batches' windows.
    ASSIGN_OR_RETURN(
        sqlite::Statement st,
        db_->Prepare("UPDATE sessions SET last_seq = max(last_seq, ?2), "
                     "string_count = CASE WHEN ?2 >= last_seq THEN ?3 ELSE string_count END, "
                     "host = ?4, model = ?5, revision = ?6, labels_json = ?7, "
                     "window_start_ns = CASE WHEN window_start_ns = 0 THEN ?8 WHEN ?8 = 0 "
                     "THEN window_start_ns ELSE min(window_start_ns, ?8) END, "
                     "window_end_ns = max(window_end_ns, ?9) WHERE id = ?1"));
    st.BindInt(1, session_rowid).BindInt(2, seq).BindInt(3, commit.string_count_after);
    st.BindText(4, res.host()).BindText(5, res.model_name()).BindText(6, res.model_revision());
    st.BindText(7, labels).BindInt(8, b.window_start_ns()).BindInt(9, b.window_end_ns());
    RETURN_IF_ERROR(st.Run());
  }
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("INSERT INTO batches(session_id, seq, received_ns, "
                                  "window_start_ns, window_end_ns, records, payload) "
                                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    st.BindInt(1, session_rowid).BindInt(2, seq).BindInt(3, commit.received_ns);
    st.BindInt(4, b.window_start_ns()).BindInt(5, b.window_end_ns());
    st.BindInt(6, commit.record_count).BindBlob(7, commit.payload);
    RETURN_IF_ERROR(st.Run());
  }
  if (commit.rollup != nullptr) {
    RETURN_IF_ERROR(InsertRollup(session_rowid, labels, res, *commit.rollup));
    if (commit.telemetry != nullptr) {
      RETURN_IF_ERROR(InsertTelemetry(session_rowid, *commit.telemetry));
    }
  }
  return CommitOutcome::kStored;
}

absl::Status SqliteStore::InsertRollup(int64_t session_rowid, const std::string& labels_json,
                                       const opmap::v1::Resource& res,
                                       const analysis::SessionRollup& rollup) {
  // Each row's bins, encoded once for its rollups row and its bucket row.
  std::vector<std::string> bins(rollup.rows.size());
  for (size_t i = 0; i < rollup.rows.size(); ++i) bins[i] = EncodeSketchBins(rollup.rows[i].sketch);
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("INSERT INTO rollups(session_id, subject, ordinal, layer_type, "
                                  "operator, kernel, count, sum_ns, min_ns, max_ns, "
                                  "sketch_scale, sketch_offset, sketch_zero, sketch_sum, "
                                  "sketch_min, sketch_max, sketch_bins, module) VALUES(?1, ?2, "
                                  "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                                  "?16, ?17, ?18)"));
    for (size_t i = 0; i < rollup.rows.size(); ++i) {
      const analysis::RollupRow& row = rollup.rows[i];
      const stats::DDSketch& sk = row.sketch;
      st.BindInt(1, session_rowid).BindInt(2, static_cast<int64_t>(row.subject));
      st.BindInt(3, static_cast<int64_t>(i)).BindText(4, row.layer_type);
      st.BindText(5, row.operator_name).BindText(6, row.kernel_name).BindInt(7, row.count);
      st.BindInt(8, row.sum_ns).BindInt(9, row.min_ns).BindInt(10, row.max_ns);
      st.BindInt(11, sk.scale()).BindInt(12, sk.offset());
      st.BindInt(13, static_cast<int64_t>(sk.zero_count())).BindDouble(14, sk.sum());
      // An empty sketch's min/max are NaN, which SQLite would store as NULL.
      st.BindDouble(15, sk.empty() ? 0 : sk.min()).BindDouble(16, sk.empty() ? 0 : sk.max());
      st.BindBlob(17, bins[i]).BindText(18, row.module);
      RETURN_IF_ERROR(st.Run());
      st.Reset();
    }
  }
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("INSERT INTO device_times(session_id, device, gpu_uuid, "
                                  "gpu_name, span_ns, busy_ns, idle_ns, compute_ns, "
                                  "non_compute_ns, event_count) "
                                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
    for (const analysis::DeviceBreakdown& d : rollup.devices) {
      // The resource names the GPU behind each ordinal; its UUID identifies the board
      // across processes (ordinals differ with CUDA_VISIBLE_DEVICES).
      std::string_view uuid, name;
      for (const opmap::v1::Gpu& gpu : res.gpus()) {
        if (static_cast<int64_t>(gpu.device()) == d.device) {
          uuid = gpu.uuid();
          name = gpu.name();
          break;
        }
      }
      st.BindInt(1, session_rowid).BindInt(2, d.device).BindText(3, uuid).BindText(4, name);
      st.BindInt(5, d.span_ns).BindInt(6, d.busy_ns).BindInt(7, d.idle_ns);
      st.BindInt(8, d.compute_ns).BindInt(9, d.non_compute_ns).BindInt(10, d.event_count);
      RETURN_IF_ERROR(st.Run());
      st.Reset();
    }
  }
  // Complete, with the session's totals; its window widens to cover its events — GPU
  // events (kernels may finish after the capture window closed), or its host ranges
  // when it has none (SessionRollup::first_start_ns; ?11 = 0 when it has neither).
  {
    ASSIGN_OR_RETURN(
        sqlite::Statement st,
        db_->Prepare("UPDATE sessions SET complete = 1, host_rollup = 1, module_rollup = 1, "
                     "gpu_event_count = ?2, "
                     "gpu_time_ns = ?3, "
                     "rule_graph_node = ?4, rule_external_id = ?5, rule_launch_nesting = ?6, "
                     "rule_graph_launch = ?7, rule_unmapped = ?8, "
                     "window_start_ns = CASE WHEN ?11 = 0 THEN window_start_ns "
                     "WHEN window_start_ns = 0 THEN ?9 ELSE min(window_start_ns, ?9) END, "
                     "window_end_ns = CASE WHEN ?11 = 0 THEN window_end_ns "
                     "ELSE max(window_end_ns, ?10) END WHERE id = ?1"));
    using analysis::MappingRule;
    auto rule = [&](MappingRule r) { return rollup.by_rule[static_cast<int>(r)]; };
    st.BindInt(1, session_rowid).BindInt(2, rollup.gpu_event_count).BindInt(3, rollup.gpu_time_ns);
    st.BindInt(4, rule(MappingRule::kGraphNode)).BindInt(5, rule(MappingRule::kExternalId));
    st.BindInt(6, rule(MappingRule::kLaunchNesting)).BindInt(7, rule(MappingRule::kGraphLaunch));
    st.BindInt(8, rule(MappingRule::kUnmapped));
    st.BindInt(9, rollup.first_start_ns).BindInt(10, rollup.last_end_ns);
    const bool has_hull = rollup.first_start_ns != 0 || rollup.last_end_ns != 0;
    st.BindInt(11, has_hull ? 1 : 0);
    RETURN_IF_ERROR(st.Run());
  }
  if (bucket_ns_ <= 0) return absl::OkStatus();
  // The final window decides the bucket (rollup_buckets.h); the rows are merged into it
  // in this transaction, so a bucket row always equals its sessions' rows merged.
  std::optional<int64_t> bucket;
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("SELECT window_start_ns, window_end_ns FROM sessions "
                                  "WHERE id = ?1"));
    st.BindInt(1, session_rowid);
    ASSIGN_OR_RETURN(bool found, st.Step());
    if (!found) return absl::InternalError("InsertRollup: the session row is gone");
    bucket = BucketOf(st.Int(0), st.Int(1), bucket_ns_);
  }
  if (!bucket.has_value()) return absl::OkStatus();
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("UPDATE sessions SET bucket_ns = ?2 WHERE id = ?1"));
    st.BindInt(1, session_rowid).BindInt(2, *bucket);
    RETURN_IF_ERROR(st.Run());
  }
  ASSIGN_OR_RETURN(const int64_t resource,
                   ResourceId(*db_, res.host(), res.model_name(), res.model_revision(),
                              labels_json));
  for (size_t i = 0; i < rollup.rows.size(); ++i) {
    const analysis::RollupRow& row = rollup.rows[i];
    const stats::DDSketch& sk = row.sketch;
    BucketRow b;
    b.subject = static_cast<int>(row.subject);
    b.layer_type = row.layer_type;
    b.operator_name = row.operator_name;
    b.kernel = row.kernel_name;
    b.module = row.module;
    b.count = row.count;
    b.sum_ns = row.sum_ns;
    b.min_ns = row.min_ns;
    b.max_ns = row.max_ns;
    b.sketch = StoredSketch{sk.scale(), sk.offset(), bins[i], sk.zero_count(), sk.sum(),
                            sk.empty() ? 0 : sk.min(), sk.empty() ? 0 : sk.max()};
    batch_buckets_.Add(resource, *bucket, b);  // merged once per key at the group's end
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::InsertTelemetry(int64_t session_rowid,
                                          const SessionTelemetry& telemetry) {
  {
    // INSERT OR REPLACE: a session completes once (CommitBatch refuses a second last
    // batch), so each key is written once; REPLACE only makes that harmless to rely on.
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("INSERT OR REPLACE INTO session_counters(session_id, name, "
                                  "source, pid, samples, value, time_enabled_ns, "
                                  "time_running_ns) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    for (const CounterTotal& c : telemetry.counters) {
      st.BindInt(1, session_rowid).BindText(2, c.name).BindInt(3, c.source);
      st.BindInt(4, c.pid).BindInt(5, c.samples).BindInt(6, c.value);
      st.BindInt(7, c.time_enabled_ns).BindInt(8, c.time_running_ns);
      RETURN_IF_ERROR(st.Run());
      st.Reset();
    }
  }
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare("INSERT OR REPLACE INTO session_drops(session_id, stage, kind, "
                                  "reason, count) VALUES(?1, ?2, ?3, ?4, ?5)"));
    for (const DropTotal& d : telemetry.drops) {
      st.BindInt(1, session_rowid).BindInt(2, d.stage).BindInt(3, d.kind);
      st.BindText(4, d.reason).BindInt(5, d.count);
      RETURN_IF_ERROR(st.Run());
      st.Reset();
    }
  }
  {
    ASSIGN_OR_RETURN(
        sqlite::Statement st,
        db_->Prepare("INSERT OR REPLACE INTO session_power(session_id, domain, device, name, "
                     "gpu_index, start_ns, end_ns, covered_ns, energy_mj, method, reads, "
                     "power_limit_mw, sm_clock_mhz, memory_clock_mhz, throttle_reasons, "
                     "temperature_c, persistence, mig, compute_mode) VALUES(?1, ?2, ?3, ?4, "
                     "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"));
    for (const opmap::v1::PowerSample& p : telemetry.power) {
      st.BindInt(1, session_rowid).BindInt(2, p.domain()).BindText(3, p.device());
      st.BindText(4, p.name()).BindInt(5, p.index()).BindInt(6, p.start_ns());
      st.BindInt(7, p.end_ns()).BindInt(8, p.covered_ns()).BindInt(10, p.method());
      st.BindInt(11, p.reads());
      // Unbound parameters are NULL: an absent figure stays absent, never a zero.
      if (p.has_energy_mj()) st.BindInt(9, static_cast<int64_t>(p.energy_mj()));
      if (p.has_power_limit_mw()) st.BindInt(12, p.power_limit_mw());
      if (p.has_sm_clock_mhz()) st.BindInt(13, p.sm_clock_mhz());
      if (p.has_memory_clock_mhz()) st.BindInt(14, p.memory_clock_mhz());
      if (p.has_throttle_reasons()) st.BindInt(15, static_cast<int64_t>(p.throttle_reasons()));
      if (p.has_temperature_c()) st.BindInt(16, p.temperature_c());
      if (p.has_persistence()) st.BindInt(17, p.persistence());
      if (p.has_mig()) st.BindInt(18, p.mig());
      if (p.has_compute_mode()) st.BindInt(19, p.compute_mode());
      RETURN_IF_ERROR(st.Run());
      st.Reset();
    }
  }
  ASSIGN_OR_RETURN(sqlite::Statement st,
                   db_->Prepare("INSERT OR REPLACE INTO session_unavailable(session_id, ordinal, "
                                "what, reason) VALUES(?1, ?2, ?3, ?4)"));
  for (size_t i = 0; i < telemetry.unavailable.size(); ++i) {
    st.BindInt(1, session_rowid).BindInt(2, static_cast<int64_t>(i));
    st.BindText(3, telemetry.unavailable[i].first).BindText(4, telemetry.unavailable[i].second);
    RETURN_IF_ERROR(st.Run());
    st.Reset();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> SqliteStore::LoadSessionPayloads(
    std::string_view agent_id, std::string_view session_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(sqlite::Statement st,
                   db_->Prepare("SELECT b.payload FROM batches b JOIN sessions s "
                                "ON b.session_id = s.id WHERE s.agent = ?1 AND s.session = ?2 "
                                "ORDER BY b.seq"));
  st.BindText(1, agent_id).BindText(2, session_id);
  std::vector<std::string> payloads;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    payloads.emplace_back(st.Blob(0));
  }
  return payloads;
}

absl::StatusOr<int64_t> SqliteStore::ExpireRawBefore(int64_t cutoff_ns) {
  absl::MutexLock lock(&mu_);
  // Only complete sessions: an open session's batches are what rebuilds it after a
  // restart, and its rollup does not exist yet.
  ASSIGN_OR_RETURN(sqlite::Statement st,
                   db_->Prepare("DELETE FROM batches WHERE received_ns < ?1 AND session_id IN "
                                "(SELECT id FROM sessions WHERE complete = 1)"));
  st.BindInt(1, cutoff_ns);
  RETURN_IF_ERROR(st.Run());
  return db_->Changes();
}

StoreStats SqliteStore::Stats() {
  absl::MutexLock lock(&mu_);
  StoreStats stats;
  absl::StatusOr<sqlite::Statement> st =
      db_->Prepare("SELECT (SELECT count(*) FROM batches), "
                   "(SELECT coalesce(sum(records), 0) FROM batches), "
                   "(SELECT count(*) FROM sessions WHERE complete = 1)");
  // Stats has no error channel: a failing read reports zeros.
  if (!st.ok()) return stats;
  absl::StatusOr<bool> row = st->Step();
  if (!row.ok() || !*row) return stats;
  stats.batches = st->Int(0);
  stats.records = st->Int(1);
  stats.sessions_complete = st->Int(2);
  return stats;
}

}  // namespace opmap::collector
