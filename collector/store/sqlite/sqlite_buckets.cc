#include "collector/store/sqlite/sqlite_buckets.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/stats/ddsketch.h"
#include "common/base/status_macros.h"

namespace opmap::collector {

absl::StatusOr<int64_t> ResourceId(sqlite::Database& db, std::string_view host,
                                   std::string_view model, std::string_view revision,
                                   std::string_view labels_json) {
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare("SELECT id FROM resources WHERE host = ?1 AND model = ?2 "
                                "AND revision = ?3 AND labels_json = ?4"));
    st.BindText(1, host).BindText(2, model).BindText(3, revision).BindText(4, labels_json);
    ASSIGN_OR_RETURN(bool found, st.Step());
    if (found) return st.Int(0);
  }
  ASSIGN_OR_RETURN(sqlite::Statement st,
                   db.Prepare("INSERT INTO resources(host, model, revision, labels_json) "
                              "VALUES(?1, ?2, ?3, ?4)"));
  st.BindText(1, host).BindText(2, model).BindText(3, revision).BindText(4, labels_json);
  RETURN_IF_ERROR(st.Run());
  return db.LastInsertRowid();
}

absl::Status MergeIntoBucket(sqlite::Database& db, int64_t resource_id, int64_t bucket_ns,
                             absl::Span<const BucketRow> rows) {
  if (rows.empty()) return absl::OkStatus();
  const BucketRow& row = rows.front();  // the key
  ExactStats stats;
  SketchAccumulator sketch;
  bool found = false;
  {
    ASSIGN_OR_RETURN(
        sqlite::Statement st,
        db.Prepare("SELECT count, sum_ns, min_ns, max_ns, sketch_scale, sketch_offset, "
                   "sketch_bins, sketch_zero, sketch_sum, sketch_min, sketch_max "
                   "FROM rollup_buckets WHERE resource_id = ?1 AND subject = ?2 AND "
                   "bucket_ns = ?3 AND layer_type = ?4 AND operator = ?5 AND kernel = ?6 "
                   "AND module = ?7"));
    st.BindInt(1, resource_id).BindInt(2, row.subject).BindInt(3, bucket_ns);
    st.BindText(4, row.layer_type).BindText(5, row.operator_name).BindText(6, row.kernel);
    st.BindText(7, row.module);
    ASSIGN_OR_RETURN(found, st.Step());
    if (found) {
      stats.Add(st.Int(0), st.Int(1), st.Int(2), st.Int(3));
      StoredSketch old{static_cast<int>(st.Int(4)), static_cast<int32_t>(st.Int(5)),
                       st.Blob(6), static_cast<uint64_t>(st.Int(7)), st.Double(8),
                       st.Double(9), st.Double(10)};
      if (absl::Status s = sketch.Add(old); !s.ok()) {
        return absl::DataLossError(absl::StrFormat(
            "rollup_buckets: stored sketch of (%s, %s, %s): %s", row.layer_type,
            row.operator_name, row.kernel, s.message()));
      }
    }
  }
  for (const BucketRow& r : rows) {
    stats.Add(r.count, r.sum_ns, r.min_ns, r.max_ns);
    RETURN_IF_ERROR(sketch.Add(r.sketch));
  }
  ASSIGN_OR_RETURN(const stats::DDSketch merged, sketch.Finish());
  const std::string bins = EncodeSketchBins(merged);
  ASSIGN_OR_RETURN(
      sqlite::Statement st,
      db.Prepare("INSERT OR REPLACE INTO rollup_buckets(resource_id, subject, bucket_ns, "
                 "layer_type, operator, kernel, count, sum_ns, min_ns, max_ns, sketch_scale, "
                 "sketch_offset, sketch_zero, sketch_sum, sketch_min, sketch_max, sketch_bins, "
                 "module) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                 "?15, ?16, ?17, ?18)"));
  st.BindInt(1, resource_id).BindInt(2, row.subject).BindInt(3, bucket_ns);
  st.BindText(18, row.module);
  st.BindText(4, row.layer_type).BindText(5, row.operator_name).BindText(6, row.kernel);
  st.BindInt(7, static_cast<int64_t>(stats.count)).BindInt(8, stats.sum_ns);
  st.BindInt(9, stats.min_ns).BindInt(10, stats.max_ns);
  st.BindInt(11, merged.scale()).BindInt(12, merged.offset());
  st.BindInt(13, static_cast<int64_t>(merged.zero_count())).BindDouble(14, merged.sum());
  // An empty sketch's min/max are NaN, which SQLite would store as NULL.
  st.BindDouble(15, merged.empty() ? 0 : merged.min());
  st.BindDouble(16, merged.empty() ? 0 : merged.max());
  st.BindBlob(17, bins);
  return st.Run();
}

void BucketMerger::Add(int64_t resource_id, int64_t bucket_ns, const BucketRow& row) {
  Key key{resource_id,
          bucket_ns,
          row.subject,
          std::string(row.layer_type),
          std::string(row.operator_name),
          std::string(row.kernel),
          std::string(row.module)};
  const StoredSketch& sk = row.sketch;
  rows_[std::move(key)].push_back(Owned{row.count, row.sum_ns, row.min_ns, row.max_ns, sk.scale,
                                        sk.offset, std::string(sk.bins), sk.zero_count, sk.sum,
                                        sk.min, sk.max});
}

void BucketMerger::Absorb(BucketMerger& other) {
  if (rows_.empty()) {  // a group's first batch
    rows_.swap(other.rows_);
    return;
  }
  for (auto& [key, rows] : other.rows_) {
    std::vector<Owned>& mine = rows_[key];
    for (Owned& r : rows) mine.push_back(std::move(r));
  }
  other.rows_.clear();
}

absl::Status BucketMerger::Flush(sqlite::Database& db) {
  std::vector<const decltype(rows_)::value_type*> in_order;
  in_order.reserve(rows_.size());
  for (const auto& entry : rows_) in_order.push_back(&entry);
  std::sort(in_order.begin(), in_order.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  std::vector<BucketRow> rows;
  for (const auto* entry : in_order) {
    const auto& [key, owned] = *entry;
    const auto& [resource, bucket, subject, layer_type, op, kernel, module] = key;
    rows.clear();
    for (const Owned& o : owned) {
      BucketRow& r = rows.emplace_back();
      r.subject = subject;
      r.layer_type = layer_type;
      r.operator_name = op;
      r.kernel = kernel;
      r.module = module;
      r.count = o.count;
      r.sum_ns = o.sum_ns;
      r.min_ns = o.min_ns;
      r.max_ns = o.max_ns;
      r.sketch = StoredSketch{o.scale, o.offset, o.bins, o.zero_count, o.sum, o.min, o.max};
    }
    RETURN_IF_ERROR(MergeIntoBucket(db, resource, bucket, rows));
  }
  rows_.clear();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> BuildBucketsFromRollups(sqlite::Database& db, int64_t width_ns) {
  if (width_ns <= 0) return 0;
  struct Session {
    int64_t id, bucket_ns;
    std::string host, model, revision, labels_json;
  };
  std::vector<Session> sessions;
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare("SELECT id, window_start_ns, window_end_ns, host, model, "
                                "revision, labels_json FROM sessions WHERE complete = 1"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      std::optional<int64_t> bucket = BucketOf(st.Int(1), st.Int(2), width_ns);
      if (!bucket.has_value()) continue;
      sessions.push_back({st.Int(0), *bucket, std::string(st.Text(3)), std::string(st.Text(4)),
                          std::string(st.Text(5)), std::string(st.Text(6))});
    }
  }
  BucketMerger merger;
  for (const Session& s : sessions) {
    ASSIGN_OR_RETURN(const int64_t resource,
                     ResourceId(db, s.host, s.model, s.revision, s.labels_json));
    {
      ASSIGN_OR_RETURN(sqlite::Statement st,
                       db.Prepare("UPDATE sessions SET bucket_ns = ?2 WHERE id = ?1"));
      st.BindInt(1, s.id).BindInt(2, s.bucket_ns);
      RETURN_IF_ERROR(st.Run());
    }
    // The rows are copied out first: MergeIntoBucket prepares its own statements.
    struct Stored {
      BucketRow row;
      std::string layer_type, operator_name, kernel, module, bins;
    };
    std::vector<Stored> rows;
    {
      ASSIGN_OR_RETURN(
          sqlite::Statement st,
          db.Prepare("SELECT subject, layer_type, operator, kernel, count, sum_ns, min_ns, "
                     "max_ns, sketch_scale, sketch_offset, sketch_bins, sketch_zero, "
                     "sketch_sum, sketch_min, sketch_max, module FROM rollups "
                     "WHERE session_id = ?1 "
                     "ORDER BY subject, ordinal"));
      st.BindInt(1, s.id);
      while (true) {
        ASSIGN_OR_RETURN(bool more, st.Step());
        if (!more) break;
        Stored& r = rows.emplace_back();
        r.layer_type = st.Text(1);
        r.operator_name = st.Text(2);
        r.kernel = st.Text(3);
        r.bins = st.Blob(10);
        r.module = st.Text(15);
        r.row.subject = static_cast<int>(st.Int(0));
        r.row.count = st.Int(4);
        r.row.sum_ns = st.Int(5);
        r.row.min_ns = st.Int(6);
        r.row.max_ns = st.Int(7);
        r.row.sketch = StoredSketch{static_cast<int>(st.Int(8)), static_cast<int32_t>(st.Int(9)),
                                    {}, static_cast<uint64_t>(st.Int(11)), st.Double(12),
                                    st.Double(13), st.Double(14)};
      }
    }
    for (Stored& r : rows) {
      r.row.layer_type = r.layer_type;
      r.row.operator_name = r.operator_name;
      r.row.kernel = r.kernel;
      r.row.module = r.module;
      r.row.sketch.bins = r.bins;
      merger.Add(resource, s.bucket_ns, r.row);
    }
  }
  RETURN_IF_ERROR(merger.Flush(db));
  return static_cast<int64_t>(sessions.size());
}

}  // namespace opmap::collector
