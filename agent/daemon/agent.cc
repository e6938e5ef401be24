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

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/capture/capture_import.h"
#include "agent/capture/unix_socket.h"
#include "agent/daemon/capture_encoding.h"
#include "agent/daemon/counter_monitor.h"
#include "agent/daemon/registered_process.h"
#include "agent/inject/ring_layout.h"
#include "analysis/stats/multiplex.h"

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

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The window's counter rows summed per counter: raw, scaled (multiplexing), per second.
std::string CountersTable(const std::vector<CounterRow>& rows,
                          const std::vector<std::pair<std::string, std::string>>& unavailable,
                          absl::Duration window) {
  struct Sum {
    opmap::v1::CounterSource source;
    int64_t value = 0, enabled = 0, running = 0;
  };
  std::map<std::string, Sum> sums;
  for (const CounterRow& r : rows) {
    Sum& s = sums[r.name];
    s.source = r.source;
    s.value += r.value;
    s.enabled += r.time_enabled_ns;
    s.running += r.time_running_ns;
  }
  std::string out = absl::StrFormat("%-28s %-10s %16s %16s %14s\n", "counter", "source",
                                    "value", "scaled", "per_second");
  for (const auto& [name, s] : sums) {
    const char* source = s.source == opmap::v1::COUNTER_SOURCE_PAPI ? "papi" : "perf_event";
    const std::optional<double> scaled = analysis::ScaleMultiplexed(s.value, s.enabled, s.running);
    if (!scaled.has_value()) {
      absl::StrAppendFormat(&out, "%-28s %-10s %16d %16s %14s\n", name, source, s.value,
                            "unavailable: never scheduled on the PMU", "");
      continue;
    }
    absl::StrAppendFormat(&out, "%-28s %-10s %16d %16.0f %14.1f\n", name, source, s.value,
                          *scaled, *scaled / std::max(1e-9, absl::ToDoubleSeconds(window)));
  }
  if (sums.empty()) out += "(no counter samples in the window)\n";
  for (const auto& [what, why] : unavailable) {
    if (what.starts_with("counter")) absl::StrAppendFormat(&out, "unavailable: %s: %s\n", what, why);
  }
  return out;
}

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
  if (library_fd_ >= 0) {
    close(library_fd_);
    unlink(config_.socket.c_str());
  }
  if (control_fd_ >= 0) {
    close(control_fd_);
    unlink(config_.control_socket.c_str());
  }
}

absl::Status Agent::Start() {
  absl::StatusOr<int> lib = capture::ListenUnix(config_.socket);
  if (!lib.ok()) return absl::Status(lib.status().code(), absl::StrCat("--socket: ", lib.status().message()));
  library_fd_ = *lib;
  absl::StatusOr<int> ctl = capture::ListenUnix(config_.control_socket);
  if (!ctl.ok()) {
    return absl::Status(ctl.status().code(),
                        absl::StrCat("--control-socket: ", ctl.status().message()));
  }
  control_fd_ = *ctl;
  counters_ = std::make_unique<CounterMonitor>(config_.counter_interval);
  policy_.ObserveCpu(absl::Now(), ProcessCpuSeconds());
  return absl::OkStatus();
}

void Agent::Stop() { stop_.store(true); }

