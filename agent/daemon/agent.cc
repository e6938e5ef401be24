#include "agent/daemon/agent.h"

#include <malloc.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>

#include "abi/control_messages.h"
#include "abi/ring_records.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/daemon/control_server.h"
#include "agent/daemon/counter_monitor.h"
#include "agent/daemon/power_monitor.h"
#include "agent/daemon/process_resource.h"
#include "agent/daemon/registered_process.h"
#include "agent/daemon/registry.h"
#include "analysis/import/capture_import.h"
#include "common/base/wall_clock.h"

namespace opmap::agent {
namespace {

constexpr absl::Duration kTickCapturing = absl::Milliseconds(10);
constexpr absl::Duration kTickIdle = absl::Milliseconds(100);
// After its planned end, how long a window may take to send kWindowDone before the agent
// asks it to stop, and then before the agent closes it with what it has.
constexpr absl::Duration kWindowGrace = absl::Seconds(2);
constexpr size_t kMaxExitedShown = 16;

std::string MachineIdOrHost() {
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (in >> id && !id.empty()) return id;
  return HostName();
}

double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

using base::RealtimeNs;

}  // namespace

Agent::Agent(AgentConfig config, BatchSink sink, std::function<UploadStats()> upload_stats)
    : config_(std::move(config)),
      sink_(std::move(sink)),
      upload_stats_(std::move(upload_stats)),
      policy_(WindowPolicyOptions{config_.capture_every, config_.capture_window,
                                  config_.capture_jitter, config_.cpu_budget}) {
  host_ = HostName();
  agent_id_ = config_.agent_id.empty() ? MachineIdOrHost() : config_.agent_id;
  boot_ns_ = RealtimeNs();
  started_ = absl::Now();
}

Agent::~Agent() {
  Stop();
  // Their threads call back into the agent (status, attach): they go first.
  control_.reset();
  registry_.reset();
}

absl::Status Agent::Start() {
  absl::StatusOr<std::unique_ptr<Registry>> registry = Registry::Listen(config_.socket, host_);
  if (!registry.ok()) {
    return absl::Status(registry.status().code(),
                        absl::StrCat("--socket: ", registry.status().message()));
  }
  registry_ = std::move(*registry);
  ControlHandlers handlers;
  handlers.status = [this](bool json) { return StatusText(json); };
  handlers.attach = [this](pid_t pid, absl::Duration duration, bool stalls,
                           std::function<void(AttachResult)> done) {
    RequestAttach(pid, duration, stalls, absl::ZeroDuration(), std::move(done));
  };
  absl::StatusOr<std::unique_ptr<ControlServer>> control =
      ControlServer::Listen(config_.control_socket, std::move(handlers));
  if (!control.ok()) {
    return absl::Status(control.status().code(),
                        absl::StrCat("--control-socket: ", control.status().message()));
  }
  control_ = std::move(*control);
  counters_ = std::make_unique<CounterMonitor>(config_.counter_interval);
  power_ = std::make_unique<PowerMonitor>(PowerMonitorOptions{
      config_.nvml_library, config_.powercap_root, config_.power_interval});
  policy_.ObserveCpu(absl::Now(), ProcessCpuSeconds());
  return absl::OkStatus();
}

void Agent::Stop() { stop_.store(true); }

void Agent::Run() {
  while (!stop_.load()) {
    // Library channels are read each tick without waiting; only the listeners wake us.
    pollfd fds[2] = {{registry_->fd(), POLLIN, 0}, {control_->fd(), POLLIN, 0}};
    absl::Duration tick;
    {
      std::lock_guard<std::mutex> lock(mu_);
      tick = Capturing() > 0 || !pending_attaches_.empty() ? kTickCapturing : kTickIdle;
    }
    poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(tick)));
    if (fds[0].revents & POLLIN) registry_->Accept();
    if (fds[1].revents & POLLIN) control_->Accept();
    control_->Reap(/*wait=*/false);
    InstallRegistrations(/*wait=*/false);
    Tick(absl::Now());
  }
  InstallRegistrations(/*wait=*/true);  // handshakes end within their 1 s deadline
  control_->Reap(/*wait=*/true);        // requests within their 2 s deadline
  // Shutdown: end open windows (their batches still go out) and close the channels. No
  // kDetach: that would leave the libraries dormant for good, and an agent restart
  // (upgrade, rollout) must get its processes back — they see the socket close and
  // register again with the next agent.
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time now = absl::Now();
  for (auto& [pid, p] : processes_) {
    if (p->capturing()) {
      (void)p->channel->StopWindow(p->window_id);
      DrainWindow(*p, /*final=*/true);
      FinishWindow(*p, now, "agent stopping");
    }
    p->channel.reset();
  }
  for (PendingAttach& a : pending_attaches_) {
    a.done(AttachOutcome("error", a.pid, "the agent is stopping"));
  }
  pending_attaches_.clear();
}

