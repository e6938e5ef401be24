#include "cli/query_command.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/stats/ddsketch.h"
#include "cli/collector_flags.h"
#include "cli/command_flags.h"
#include "cli/connection_flags.h"
#include "cli/query_command_parts.h"
#include "cli/selection_flags.h"
#include "common/base/absl_view.h"
#include "common/config/flag_config.h"
#include "common/text/json_writer.h"
#include "opmap/v1/query.grpc.pb.h"
#include "common/text/printable.h"

namespace opmap::cli {
namespace {

using namespace query_internal;  // NOLINT: the query subcommands' shared pieces

using text::JsonWriter;

constexpr char kQueryUsage[] = R"(usage: opmap query latency|tail|breakdown|kernels|counters|power --collector HOST:PORT [options]

Asks a collector about the events it stores (imported traces and live agents alike).

  latency    percentiles of --subject's values, grouped by --group-by; from the
             collector's mergeable DDSketches (the header states their relative error)
  tail       why the slowest requests were slow: per request key (and --group-by), the
             excess of each component of the requests above --quantile over the
             p40-p60 band (queue, GPU time by layer type and module, host gaps, ...),
             from the collector's request-breakdown rollups (docs/metrics.md)
  breakdown  per GPU: span, busy, idle, compute and non-compute time (interval unions)
  kernels    the heaviest kernels by summed GPU time, with p50/p99 and share
  counters   hardware/software counters (PAPI, perf_event) summed over the selected
             sessions, scaled for multiplexing, per second of capture; the drops the
             agents counted; what they reported unavailable
  power      per device (GPU by NVML, CPU package/DRAM by RAPL): energy over the
             capture windows, average power, the enforced power limit, clocks,
             throttle reasons, temperature and power mode; why power is unavailable
             where it is

options:
  --format F            table (default), json (one object) or csv
  --subject S           latency: whose durations —
                          kernel        each GPU event (kernel, memcpy, memset) (default)
                          operator-gpu  each operator instance: its kernels' summed GPU time
                          operator-cpu  each operator range (cpu_op, NVTX): its host duration
                          request       each range named request or iteration, or
                                        ProfilerStep#N: its duration
  --of S                latency: the same as --subject (operator = operator-gpu)
  --group-by LIST       tail: from host, revision, session (per request key always);
                        latency: comma-separated keys, in order, from operator,
                        layer_type, kernel, host, revision, module, module_type, request,
                        session (one row per capture window, "agent/session", with
                        its window_start_ns and window_end_ns)
                        (default: one row for everything selected); counters: from host,
                        revision, pid (rows are always per counter name and source);
                        power: from host, revision, session (rows are always per device).
                        module: the innermost nn.Module / NVTX module range around the
                        operator, as `opmap analyze` attributes it (kernel, operator-gpu,
                        operator-cpu); events outside any module are the row
                        (no module) in tables, an empty key in json and csv;
                        module_type: the module name without instance indices
                        (BertLayer_3 → BertLayer)
  --quantiles LIST      latency: each in [0,1] (default 0.5,0.95,0.99)
  --quantile LIST       tail: the tails to explain, each in (0,1) (default 0.99,0.95)
  --limit N             latency, counters, power: rows at most (default: collector's);
                        tail: breakdown rows fetched at most (default 1000000)
  --top N               kernels: rows at most (default 20)
  -h, --help            this text

)";

constexpr char kQueryExitCodes[] = R"(
exit codes: 0 ok; 2 bad usage, or the collector refused the call (UNAUTHENTICATED,
PERMISSION_DENIED, INVALID_ARGUMENT); 1 the collector is unreachable (UNAVAILABLE) or
another failure. Errors print one line with the gRPC code and message.
)";

int QueryUsageError(const std::string& msg) { return UsageFailure("opmap query", msg); }

bool ParseGroupBy(std::string_view name, opmap::v1::GroupBy* out, std::string* canonical) {
  struct Entry {
    const char* name;
    opmap::v1::GroupBy value;
  };
  static constexpr Entry kGroups[] = {
      {"operator", opmap::v1::GROUP_BY_OPERATOR}, {"layer_type", opmap::v1::GROUP_BY_LAYER_TYPE},
      {"kernel", opmap::v1::GROUP_BY_KERNEL},     {"host", opmap::v1::GROUP_BY_HOST},
      {"revision", opmap::v1::GROUP_BY_REVISION}, {"module", opmap::v1::GROUP_BY_MODULE},
      {"request", opmap::v1::GROUP_BY_REQUEST},   {"pid", opmap::v1::GROUP_BY_PID},
      {"module_type", opmap::v1::GROUP_BY_MODULE_TYPE}, {"session", opmap::v1::GROUP_BY_SESSION},
  };
  std::string n(name);
  std::replace(n.begin(), n.end(), '-', '_');
  for (const Entry& e : kGroups) {
    if (n == e.name) {
      *out = e.value;
      *canonical = e.name;
      return true;
    }
  }
  return false;
}

bool ParseSubject(std::string_view name, opmap::v1::LatencySubject* out) {
  if (name == "kernel") *out = opmap::v1::LATENCY_SUBJECT_KERNEL;
  else if (name == "operator" || name == "operator-gpu" || name == "operator_gpu")
    *out = opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU;
  else if (name == "operator-cpu" || name == "operator_cpu")
    *out = opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU;
  else if (name == "request") *out = opmap::v1::LATENCY_SUBJECT_REQUEST;
  else return false;
  return true;
}

int Breakdown(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range) {
  opmap::v1::TimeBreakdownRequest req;
  if (args.has_range) *req.mutable_range() = range;
  *req.mutable_filter() = args.selection.filter;
  opmap::v1::TimeBreakdownResponse resp;
  std::string endpoint;
  grpc::Status status = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)
            ->TimeBreakdown(&ctx, req, &resp);
      },
      &endpoint);
  if (!status.ok()) return CallFailed(status, client, endpoint);

  if (args.format == Format::kJson) {
    text::JsonWriter w;
    w.BeginObject().Field("query", "breakdown");
    w.Key("devices").BeginArray();
    for (const auto& d : resp.devices()) {
      w.BeginObject()
          .Field("host", d.host())
          .Field("gpu_uuid", d.gpu_uuid())
          .Field("gpu_name", d.gpu_name())
          .Field("span_us", d.span_ns() / 1000.0)
          .Field("busy_us", d.busy_ns() / 1000.0)
          .Field("idle_us", d.idle_ns() / 1000.0)
          .Field("compute_us", d.compute_ns() / 1000.0)
          .Field("non_compute_us", d.non_compute_ns() / 1000.0)
          .Field("kernel_count", static_cast<int64_t>(d.kernel_count()))
          .EndObject();
    }
    w.EndArray();
    return FinishJson(w, resp.unavailable());
  }
  std::vector<std::string> header = {"host",    "gpu_uuid", "gpu_name",   "span_us",
                                     "busy_us", "idle_us",  "compute_us", "non_compute_us",
                                     "events"};
  std::vector<bool> numeric = {false, false, false, true, true, true, true, true, true};
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : resp.devices()) {
    auto text = [&](const std::string& s) {
      return args.format == Format::kCsv ? CsvField(s) : s.empty() ? "-" : s;
    };
    rows.push_back({text(d.host()), text(d.gpu_uuid()), text(d.gpu_name()),
                    UsFromNs(d.span_ns()), UsFromNs(d.busy_ns()), UsFromNs(d.idle_ns()),
                    UsFromNs(d.compute_ns()), UsFromNs(d.non_compute_ns()),
                    absl::StrCat(d.kernel_count())});
  }
  return PrintRows(args, std::move(header), std::move(numeric), std::move(rows),
                   "GPU time per device (interval unions): no devices",
                   absl::StrFormat("GPU time per device (interval unions): %d devices",
                                   resp.devices_size()),
                   resp.unavailable());
}