void Agent::Run() {
  while (!stop_.load()) {
    // Library channels are read each tick without waiting; only the listeners wake us.
    pollfd fds[2] = {{library_fd_, POLLIN, 0}, {control_fd_, POLLIN, 0}};
    absl::Duration tick;
    {
      std::lock_guard<std::mutex> lock(mu_);
      tick = Capturing() > 0 || !pending_attaches_.empty() ? kTickCapturing : kTickIdle;
    }
    poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(tick)));
    if (fds[0].revents & POLLIN) AcceptLibraries();
    if (fds[1].revents & POLLIN) AcceptControl();
    InstallRegistrations(/*wait=*/false);
    Tick(absl::Now());
  }
  InstallRegistrations(/*wait=*/true);  // handshakes end within their 1 s deadline
  // Shutdown: end open windows (their batches still go out) and close the channels. No
  // kDetach: that would leave the libraries dormant for good, and an agent restart
  // (upgrade, rollout) must get its processes back — they see the socket close and
  // register again with the next agent.
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time now = absl::Now();
  for (auto& [pid, p] : processes_) {
    if (p->capturing) {
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

void Agent::AcceptLibraries() {
  InstallRegistrations(/*wait=*/false);
  // Bounded: a burst of registrations is accepted over a few ticks, not in one; the
  // handshakes themselves run on their own threads.
  for (int i = 0; i < 8; ++i) {
    pollfd pfd{library_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0) return;
    absl::StatusOr<capture::Peer> peer = capture::AcceptPeer(library_fd_, absl::Now());
    if (!peer.ok()) {
      std::fprintf(stderr, "opmap-agent: registration refused: %s\n",
                   std::string(peer.status().message()).c_str());
      continue;
    }
    if (InFlight(/*registration=*/true) >= kMaxHandshakes) {
      ++registrations_refused_busy_;
      std::fprintf(stderr,
                   "opmap-agent: registration from pid %d refused: %d registrations already in "
                   "progress (the library retries)\n",
                   static_cast<int>(peer->cred.pid), kMaxHandshakes);
      close(peer->fd);
      continue;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    const int fd = peer->fd;
    const ucred cred = peer->cred;
    handshakes_.push_back({std::thread([this, fd, cred, done] {
                             std::unique_ptr<RegisteredProcess> p = Handshake(fd, cred);
                             if (p != nullptr) {
                               std::lock_guard<std::mutex> lock(registered_mu_);
                               registered_.push_back(std::move(p));
                             }
                             done->store(true);
                           }),
                           done, /*registration=*/true});
  }
}

int Agent::InFlight(bool registration) const {
  int n = 0;
  for (const HandshakeThread& h : handshakes_) n += h.registration == registration ? 1 : 0;
  return n;
}

std::unique_ptr<RegisteredProcess> Agent::Handshake(int fd, ucred cred) {
  absl::StatusOr<std::unique_ptr<capture::ControlChannel>> channel =
      capture::ControlChannel::FromAcceptedPeer(fd, cred, absl::Seconds(1));
  if (!channel.ok()) {
    std::fprintf(stderr, "opmap-agent: registration from pid %d refused: %s\n",
                 static_cast<int>(cred.pid), std::string(channel.status().message()).c_str());
    return nullptr;
  }
  auto p = std::make_unique<RegisteredProcess>();
  p->pid = (*channel)->hello().peer_pid;
  absl::StatusOr<std::unique_ptr<capture::RingReader>> ring =
      capture::RingReader::AttachFd((*channel)->TakeRingFd());
  if (!ring.ok()) {
    std::fprintf(stderr, "opmap-agent: pid %d: ring refused: %s\n", static_cast<int>(p->pid),
                 std::string(ring.status().message()).c_str());
    (void)(*channel)->Detach();
    return nullptr;
  }
  absl::StatusOr<ProcFacts> facts = ReadProcFacts(p->pid);
  if (facts.ok()) p->facts = *facts;
  for (const auto& [k, v] : (*channel)->hello().metadata) {
    absl::StrAppend(&p->metadata_text, k, "=", v, "\n");
  }
  p->resource = BuildResource(host_, p->pid, p->facts, (*channel)->hello().metadata);
  p->channel = std::move(*channel);
  p->ring = std::move(*ring);
  return p;
}

void Agent::InstallRegistrations(bool wait) {
  for (auto it = handshakes_.begin(); it != handshakes_.end();) {
    if (wait || it->done->load()) {
      it->thread.join();
      it = handshakes_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<std::unique_ptr<RegisteredProcess>> ready;
  {
    std::lock_guard<std::mutex> lock(registered_mu_);
    ready.swap(registered_);
  }
  for (std::unique_ptr<RegisteredProcess>& p : ready) {
    p->registered_at = absl::Now();
    // The first scheduled window comes soon after registration, spread over up to a
    // second so processes started together do not all capture at once.
    p->next_window = schedule_enabled_
                         ? policy_.FirstWindow(p->registered_at, absl::Uniform(rng_, 0.0, 1.0))
                         : absl::InfiniteFuture();
    counters_->Track(p->pid);
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
  for (const auto& [pid, p] : processes_) n += p->capturing ? 1 : 0;
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
    if (p->capturing) {
      DrainWindow(*p);
      const absl::Time planned_end = p->window_started + p->window_length;
      if (!p->stop_sent && now > planned_end + kWindowGrace) {
        (void)p->channel->StopWindow(p->window_id);
        p->stop_sent = true;
      } else if (p->stop_sent && now > planned_end + 2 * kWindowGrace) {
        FinishWindow(*p, now, "the library did not confirm the window's end");
      }
    }
  }
  for (pid_t pid : gone) processes_.erase(pid);
  ServePendingAttaches(now);
  if (!schedule_enabled_) return;
  for (auto& [pid, p] : processes_) {
    if (p->capturing || now < p->next_window) continue;
    if (Capturing() >= config_.max_concurrent_captures) break;
    StartWindow(*p, policy_.WindowLength(), config_.stalls, now);
  }
}

void Agent::ReadChannel(RegisteredProcess& p, absl::Time now) {
  for (int i = 0; i < 16; ++i) {
    absl::StatusOr<std::optional<capture::ControlMessage>> m =
        p.channel->Read(absl::ZeroDuration());
    if (!m.ok()) {
      Forget(p, now, std::string(m.status().message()));
      return;
    }
    if (!m->has_value()) return;
    const capture::ControlMessage& msg = **m;
    if (msg.type == ring::kWindowDone) {
      absl::StatusOr<ring::WindowDoneBody> done = capture::ControlChannel::ParseWindowDone(msg);
      if (done.ok() && p.capturing && done->window_id == p.window_id) {
        DrainWindow(p, /*final=*/true);
        FinishWindow(p, now, "");
      }
    } else if (msg.type == ring::kStatusUpdate) {
      absl::StatusOr<capture::ControlChannel::StatusUpdate> u =
          capture::ControlChannel::ParseStatusUpdate(msg);
      if (!u.ok() || u->code == ring::kStatusOk) continue;
      std::string what = u->component == ring::kComponentCupti        ? "cupti"
                         : u->component == ring::kComponentPcSampling ? "pc_sampling"
                                                                      : "nvtx";
      std::erase_if(p.unavailable, [&](const auto& e) { return e.first == what; });
      p.unavailable.emplace_back(what, u->message);
    }
  }
}

void Agent::Forget(RegisteredProcess& p, absl::Time now, std::string why) {
  if (p.capturing) {
    DrainWindow(p, /*final=*/true);
    FinishWindow(p, now, "the process exited during the window");
  }
  counters_->Untrack(p.pid);
  exited_.push_back(absl::StrFormat("pid %d (%s): %s", p.pid, p.resource.model_name(), why));
  if (exited_.size() > kMaxExitedShown) exited_.erase(exited_.begin());
  p.channel.reset();
}

void Agent::StartWindow(RegisteredProcess& p, absl::Duration duration, bool stalls,
                        absl::Time now) {
  uint32_t flags = ring::kCaptureNvtx | ring::kCaptureCupti;
  if (stalls) flags |= ring::kCaptureStalls;
  p.window_id += 1;
  if (absl::Status s = p.channel->StartWindow(p.window_id, duration, flags); !s.ok()) {
    Forget(p, now, absl::StrCat("start window: ", s.message()));
    return;
  }
  p.capturing = true;
  p.stop_sent = false;
  p.window_started = now;
  p.window_length = duration;
  p.records.Release();
  p.budget_drops = 0;
  p.ring_before = p.ring->Counters();
  analysis::BatchingOptions options;
  options.agent_id = agent_id_;
  // pid, process start and this agent run tell every window apart, across pid reuse and
  // agent restarts (a restarted agent counts windows from 1 again).
  options.session_id = absl::StrFormat("%d.%d.%d.w%d", p.pid, p.facts.start_ticks, boot_ns_,
                                       p.window_id);
  options.resource = p.resource;
  options.max_records_per_batch = static_cast<size_t>(config_.chunk_records);
  p.converter = std::make_unique<WindowConverter>(p.pid, std::move(options),
                                                  static_cast<size_t>(config_.chunk_records));
}

void Agent::DrainWindow(RegisteredProcess& p, bool final) {
  const bool keep_raw = static_cast<bool>(p.attach_done);
  const size_t budget = static_cast<size_t>(config_.memory_budget_bytes);
  // Bounded per tick (the ring reader also stops after two passes): the scheduler, the
  // control socket and the other rings always get their turn, and memory stays one chunk
  // deep whatever rate the producer writes at; what is left waits in its bounded ring.
  // The final drain of a window takes what the ring holds (two passes still bound it).
  constexpr uint64_t kMaxRecordsPerTick = uint64_t{1} << 18;
  absl::StatusOr<uint64_t> n = p.ring->Drain([&](std::span<const uint8_t> rec) {
    p.converter->Add(rec);
    if (keep_raw) {
      if (p.records.bytes() + rec.size() > budget) {
        ++p.budget_drops;  // over the attach's memory budget: counted, never silently lost
      } else {
        p.records.Append(rec);
      }
    }
    return true;
  }, final ? ~uint64_t{0} : kMaxRecordsPerTick);
  if (!n.ok() && !std::exchange(p.ring_error_logged, true)) {
    std::fprintf(stderr, "opmap-agent: pid %d: ring: %s (logged once; its records are no "
                 "longer read)\n", p.pid, std::string(n.status().message()).c_str());
  }
  // Hand completed records on while the window is open: memory stays one chunk deep.
  absl::StatusOr<std::vector<opmap::v1::Batch>> chunk = p.converter->TakeChunk();
  if (!chunk.ok()) {
    std::fprintf(stderr, "opmap-agent: pid %d window %llu: chunk not sent: %s\n", p.pid,
                 static_cast<unsigned long long>(p.window_id),
                 std::string(chunk.status().message()).c_str());
  } else if (!chunk->empty()) {
    sink_(std::move(*chunk));
  }
}

void Agent::FinishWindow(RegisteredProcess& p, absl::Time now, std::string note) {
  p.capturing = false;
  const capture::RingCounters after = p.ring->Counters();
  WindowTail tail;
  int64_t drops = 0;
  for (int c = 0; c < static_cast<int>(ring::kDropCauseCount); ++c) {
    if (const char* name = capture::DropCounterName(c)) {
      // The producer writes these counters: a hostile one may move them backwards or by
      // 2^63. Only a forward move within kMaxDropsPerWindow is believed.
      const int64_t n = capture::CounterDelta(after.drops[c], p.ring_before.drops[c]);
      tail.ring_drops.emplace_back(name, n);
      // A pop whose push came before the window is the window's edge, not a loss: it is
      // reported by cause but not added to the drops a user is told about.
      if (c != ring::kUnmatchedPop) drops += n;
    }
  }
  // Records over an attach's budget still go out in the batches; only the attach's local
  // capture lacks them, and its outcome counts them as drops.
  tail.unavailable = p.unavailable;
  for (auto& u : counters_->Unavailable(p.pid)) tail.unavailable.push_back(std::move(u));
  if (!note.empty()) tail.unavailable.emplace_back("window end", note);
  tail.counters = counters_->Take(p.pid);
  const int64_t records = p.converter->records();
  absl::StatusOr<std::vector<opmap::v1::Batch>> last =
      std::move(*std::exchange(p.converter, nullptr)).Finish(tail);

  const double seconds = absl::ToDoubleSeconds(now - p.window_started);
  p.windows += 1;
  p.records_total += records;
  p.drops_total = capture::SaturatingAdd(p.drops_total, drops);
  p.last_records_per_s = seconds > 0 ? records / seconds : 0;
  p.last_window_end = now;
  windows_total_ += 1;
  records_total_ += records;
  drops_total_ = capture::SaturatingAdd(drops_total_, drops);
  ScheduleNext(p, now);

  if (p.attach_done) {
    AttachResult r;
    r.pid = p.pid;
    r.window = now - p.window_started;
    r.records = records;
    r.drops = capture::SaturatingAdd(drops, p.budget_drops);
    r.counters = CountersTable(tail.counters, tail.unavailable, r.window);
    absl::StatusOr<std::string> bytes =
        EncodeCapture(p.pid, p.ring->capacity(), p.metadata_text, p.records, after);
    if (bytes.ok()) {
      r.outcome = "captured";
      r.message = note.empty() ? "window complete" : note;
      r.capture = std::move(*bytes);
    } else {
      r.outcome = "error";
      r.message = std::string(bytes.status().message());
    }
    std::exchange(p.attach_done, nullptr)(std::move(r));
  }
  p.records.Release();
  if (!last.ok()) {
    std::fprintf(stderr, "opmap-agent: pid %d window %llu: not sent: %s\n", p.pid,
                 static_cast<unsigned long long>(p.window_id),
                 std::string(last.status().message()).c_str());
    return;
  }
  sink_(std::move(*last));
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
