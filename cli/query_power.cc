// `opmap query power`: the Power query's rows (one per device) and the reasons power
// was unavailable, as a table, JSON or CSV.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/query_command_parts.h"
#include "common/text/power_names.h"
#include "common/text/printable.h"

namespace opmap::cli::query_internal {
namespace {

std::string_view DomainName(opmap::v1::PowerDomain d) {
  switch (d) {
    case opmap::v1::POWER_DOMAIN_GPU: return "gpu";
    case opmap::v1::POWER_DOMAIN_CPU: return "cpu";
    case opmap::v1::POWER_DOMAIN_DRAM: return "dram";
    default: return "unspecified";
  }
}

}  // namespace

int Power(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range) {
  opmap::v1::PowerRequest req;
  if (args.has_range) *req.mutable_range() = range;
  *req.mutable_filter() = args.selection.filter;
  for (opmap::v1::GroupBy g : args.group_by) req.add_group_by(g);
  req.set_limit(args.limit);
  opmap::v1::PowerResponse resp;
  std::string endpoint;
  grpc::Status status = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)->Power(&ctx, req, &resp);
      },
      &endpoint);
  if (!status.ok()) return CallFailed(status, client, endpoint);
  const std::vector<std::string>& keys = args.group_names;

  if (args.format == Format::kJson) {
    text::JsonWriter w;
    w.BeginObject().Field("query", "power");
    w.Key("group_by").BeginArray();
    for (const auto& k : keys) w.String(k);
    w.EndArray();
    w.Key("rows").BeginArray();
    auto optional = [&](const char* key, bool has, int64_t v) {
      w.Key(key);
      if (has) w.Int(v); else w.Null();
    };
    for (const auto& r : resp.rows()) {
      w.BeginObject();
      for (size_t k = 0; k < keys.size(); ++k) {
        w.Field(keys[k], k < static_cast<size_t>(r.key_size()) ? r.key(k) : "");
      }
      w.Field("host", r.host()).Field("domain", DomainName(r.domain()));
      w.Field("device", r.device()).Field("name", r.name());
      w.Field("windows", static_cast<int64_t>(r.windows()))
          .Field("windows_with_energy", static_cast<int64_t>(r.windows_with_energy()));
      optional("energy_mj", r.windows_with_energy() > 0, static_cast<int64_t>(r.energy_mj()));
      w.Field("covered_ns", r.covered_ns());
      w.Key("average_w");
      if (r.has_average_w()) w.Double(r.average_w(), 3); else w.Null();
      w.Field("method", r.method());
      optional("power_limit_min_mw", r.has_power_limit_min_mw(), r.power_limit_min_mw());
      optional("power_limit_max_mw", r.has_power_limit_max_mw(), r.power_limit_max_mw());
      optional("sm_clock_min_mhz", r.has_sm_clock_min_mhz(), r.sm_clock_min_mhz());
      optional("sm_clock_max_mhz", r.has_sm_clock_max_mhz(), r.sm_clock_max_mhz());
      optional("memory_clock_max_mhz", r.has_memory_clock_max_mhz(), r.memory_clock_max_mhz());
      w.Key("throttle_reasons");
      if (r.has_throttle_reasons()) w.String(text::ThrottleReasonNames(r.throttle_reasons()));
      else w.Null();
      optional("temperature_max_c", r.has_temperature_max_c(), r.temperature_max_c());
      w.Field("mode", r.mode());
      w.Field("first_start_ns", r.first_start_ns()).Field("last_end_ns", r.last_end_ns());
      w.EndObject();
    }
    w.EndArray();
    w.Key("truncated").Bool(resp.truncated());
    return FinishJson(w, resp.unavailable());
  }

  const bool csv = args.format == Format::kCsv;
  std::vector<std::string> header = keys;
  std::vector<bool> numeric(keys.size(), false);
  for (const char* h : {"host", "domain", "device", "name"}) {
    header.push_back(h), numeric.push_back(false);
  }
  for (const char* h : {"windows", "energy_j", "covered_s", "avg_w", "limit_w", "sm_mhz",
                        "temp_c"}) {
    header.push_back(h), numeric.push_back(true);
  }
  for (const char* h : {"method", "throttle", "mode"}) header.push_back(h), numeric.push_back(false);
  std::vector<std::vector<std::string>> rows;
  auto text = [&](const std::string& v) { return csv ? CsvField(v) : v.empty() ? "-" : v; };
  // "300" or "250-300" (the lowest and highest seen), in whole units.
  auto range_text = [](bool has_min, uint32_t lo, bool has_max, uint32_t hi,
                       double scale) -> std::string {
    if (!has_min || !has_max) return "unavailable";
    const std::string a = absl::StrFormat("%.0f", lo / scale);
    return lo == hi ? a : absl::StrFormat("%s-%.0f", a, hi / scale);
  };
  for (const auto& r : resp.rows()) {
    std::vector<std::string> row;
    for (size_t k = 0; k < keys.size(); ++k) {
      row.push_back(text(k < static_cast<size_t>(r.key_size()) ? r.key(k) : ""));
    }
    row.push_back(text(r.host()));
    row.push_back(std::string(DomainName(r.domain())));
    row.push_back(csv ? CsvField(r.device()) : text::PrintableCell(r.device(), 24));
    row.push_back(csv ? CsvField(r.name()) : text::PrintableCell(r.name(), 24));
    row.push_back(absl::StrFormat("%d/%d", r.windows_with_energy(), r.windows()));
    const bool energy = r.windows_with_energy() > 0;
    row.push_back(energy ? absl::StrFormat("%.3f", r.energy_mj() / 1e3) : "unavailable");
    row.push_back(energy ? absl::StrFormat("%.3f", r.covered_ns() / 1e9) : "unavailable");
    row.push_back(r.has_average_w() ? absl::StrFormat("%.1f", r.average_w()) : "unavailable");
    row.push_back(range_text(r.has_power_limit_min_mw(), r.power_limit_min_mw(),
                             r.has_power_limit_max_mw(), r.power_limit_max_mw(), 1e3));
    row.push_back(range_text(r.has_sm_clock_min_mhz(), r.sm_clock_min_mhz(),
                             r.has_sm_clock_max_mhz(), r.sm_clock_max_mhz(), 1));
    row.push_back(r.has_temperature_max_c() ? absl::StrCat(r.temperature_max_c()) : "unavailable");
    row.push_back(text(r.method()));
    row.push_back(r.has_throttle_reasons() ? text(text::ThrottleReasonNames(r.throttle_reasons()))
                                           : "unavailable");
    row.push_back(text(r.mode()));
    rows.push_back(std::move(row));
  }
  const std::string what =
      keys.empty() ? std::string("power") : "power by " + absl::StrJoin(keys, ", ");
  return PrintRows(args, std::move(header), std::move(numeric), std::move(rows),
                   what + ": no rows",
                   absl::StrFormat("%s: %d devices%s; windows = with energy/all, avg_w = "
                                   "energy ÷ covered time, limit = enforced power limit "
                                   "(lowest-highest seen)",
                                   what, resp.rows_size(),
                                   resp.truncated() ? " (truncated by --limit)" : ""),
                   resp.unavailable());
}

}  // namespace opmap::cli::query_internal