int Kernels(const Args& args, CollectorChannel& client, const opmap::v1::TimeRange& range) {
  opmap::v1::TopKernelsRequest req;
  if (args.has_range) *req.mutable_range() = range;
  *req.mutable_filter() = args.selection.filter;
  req.set_limit(args.top);
  opmap::v1::TopKernelsResponse resp;
  std::string endpoint;
  grpc::Status status = client.CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)
            ->TopKernels(&ctx, req, &resp);
      },
      &endpoint);
  if (!status.ok()) return CallFailed(status, client, endpoint);
  // TopKernels rows carry no α: the collector's kernel sketches are at the default scale.
  const double alpha = stats::DDSketch::kRelativeAccuracy;

  if (args.format == Format::kJson) {
    text::JsonWriter w;
    w.BeginObject().Field("query", "kernels").Field("relative_accuracy", alpha, 9);
    w.Key("rows").BeginArray();
    for (const auto& k : resp.rows()) {
      w.BeginObject()
          .Field("name", k.name())
          .Field("layer_type", k.layer_type())
          .Field("count", static_cast<int64_t>(k.count()))
          .Field("total_us", k.total_ns() / 1000.0)
          .Field("min_us", k.min_ns() / 1000.0)
          .Field("max_us", k.max_ns() / 1000.0)
          .Field("p50_us", k.p50_ns() / 1000.0)
          .Field("p99_us", k.p99_ns() / 1000.0)
          .Field("share", k.share_of_gpu_time(), 6)
          .EndObject();
    }
    w.EndArray();
    return FinishJson(w, resp.unavailable());
  }
  std::vector<std::string> header = {"name",   "layer_type", "count",  "total_us", "share",
                                     "min_us", "p50_us",     "p99_us", "max_us"};
  std::vector<bool> numeric = {false, false, true, true, true, true, true, true, true};
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : resp.rows()) {
    bool csv = args.format == Format::kCsv;
    rows.push_back({csv ? CsvField(k.name()) : text::PrintableCell(k.name(), 60),
                    csv ? CsvField(k.layer_type()) : k.layer_type(), absl::StrCat(k.count()),
                    UsFromNs(k.total_ns()),
                    csv ? absl::StrFormat("%.6f", k.share_of_gpu_time())
                        : absl::StrFormat("%.2f%%", 100 * k.share_of_gpu_time()),
                    UsFromNs(k.min_ns()), UsFromNs(k.p50_ns()), UsFromNs(k.p99_ns()),
                    UsFromNs(k.max_ns())});
  }
  return PrintRows(args, std::move(header), std::move(numeric), std::move(rows),
                   "top kernels by GPU time: no rows",
                   absl::StrFormat("top %d kernels by GPU time; %s", resp.rows_size(),
                                   AccuracyText(alpha)),
                   resp.unavailable());
}


