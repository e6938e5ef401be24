#include "tests/integration/inject_test_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "analysis/import/capture_record_view.h"

extern char** environ;

namespace opmap::inject_test {
namespace {

bool Dropped(std::string_view var) {
  for (std::string_view prefix :
       {"OPMAP_", "NVTX_INJECTION", "CUDA_INJECTION", "LD_PRELOAD="}) {
    if (var.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::string InjectLibPath() { return OPMAP_INJECT_LIB; }
std::string HostProgramPath() { return OPMAP_INJECT_HOST; }

std::string DemoPath() {
  const char* env = std::getenv("OPMAP_DEMO_INFER_BIN");
  std::string path = env != nullptr ? env : std::string(OPMAP_BIN_DIR) + "/opmap-demo-infer";
  return access(path.c_str(), X_OK) == 0 ? path : std::string();
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/opmap_inject_XXXXXX";
  const char* p = mkdtemp(tmpl);
  path_ = p != nullptr ? p : "/tmp";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (path_ != "/tmp") std::filesystem::remove_all(path_, ec);
}

Child Spawn(const std::vector<std::string>& argv, const EnvVars& env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!Dropped(*e)) env_strings.emplace_back(*e);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  int in[2], out[2];
  Child c;
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return c;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  c.pid = pid;
  c.stdin_fd = in[1];
  c.stdout_fd = out[0];
  return c;
}

std::optional<std::string> ReadLine(Child& child, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string line;
  while (true) {
    pollfd p{child.stdout_fd, POLLIN, 0};
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (ms <= 0 || poll(&p, 1, ms) <= 0) return std::nullopt;
    char c;
    if (read(child.stdout_fd, &c, 1) != 1) return std::nullopt;
    if (c == '\n') return line;
    line.push_back(c);
  }
}

void WriteLine(Child& child, const std::string& line) {
  const std::string s = line + "\n";
  (void)!write(child.stdin_fd, s.data(), s.size());
}

ExitInfo Finish(Child& child, absl::Duration timeout) {
  ExitInfo info;
  if (child.stdin_fd >= 0) close(child.stdin_fd);
  child.stdin_fd = -1;
  const absl::Time deadline = absl::Now() + timeout;
  // Read stdout to EOF (the child may print more than a pipe holds) within the deadline.
  char buf[4096];
  while (true) {
    pollfd p{child.stdout_fd, POLLIN, 0};
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (ms <= 0 || poll(&p, 1, ms) <= 0) break;
    const ssize_t n = read(child.stdout_fd, buf, sizeof(buf));
    if (n <= 0) break;
    info.stdout_text.append(buf, static_cast<size_t>(n));
  }
  close(child.stdout_fd);
  child.stdout_fd = -1;
  int status = 0;
  rusage ru{};
  while (true) {
    const pid_t r = wait4(child.pid, &status, WNOHANG, &ru);
    if (r == child.pid) break;
    if (absl::Now() > deadline) {
      kill(child.pid, SIGKILL);
      wait4(child.pid, &status, 0, &ru);
      return info;
    }
    usleep(2000);
  }
  info.exited = WIFEXITED(status);
  info.code = info.exited ? WEXITSTATUS(status) : -1;
  info.cpu_seconds = double(ru.ru_utime.tv_sec) + double(ru.ru_utime.tv_usec) / 1e6 +
                     double(ru.ru_stime.tv_sec) + double(ru.ru_stime.tv_usec) / 1e6;
  return info;
}

TestAgent::TestAgent(const std::string& socket_path) {
  auto l = transport::ControlListener::Listen(socket_path);
  if (l.ok()) listener_ = std::move(*l);
}

TestAgent::~TestAgent() {
  (void)StopDraining();
}

absl::Status TestAgent::Accept(absl::Duration timeout) {
  if (listener_ == nullptr) return absl::InternalError("listener did not start");
  auto c = listener_->Accept(timeout);
  if (!c.ok()) return c.status();
  channel_ = std::move(*c);
  auto r = transport::RingReader::AttachFd(channel_->TakeRingFd());
  if (!r.ok()) return r.status();
  reader_ = std::move(*r);
  return absl::OkStatus();
}

absl::Status TestAgent::DrainOnce() {
  std::lock_guard<std::mutex> lock(mu_);
  auto n = reader_->Drain([this](std::span<const uint8_t> rec) {
    records_.emplace_back(reinterpret_cast<const char*>(rec.data()), rec.size());
    return true;
  });
  return n.status();
}

void TestAgent::StartDraining() {
  stop_ = false;
  drainer_ = std::thread([this] {
    while (!stop_.load()) {
      absl::Status s = DrainOnce();
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        drain_status_ = s;
        return;
      }
      usleep(1000);
    }
  });
}

absl::Status TestAgent::StopDraining() {
  stop_ = true;
  if (drainer_.joinable()) drainer_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return drain_status_;
}

bool TestAgent::DrainUntil(const std::function<bool(std::span<const uint8_t>)>& pred,
                           absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (!DrainOnce().ok()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (; checked_ < records_.size(); ++checked_) {
        if (pred(Bytes(records_[checked_]))) {
          ++checked_;
          return true;
        }
      }
    }
    if (absl::Now() > deadline) return false;
    usleep(1000);
  }
}

std::vector<std::string> TestAgent::records() {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

std::optional<transport::ControlMessage> TestAgent::WaitForMessage(uint16_t type,
                                                                 absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    auto m = channel_->Read(deadline - absl::Now());
    if (!m.ok() || !m->has_value()) return std::nullopt;
    messages_.push_back(**m);
    if ((*m)->type == type) return **m;
  }
  return std::nullopt;
}

std::vector<Range> Ranges(const std::vector<std::string>& records) {
  std::vector<Range> out;
  for (const std::string& s : records) {
    const auto rec = Bytes(s);
    if (analysis::RecordTypeOf(rec) != ring::kRange) continue;
    const auto r = analysis::FixedPart<ring::RangeRecord>(rec);
    const auto name = analysis::RecordName(rec);
    if (!r || !name) continue;
    Range x;
    x.name = std::string(*name);
    x.start_ns = r->start_ns;
    x.end_ns = r->end_ns;
    x.domain_id = r->domain_id;
    x.payload = r->payload;
    x.tid = r->tid;
    x.category = r->category;
    x.color = r->color;
    x.depth = r->depth;
    x.flags = r->h.flags;
    x.payload_kind = r->payload_kind;
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<RangeStart> RangeStarts(const std::vector<std::string>& records) {
  std::vector<RangeStart> out;
  for (const std::string& s : records) {
    const auto rec = Bytes(s);
    if (analysis::RecordTypeOf(rec) != ring::kRangeStart) continue;
    const auto r = analysis::FixedPart<ring::RangeStartRecord>(rec);
    const auto name = analysis::RecordName(rec);
    if (!r || !name) continue;
    out.push_back({std::string(*name), r->range_id, r->domain_id, r->payload, r->start_ns,
                   r->tid});
  }
  return out;
}

std::vector<ring::RangeEndRecord> RangeEnds(const std::vector<std::string>& records) {
  std::vector<ring::RangeEndRecord> out;
  for (const std::string& s : records) {
    const auto rec = Bytes(s);
    if (analysis::RecordTypeOf(rec) != ring::kRangeEnd) continue;
    if (auto r = analysis::FixedPart<ring::RangeEndRecord>(rec)) out.push_back(*r);
  }
  return out;
}

std::vector<std::pair<uint64_t, std::string>> Domains(const std::vector<std::string>& records) {
  std::vector<std::pair<uint64_t, std::string>> out;
  for (const std::string& s : records) {
    const auto rec = Bytes(s);
    if (analysis::RecordTypeOf(rec) != ring::kDomain) continue;
    const auto r = analysis::FixedPart<ring::DomainRecord>(rec);
    const auto name = analysis::RecordName(rec);
    if (r && name) out.emplace_back(r->domain_id, std::string(*name));
  }
  return out;
}

std::vector<Status> Statuses(const std::vector<std::string>& records) {
  std::vector<Status> out;
  for (const std::string& s : records) {
    const auto rec = Bytes(s);
    if (analysis::RecordTypeOf(rec) != ring::kStatus) continue;
    const auto r = analysis::FixedPart<ring::StatusRecord>(rec);
    const auto msg = analysis::RecordName(rec);
    if (r && msg) out.push_back({r->component, r->code, std::string(*msg)});
  }
  return out;
}

std::vector<ring::WindowRecord> Windows(const std::vector<std::string>& records) {
  std::vector<ring::WindowRecord> out;
  for (const std::string& s : records) {
    const auto rec = Bytes(s);
    if (analysis::RecordTypeOf(rec) != ring::kWindow) continue;
    if (auto r = analysis::FixedPart<ring::WindowRecord>(rec)) out.push_back(*r);
  }
  return out;
}

size_t CountType(const std::vector<std::string>& records, uint16_t type) {
  size_t n = 0;
  for (const std::string& s : records) n += analysis::RecordTypeOf(Bytes(s)) == type;
  return n;
}

bool IsWindowMark(std::span<const uint8_t> record, uint32_t mark) {
  if (analysis::RecordTypeOf(record) != ring::kWindow) return false;
  const auto r = analysis::FixedPart<ring::WindowRecord>(record);
  return r && r->mark == mark;
}

}  // namespace opmap::inject_test