void Agent::InstallRegistrations(bool wait) {
  for (std::unique_ptr<RegisteredProcess>& p : registry_->TakeReady(wait)) {
    p->registered_at = absl::Now();
    // The first scheduled window comes soon after registration, spread over up to a
    // second so processes started together do not all capture at once.
    p->next_window = schedule_enabled_
                         ? policy_.FirstWindow(p->registered_at, absl::Uniform(rng_, 0.0, 1.0))
                         : absl::InfiniteFuture();
    counters_->Track(p->pid, p->pidfd.get(), p->start_time);
    std::lock_guard<std::mutex> lock(mu_);
    processes_[p->pid] = std::move(p);
  }
}

void Agent::ScheduleNext(RegisteredProcess& p, absl::Time from) {
  if (!schedule_enabled_) {
    p.next_window = absl::InfiniteFuture();
    return;
  }
  p.next_window = policy_.NextWindow(
      from, absl::Uniform(absl::IntervalClosedClosed, rng_, -1.0, 1.0));
}

int Agent::Capturing() const {
  int n = 0;
  for (const auto& [pid, p] : processes_) n += p->capturing() ? 1 : 0;
  return n;
}

void Agent::Tick(absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  UpdateCpuBudget(now);
  std::vector<pid_t> gone;
  for (auto& [pid, p] : processes_) {
    // A process forgotten since the last tick (its kStartWindow could not be sent, in the
    // scheduling loop below) has no channel left to read: it only goes now.
    if (p->channel != nullptr) ReadChannel(*p, now);
    if (p->channel == nullptr) {
      gone.push_back(pid);
      continue;
    }
    if (p->capturing()) {
      DrainWindow(*p);
      WindowSession& w = *p->window;
      if (!w.stop_sent() && now > w.planned_end() + kWindowGrace) {
        (void)p->channel->StopWindow(w.window_id());
        w.set_stop_sent();
      } else if (w.stop_sent() && now > w.planned_end() + 2 * kWindowGrace) {
        FinishWindow(*p, now, "the library did not confirm the window's end");
      }
    }
  }
  for (pid_t pid : gone) processes_.erase(pid);
  ServePendingAttaches(now);
  if (!schedule_enabled_) return;
  for (auto& [pid, p] : processes_) {
    if (p->capturing() || now < p->next_window) continue;
    if (Capturing() >= config_.max_concurrent_captures) break;
    StartWindow(*p, policy_.WindowLength(), config_.stalls, now);
  }
}

void Agent::ReadChannel(RegisteredProcess& p, absl::Time now) {
  for (int i = 0; i < 16; ++i) {
    absl::StatusOr<std::optional<transport::ControlMessage>> m =
        p.channel->Read(absl::ZeroDuration());
    if (!m.ok()) {
      Forget(p, now, std::string(m.status().message()));
      return;
    }
    if (!m->has_value()) return;
    const transport::ControlMessage& msg = **m;
    if (msg.type == ring::kWindowDone) {
      absl::StatusOr<ring::WindowDoneBody> done = transport::ControlChannel::ParseWindowDone(msg);
      if (done.ok() && p.capturing() && done->window_id == p.window_id) {
        DrainWindow(p, /*final=*/true);
        FinishWindow(p, now, "");
      }
    } else if (msg.type == ring::kStatusUpdate) {
      absl::StatusOr<transport::ControlChannel::StatusUpdate> u =
          transport::ControlChannel::ParseStatusUpdate(msg);
      if (!u.ok() || u->code == ring::kStatusOk) continue;
      std::string what = analysis::ComponentName(u->component);
      std::erase_if(p.unavailable, [&](const auto& e) { return e.first == what; });
      p.unavailable.emplace_back(what, u->message);
    }
  }
}

void Agent::Forget(RegisteredProcess& p, absl::Time now, std::string why) {
  if (p.capturing()) {
    DrainWindow(p, /*final=*/true);
    FinishWindow(p, now, "the process exited during the window");
  }
  counters_->Untrack(p.pid);
  exited_.push_back(absl::StrFormat("pid %d (%s): %s", p.pid, p.resource.model_name(), why));
  if (exited_.size() > kMaxExitedShown) exited_.erase(exited_.begin());
  p.channel.reset();
}

