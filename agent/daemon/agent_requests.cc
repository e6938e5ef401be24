// What the agent answers to control requests (control_server.h): the attach queue, served
// each tick, and the status text.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/daemon/agent.h"
#include "common/metrics/prometheus_text.h"
#include "common/text/printable.h"
#include "common/text/aligned_table.h"
#include "agent/daemon/counter_monitor.h"
#include "agent/daemon/registered_process.h"
#include "agent/daemon/registry.h"
#include "common/text/json_writer.h"

namespace opmap::agent {

void Agent::RequestAttach(pid_t pid, absl::Duration duration, bool stalls,
                          absl::Duration registration_wait,
                          std::function<void(AttachResult)> done) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_attaches_.push_back({pid, duration, stalls, absl::Now() + registration_wait,
                               std::move(done)});
}

void Agent::ServePendingAttaches(absl::Time now) {
  // Called with mu_ held, from Tick.
  std::vector<PendingAttach> keep;
  for (PendingAttach& a : pending_attaches_) {
    auto it = processes_.find(a.pid);
    if (it == processes_.end() || it->second->channel == nullptr) {
      if (now < a.give_up) {
        keep.push_back(std::move(a));
        continue;
      }
      AttachResult r;
      r.outcome = "not_registered";
      r.pid = a.pid;
      r.message = absl::StrFormat(
          "pid %d has not registered with this agent (socket %s). Start it with "
          "NVTX_INJECTION64_PATH=/usr/lib/opmap/libopmap_inject.so (NVTX ranges), "
          "CUDA_INJECTION64_PATH=/usr/lib/opmap/libopmap_inject.so (CUDA kernels, on a GPU) "
          "or LD_PRELOAD=/usr/lib/opmap/libopmap_inject.so, and OPMAP_AGENT_SOCKET=%s if the "
          "agent's socket is not the default: the library is loaded at process start, so "
          "a running process that did not load it cannot be attached",
          a.pid, config_.socket, config_.socket);
      a.done(std::move(r));
      continue;
    }
    RegisteredProcess& p = *it->second;
    if (p.capturing() && p.window->for_attach()) {
      AttachResult r;
      r.outcome = "busy";
      r.pid = a.pid;
      r.message = absl::StrFormat("another attach holds pid %d until its window ends (%s left)",
                                  a.pid, absl::FormatDuration(absl::Trunc(
                                             p.window->planned_end() - now,
                                             absl::Milliseconds(100))));
      a.done(std::move(r));
      continue;
    }
    if (p.capturing()) {  // a scheduled window: let it finish, then take the process
      keep.push_back(std::move(a));
      continue;
    }
    StartWindow(p, a.duration, a.stalls, now, std::move(a.done));
  }
  pending_attaches_ = std::move(keep);
}

std::string Agent::MetricsText() {
  UploadStats up = upload_stats_ ? upload_stats_() : UploadStats{};
  std::lock_guard<std::mutex> lock(mu_);
  metrics::Families f;
  f.Gauge("opmap_agent_processes", "Registered processes.", static_cast<double>(processes_.size()));
  f.Counter("opmap_agent_windows_total", "Capture windows closed since the agent started.",
            static_cast<double>(windows_total_));
  f.Counter("opmap_agent_records_total", "Records drained from the processes' rings.",
            static_cast<double>(records_total_));
  f.Counter("opmap_agent_drops_total",
            "Records the processes' libraries dropped (ring full, bounds), as they reported.",
            static_cast<double>(drops_total_));
  f.Counter("opmap_agent_counter_rows_dropped_total", "Counter samples dropped (bounded buffer).",
            static_cast<double>(counters_->dropped_rows()));
  f.Gauge("opmap_agent_cpu_cores", "The agent's own CPU use, cores, averaged.",
          policy_.cpu_load());
  f.Gauge("opmap_agent_cpu_budget_cores", "The CPU budget (--cpu-budget), cores.",
          config_.cpu_budget);
  f.Gauge("opmap_agent_window_scale",
          "Window length as a fraction of --capture-window (below 1 when over the budget).",
          policy_.window_scale());
  f.Gauge("opmap_agent_rss_peak_bytes", "The agent's peak resident memory.",
          static_cast<double>(peak_rss_bytes_));
  f.Gauge("opmap_agent_upload_connected", "1 while the upload stream to the collector is up.",
          up.connected ? 1 : 0);
  f.Gauge("opmap_agent_upload_queued_batches",
          "Batches not yet acknowledged by the collector (memory and spool): the upload lag.",
          static_cast<double>(up.queued_batches));
  f.Gauge("opmap_agent_upload_spool_bytes", "Bytes in the on-disk spool.",
          static_cast<double>(up.spool_bytes));
  f.Counter("opmap_agent_upload_sent_batches_total", "Batches sent to the collector.",
            static_cast<double>(up.sent_batches));
  f.Counter("opmap_agent_upload_acked_batches_total", "Batches the collector acknowledged.",
            static_cast<double>(up.acked_batches));
  for (int c = 0; c < kDropCauseCount; ++c) {
    f.Counter("opmap_agent_upload_dropped_batches_total",
              "Batches the outbox dropped, by cause (each also reaches the collector as a "
              "drop count).",
              static_cast<double>(up.dropped_by_cause[c]),
              {{"cause", DropCauseName(static_cast<DropCause>(c))}});
  }
  const int64_t busy = registry_ != nullptr ? registry_->refused_busy() : 0;
  const int64_t foreign = registry_ != nullptr ? registry_->refused_foreign() : 0;
  f.Counter("opmap_agent_registrations_refused_total",
            "Registrations refused: busy (every handshake thread taken) or foreign (a uid the "
            "agent does not serve).",
            static_cast<double>(busy), {{"reason", "busy"}});
  f.Counter("opmap_agent_registrations_refused_total",
            "Registrations refused: busy (every handshake thread taken) or foreign (a uid the "
            "agent does not serve).",
            static_cast<double>(foreign), {{"reason", "foreign"}});
  return f.Text();
}