absl::Status SetGroupBy(std::string_view v, Args* args) {
  args->rows_flag = true;
  bool any = false;
  for (const std::string& part : config::SplitCommaList(v)) {
    opmap::v1::GroupBy g;
    std::string name;
    if (!ParseGroupBy(part, &g, &name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown key '", part,
          "' (expected operator, layer_type, kernel, host, revision, module, module_type, "
          "request, session, pid)"));
    }
    args->group_by.push_back(g);
    args->group_names.push_back(name);
    any = true;
  }
  if (!any) return absl::InvalidArgumentError("needs a list, e.g. operator,layer_type");
  return absl::OkStatus();
}

// A comma-separated list of quantiles, each in [0, 1] (`open`: in (0, 1), a tail needs
// requests above and below it).
absl::Status ParseQuantiles(std::string_view v, bool open, std::vector<double>* out) {
  out->clear();
  for (const std::string& part : config::SplitCommaList(v)) {
    double q;
    if (!absl::SimpleAtod(part, &q) || !(open ? q > 0 && q < 1 : q >= 0 && q <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", part, "' is not in ", open ? "(0, 1)" : "[0, 1]"));
    }
    out->push_back(q);
  }
  if (out->empty()) return absl::InvalidArgumentError("needs at least one value");
  return absl::OkStatus();
}

absl::Status SetQuantiles(std::string_view v, Args* args) {
  args->latency_flag = true;
  return ParseQuantiles(v, false, &args->quantiles);
}

absl::Status SetTailQuantiles(std::string_view v, Args* args) {
  args->tail_flag = true;
  return ParseQuantiles(v, true, &args->tail_quantiles);
}

absl::Status SetSubject(std::string_view v, Args* args) {
  args->latency_flag = true;
  if (!ParseSubject(std::string(v), &args->subject)) {
    return absl::InvalidArgumentError("needs request, operator-cpu, operator-gpu or kernel");
  }
  return absl::OkStatus();
}

// --limit (latency and counters rows) and --top (kernels): also notes that it was given.
auto CountFlag(uint32_t Args::*field, bool Args::*used) {
  return [field, used](std::string_view v, Args* a) {
    a->*used = true;
    return IntField(field, 0, std::numeric_limits<uint32_t>::max())(v, a);
  };
}

const FlagKeys<Args>& QueryKeys() {
  static const FlagKeys<Args> keys = [] {
    FlagKeys<Args> k = {
        {"format", false, "F", "", TableJsonCsvField(&Args::format)},
        {"of", false, "S", "", SetSubject},
        {"subject", false, "S", "", SetSubject},
        {"group-by", false, "KEYS", "", SetGroupBy},
        {"quantiles", false, "Q,...", "", SetQuantiles},
        {"quantile", false, "Q,...", "", SetTailQuantiles},
        {"limit", false, "N", "", CountFlag(&Args::limit, &Args::rows_flag)},
        {"top", false, "N", "", CountFlag(&Args::top, &Args::kernels_flag)},
    };
    AddConnectionKeys(&Args::connection, &k);
    AddSelectionKeys(&Args::selection, &k);
    return k;
  }();
  return keys;
}

}  // namespace