void Agent::StartWindow(RegisteredProcess& p, absl::Duration duration, bool stalls,
                        absl::Time now, std::function<void(AttachResult)> attach_done) {
  uint32_t flags = ring::kCaptureNvtx | ring::kCaptureCupti;
  if (stalls) flags |= ring::kCaptureStalls;
  p.window_id += 1;
  if (absl::Status s = p.channel->StartWindow(p.window_id, duration, flags); !s.ok()) {
    Forget(p, now, absl::StrCat("start window: ", s.message()));
    if (attach_done) {
      attach_done(AttachOutcome("error", p.pid, "the process went away as the window started"));
    }
    return;
  }
  WindowSessionOptions o;
  o.pid = p.pid;
  o.window_id = p.window_id;
  o.started = now;
  o.length = duration;
  o.batching.agent_id = agent_id_;
  // pid, process start and this agent run tell every window apart, across pid reuse and
  // agent restarts (a restarted agent counts windows from 1 again).
  o.batching.session_id = absl::StrFormat("%d.%d.%d.w%d", p.pid, p.facts.start_ticks, boot_ns_,
                                          p.window_id);
  o.batching.resource = p.resource;
  if (o.batching.resource.gpus_size() == 0) {
    for (opmap::v1::Gpu& g : power_->Gpus(p.gpus)) *o.batching.resource.add_gpus() = std::move(g);
  }
  AddPlatformLabels(&o.batching.resource);
  o.batching.max_records_per_batch = static_cast<size_t>(config_.chunk_records);
  o.chunk_records = static_cast<size_t>(config_.chunk_records);
  o.memory_budget_bytes = static_cast<size_t>(config_.memory_budget_bytes);
  o.attach_done = std::move(attach_done);
  p.window = std::make_unique<WindowSession>(std::move(o), p.ring->Counters());
}

void Agent::DrainWindow(RegisteredProcess& p, bool final) {
  // Bounded per tick (the ring reader also stops after two passes): the scheduler, the
  // control socket and the other rings always get their turn, and memory stays one chunk
  // deep whatever rate the producer writes at; what is left waits in its bounded ring.
  // The final drain of a window takes what the ring holds (two passes still bound it).
  constexpr uint64_t kMaxRecordsPerTick = uint64_t{1} << 18;
  absl::Status s = p.window->Drain(*p.ring, final ? ~uint64_t{0} : kMaxRecordsPerTick, sink_);
  if (!s.ok() && !std::exchange(p.ring_error_logged, true)) {
    std::fprintf(stderr, "opmap-agent: pid %d: ring: %s (logged once; its records are no "
                 "longer read)\n", p.pid, std::string(s.message()).c_str());
  }
}

void Agent::FinishWindow(RegisteredProcess& p, absl::Time now, std::string note) {
  std::vector<std::pair<std::string, std::string>> unavailable = p.unavailable;
  for (auto& u : counters_->Unavailable(p.pid)) unavailable.push_back(std::move(u));
  std::unique_ptr<WindowSession> window = std::move(p.window);
  const absl::Time started = window->started();
  const double seconds = absl::ToDoubleSeconds(now - started);
  WindowPower power = power_->Window(absl::ToUnixNanos(window->started()),
                                     absl::ToUnixNanos(now), p.gpus);
  for (auto& u : power.unavailable) unavailable.push_back(std::move(u));
  const WindowTotals t = std::move(*window).Finish(*p.ring, std::move(power.rows),
                                                   std::move(unavailable),
                                                   counters_->Take(p.pid), now, note,
                                                   p.metadata_text, sink_);
  p.windows += 1;
  p.records_total += t.records;
  p.drops_total = transport::SaturatingAdd(p.drops_total, t.drops);
  p.last_records_per_s = seconds > 0 ? t.records / seconds : 0;
  p.last_window_end = now;
  windows_total_ += 1;
  records_total_ += t.records;
  drops_total_ = transport::SaturatingAdd(drops_total_, t.drops);
  // --capture-every is start to start ("one window per process this often"); a next
  // start already past begins at the next tick.
  ScheduleNext(p, started);
  // A window's conversion frees its chunks; give the pages back rather than keep the
  // high-water mark of the busiest window for the agent's lifetime.
  malloc_trim(0);
}

void Agent::UpdateCpuBudget(absl::Time now) {
  if (!policy_.WantsCpuSample(now)) return;
  policy_.ObserveCpu(now, ProcessCpuSeconds());
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  peak_rss_bytes_ = int64_t{ru.ru_maxrss} * 1024;
}

}  // namespace opmap::agent