std::string Agent::StatusText(bool json) {
  UploadStats up = upload_stats_ ? upload_stats_() : UploadStats{};
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time now = absl::Now();
  if (json) {
    text::JsonWriter w;
    w.BeginObject();
    w.Field("agent_id", agent_id_).Field("host", host_);
    w.Field("uptime_s", absl::ToDoubleSeconds(now - started_), 1);
    w.Field("cpu_cores", policy_.cpu_load(), 4).Field("cpu_budget_cores", config_.cpu_budget, 4);
    w.Field("window_scale", policy_.window_scale(), 3);
    w.Field("rss_peak_bytes", peak_rss_bytes_);
    w.Field("windows_total", windows_total_).Field("records_drained", records_total_);
    w.Field("drops_total", drops_total_);
    w.Key("upload").BeginObject();
    w.Field("collector", up.collector_state).Field("queued_batches", up.queued_batches);
    w.Field("memory_batches", up.memory_batches);
    w.Field("spool_bytes", up.spool_bytes).Field("sent_batches", up.sent_batches);
    w.Field("acked_batches", up.acked_batches).Field("dropped_batches", up.dropped_batches);
    w.EndObject();
    w.Field("counter_rows_dropped", counters_->dropped_rows());
    w.Field("registrations_refused_busy", registry_ != nullptr ? registry_->refused_busy() : 0);
    w.Field("registrations_refused_foreign",
            registry_ != nullptr ? registry_->refused_foreign() : 0);
    w.Key("processes").BeginArray();
    for (const auto& [pid, p] : processes_) {
      w.BeginObject();
      w.Field("pid", static_cast<int64_t>(pid)).Field("model", p->resource.model_name());
      w.Field("revision", p->resource.model_revision()).Field("cmdline", p->facts.cmdline);
      w.Field("state", p->capturing() ? "capturing" : "idle");
      w.Field("windows", p->windows).Field("records", p->records_total);
      w.Field("drops", p->drops_total).Field("records_per_s", p->last_records_per_s, 1);
      w.Key("unavailable").BeginArray();
      for (const auto& [what, why] : p->unavailable) {
        w.BeginObject().Field("what", what).Field("reason", why).EndObject();
      }
      for (const auto& [what, why] : counters_->Unavailable(pid)) {
        w.BeginObject().Field("what", what).Field("reason", why).EndObject();
      }
      w.EndArray();
      w.Key("counter_rates").BeginObject();
      for (const auto& [name, rate] : counters_->Rates(pid)) w.Field(name, rate.second, 1);
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
    w.Key("exited").BeginArray();
    for (const std::string& e : exited_) w.String(e);
    w.EndArray();
    w.EndObject();
    return w.Take() + "\n";
  }
  std::string out = absl::StrFormat(
      "opmap-agent %s on %s, up %s\n"
      "own CPU %.4f cores (budget %.4f), windows at %.0f%% of %s, peak RSS %.1f MiB\n"
      "since start: %d windows, %d records drained, %d dropped\n"
      "collector: %s; queued %d batches, spool %d bytes, sent %d, acked %d, dropped %d\n\n",
      agent_id_, host_, absl::FormatDuration(absl::Trunc(now - started_, absl::Seconds(1))),
      policy_.cpu_load(), config_.cpu_budget, 100 * policy_.window_scale(),
      absl::FormatDuration(config_.capture_window), peak_rss_bytes_ / 1048576.0,
      windows_total_, records_total_, drops_total_,
      up.collector_state, up.queued_batches, up.spool_bytes, up.sent_batches,
      up.acked_batches, up.dropped_batches);
  // The workload chose its model and revision names and the reasons quote what it ran:
  // printable only (common/text/printable.h), laid out by the one table class.
  text::AlignedTable table({"pid", "state", "model", "revision", "windows", "records", "drops",
                            "records/s"},
                           {true, false, false, false, true, true, true, true});
  std::string unavailable;
  for (const auto& [pid, p] : processes_) {
    table.Add({absl::StrCat(pid), p->capturing() ? "capturing" : "idle",
               text::PrintableCell(p->resource.model_name(), 24),
               text::PrintableCell(p->resource.model_revision(), 16), absl::StrCat(p->windows),
               absl::StrCat(p->records_total), absl::StrCat(p->drops_total),
               absl::StrFormat("%.0f", p->last_records_per_s)});
    for (const auto& [what, why] : p->unavailable) {
      absl::StrAppend(&unavailable, "pid ", pid, " unavailable: ", text::Printable(what), ": ",
                      text::Printable(why), "\n");
    }
  }
  if (processes_.empty()) {
    out += "(no process registered)\n";
  } else {
    out += table.Render() + unavailable;
  }
  for (const std::string& e : exited_) absl::StrAppendFormat(&out, "exited: %s\n", e);
  return out;
}

}  // namespace opmap::agent