int RunQuery(const std::vector<std::string>& argv) {
  Args args;
  std::vector<std::string> operands;
  if (std::optional<int> rc = ParseCommandFlags(
          "opmap query", argv, QueryKeys(),
          config::CommandShape{.config_file = false, .operands = true, .short_names = {}},
          std::string(kQueryUsage) + kConnectionUsage + kSelectionUsage + kQueryExitCodes, &args,
          &operands)) {
    return *rc;
  }
  if (operands.size() > 1) return QueryUsageError("unexpected argument '" + operands[1] + "'");
  if (!operands.empty()) args.what = operands[0];
  if (args.what.empty()) {
    return QueryUsageError("what to query? latency, tail, breakdown, kernels, counters or power");
  }
  if (args.what != "latency" && args.what != "breakdown" && args.what != "kernels" &&
      args.what != "counters" && args.what != "power" && args.what != "tail") {
    return QueryUsageError("unknown query '" + args.what +
                      "' (expected latency, tail, breakdown, kernels, counters or power)");
  }
  if (args.tail_flag && args.what != "tail") {
    return QueryUsageError("--quantile applies to 'tail' only (latency takes --quantiles)");
  }
  if (args.what == "tail") {
    if (std::string e = TailArgsError(args); !e.empty()) return QueryUsageError(e);
  }
  if (args.latency_flag && args.what != "latency") {
    return QueryUsageError("--subject, --of and --quantiles apply to 'latency' only");
  }
  if (args.rows_flag && args.what != "latency" && args.what != "counters" &&
      args.what != "power" && args.what != "tail") {
    return QueryUsageError("--group-by and --limit apply to 'latency', 'counters' and 'power' "
                           "only");
  }
  if (args.what == "power") {
    for (size_t g = 0; g < args.group_by.size(); ++g) {
      if (args.group_by[g] != opmap::v1::GROUP_BY_HOST &&
          args.group_by[g] != opmap::v1::GROUP_BY_REVISION &&
          args.group_by[g] != opmap::v1::GROUP_BY_SESSION) {
        return QueryUsageError("--group-by: power groups by host, revision or session, not '" +
                               args.group_names[g] + "'");
      }
    }
  }
  if (args.what == "counters") {
    for (size_t g = 0; g < args.group_by.size(); ++g) {
      if (args.group_by[g] != opmap::v1::GROUP_BY_HOST &&
          args.group_by[g] != opmap::v1::GROUP_BY_REVISION &&
          args.group_by[g] != opmap::v1::GROUP_BY_PID) {
        return QueryUsageError("--group-by: counters group by host, revision or pid, not '" +
                          args.group_names[g] + "'");
      }
    }
  } else if (args.what == "latency") {
    for (size_t g = 0; g < args.group_by.size(); ++g) {
      if (args.group_by[g] == opmap::v1::GROUP_BY_PID) {
        return QueryUsageError("--group-by: pid applies to 'counters' only");
      }
    }
  }
  if (args.kernels_flag && args.what != "kernels") {
    return QueryUsageError("--top applies to 'kernels' only");
  }
  opmap::v1::TimeRange range;
  std::string error;
  if (!MakeTimeRange(args.selection, &range, &args.has_range, &error)) return QueryUsageError(error);
  absl::StatusOr<std::unique_ptr<CollectorChannel>> client =
      CollectorChannel::Create(args.connection);
  if (!client.ok()) return QueryUsageError(std::string(client.status().message()));

  if (args.what == "latency") return Latency(args, **client, range);
  if (args.what == "tail") return Tail(args, **client, range);
  if (args.what == "breakdown") return Breakdown(args, **client, range);
  if (args.what == "counters") return Counters(args, **client, range);
  if (args.what == "power") return Power(args, **client, range);
  return Kernels(args, **client, range);
}

}  // namespace opmap::cli
