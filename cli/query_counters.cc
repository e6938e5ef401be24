// `opmap query counters`: the Counters query's rows, drops and unavailable entries as a
// table, JSON or CSV.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/query_command_parts.h"
#include "common/text/printable.h"

namespace opmap::cli::query_internal {
namespace {

std::string_view StageName(opmap::v1::DropStage stage) {
  switch (stage) {
    case opmap::v1::DROP_STAGE_RING: return "ring";
    case opmap::v1::DROP_STAGE_BUFFER: return "buffer";
    case opmap::v1::DROP_STAGE_SPOOL: return "spool";
    case opmap::v1::DROP_STAGE_QUEUE: return "queue";
    default: return "unspecified";
  }
}

std::string_view KindName(opmap::v1::EventKind kind) {
  switch (kind) {
    case opmap::v1::EVENT_KIND_KERNEL: return "kernel";
    case opmap::v1::EVENT_KIND_MEMORY_OP: return "memory_op";
    case opmap::v1::EVENT_KIND_LAUNCH_API: return "launch_api";
    case opmap::v1::EVENT_KIND_RANGE: return "range";
    case opmap::v1::EVENT_KIND_COUNTER: return "counter";
    case opmap::v1::EVENT_KIND_STALL: return "stall";
    case opmap::v1::EVENT_KIND_BATCH: return "batch";
    default: return "unspecified";
  }
}

}  // namespace

int Counters(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range) {
  opmap::v1::CountersRequest req;
  if (args.has_range) *req.mutable_range() = range;
  *req.mutable_filter() = args.selection.filter;
  for (opmap::v1::GroupBy g : args.group_by) req.add_group_by(g);
  req.set_limit(args.limit);
  opmap::v1::CountersResponse resp;
  std::string endpoint;
  grpc::Status status = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)->Counters(&ctx, req, &resp);
      },
      &endpoint);
  if (!status.ok()) return CallFailed(status, client, endpoint);
  const std::vector<std::string>& keys = args.group_names;

  if (args.format == Format::kJson) {
    text::JsonWriter w;
    w.BeginObject().Field("query", "counters");
    w.Key("group_by").BeginArray();
    for (const auto& k : keys) w.String(k);
    w.EndArray();
    w.Key("rows").BeginArray();
    for (const auto& r : resp.rows()) {
      w.BeginObject();
      for (size_t k = 0; k < keys.size(); ++k) {
        w.Field(keys[k], k < static_cast<size_t>(r.key_size()) ? r.key(k) : "");
      }
      w.Field("name", r.name()).Field("source", r.source()).Field("value", r.value());
      w.Key("scaled");
      if (r.has_scaled()) w.Double(r.scaled(), 3); else w.Null();
      w.Field("time_enabled_ns", r.time_enabled_ns())
          .Field("time_running_ns", r.time_running_ns());
      w.Key("per_second");
      if (r.has_per_second()) w.Double(r.per_second(), 3); else w.Null();
      w.Field("samples", static_cast<int64_t>(r.samples()))
          .Field("sessions", static_cast<int64_t>(r.sessions()));
      w.EndObject();
    }
    w.EndArray();
    w.Key("truncated").Bool(resp.truncated());
    w.Key("drops").BeginArray();
    for (const auto& d : resp.drops()) {
      w.BeginObject()
          .Field("stage", StageName(d.stage()))
          .Field("kind", KindName(d.kind()))
          .Field("reason", d.reason())
          .Field("count", static_cast<int64_t>(d.count()))
          .EndObject();
    }
    w.EndArray();
    return FinishJson(w, resp.unavailable());
  }

  const bool csv = args.format == Format::kCsv;
  std::vector<std::string> header = keys;
  std::vector<bool> numeric(keys.size(), false);
  for (const char* h : {"name", "source"}) header.push_back(h), numeric.push_back(false);
  for (const char* h : {"value", "scaled", "per_second", "enabled_us", "running_us", "samples"}) {
    header.push_back(h), numeric.push_back(true);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : resp.rows()) {
    auto text = [&](const std::string& v) { return csv ? CsvField(v) : v.empty() ? "-" : v; };
    std::vector<std::string> row;
    for (size_t k = 0; k < keys.size(); ++k) {
      row.push_back(text(k < static_cast<size_t>(r.key_size()) ? r.key(k) : ""));
    }
    row.push_back(csv ? CsvField(r.name()) : text::PrintableCell(r.name(), 40));
    row.push_back(text(r.source()));
    row.push_back(absl::StrCat(r.value()));
    row.push_back(r.has_scaled() ? absl::StrFormat("%.1f", r.scaled()) : "unavailable");
    row.push_back(r.has_per_second() ? absl::StrFormat("%.3f", r.per_second()) : "unavailable");
    row.push_back(UsFromNs(r.time_enabled_ns()));
    row.push_back(UsFromNs(r.time_running_ns()));
    row.push_back(absl::StrCat(r.samples()));
    rows.push_back(std::move(row));
  }
  const std::string what =
      keys.empty() ? std::string("counters") : "counters by " + absl::StrJoin(keys, ", ");
  // Drops after the counters, before the unavailable lines: a table of their own (CSV:
  // `drop:` lines on stderr, so stdout stays one table).
  google::protobuf::RepeatedPtrField<opmap::v1::Unavailable> none;
  int rc = PrintRows(args, std::move(header), std::move(numeric), std::move(rows),
                     what + ": no rows",
                     absl::StrFormat("%s: %d rows%s; scaled = value × enabled ÷ running, per "
                                     "second of the sessions' capture windows",
                                     what, resp.rows_size(),
                                     resp.truncated() ? " (truncated by --limit)" : ""),
                     none);
  if (resp.drops_size() > 0) {
    if (csv) {
      for (const auto& d : resp.drops()) {
        std::cerr << "drop: " << StageName(d.stage()) << "," << KindName(d.kind()) << ","
                  << CsvField(d.reason()) << "," << d.count() << "\n";
      }
    } else {
      std::cout << absl::StrFormat("drops counted by the agents: %d rows\n", resp.drops_size());
      AlignedTable t({"stage", "kind", "reason", "count"}, {false, false, false, true});
      for (const auto& d : resp.drops()) {
        t.Add({std::string(StageName(d.stage())), std::string(KindName(d.kind())),
               d.reason().empty() ? "-" : text::Printable(d.reason()), absl::StrCat(d.count())});
      }
      std::cout << t.Render();
    }
  }
  PrintUnavailable(resp.unavailable(), args.format);
  std::cout.flush();
  return rc != 0 ? rc : (std::cout.good() ? 0 : 1);
}

}  // namespace opmap::cli::query_internal
