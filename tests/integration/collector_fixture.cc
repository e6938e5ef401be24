#include "tests/integration/collector_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace opmap::testing {

std::string BinDir() {
  if (const char* env = std::getenv("OPMAP_BIN_DIR"); env && *env) return env;
  return OPMAP_BIN_DIR;
}
std::string OpmapBin() { return BinDir() + "/opmap"; }
std::string CollectorBin() { return BinDir() + "/opmap-collector"; }

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/opmap-it-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  path_ = tmpl;
}

TempDir::~TempDir() {
  if (std::getenv("OPMAP_KEEP_TEST_DIRS")) {
    std::fprintf(stderr, "kept %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFileOrDie(const std::string& path, const std::string& data, int mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0 || write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
    std::perror(path.c_str());
    std::abort();
  }
  fchmod(fd, mode);
  close(fd);
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Child::~Child() {
  if (pid_ > 0 && !status_) {
    kill(pid_, SIGKILL);
    Wait(absl::Seconds(10));
  }
}

absl::Status Child::Start(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, const std::vector<std::string>& env) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    if (absl::StartsWith(*e, "OPMAP_TOKEN=")) continue;
    envs.push_back(*e);
  }
  for (const std::string& e : env) envs.push_back(e);
  std::vector<char*> cargv, cenv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const std::string& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::InternalError(absl::StrCat("spawn ", argv[0], ": ", strerror(rc)));
  pid_ = pid;
  status_.reset();
  return absl::OkStatus();
}

std::optional<int> Child::Wait(absl::Duration timeout) {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(2));
  }
}

bool Child::running() { return pid_ > 0 && !Wait(absl::ZeroDuration()).has_value(); }

void Child::Signal(int sig) {
  if (pid_ > 0 && !status_) kill(pid_, sig);
}

RunResult Run(const std::vector<std::string>& argv, const std::string& dir,
              const std::vector<std::string>& env, absl::Duration timeout) {
  static int counter = 0;
  std::string base = absl::StrCat(dir, "/run", ++counter, "_", getpid());
  RunResult r;
  Child child;
  if (!child.Start(argv, base + ".out", base + ".err", env).ok()) return r;
  std::optional<int> code = child.Wait(timeout);
  if (!code) {
    child.Signal(SIGKILL);
    child.Wait(absl::Seconds(10));
  }
  r.exit_code = code.value_or(-1);
  r.out = ReadFileOrEmpty(base + ".out");
  r.err = ReadFileOrEmpty(base + ".err");
  return r;
}

CollectorProcess::CollectorProcess(Options options) : options_(std::move(options)) {
  if (options_.db.empty()) options_.db = options_.dir + "/collector.db";
  WriteFileOrDie(tokens_file(),
                 absl::StrCat("# test tokens\n", kAgentToken, " agent importer\n", kAnalystToken,
                              " analyst alice\n", kAdminToken, " admin root\n"));
}

CollectorProcess::~CollectorProcess() { Kill(); }

absl::Status CollectorProcess::Start() { return StartWith(options_.listen); }

absl::Status CollectorProcess::Restart() {
  Kill();
  return StartWith(absl::StrCat("127.0.0.1:", port_));
}

absl::Status CollectorProcess::StartWith(const std::string& listen) {
  ++starts_;
  std::string out = absl::StrCat(options_.dir, "/collector", starts_, ".out");
  std::vector<std::string> argv = options_.wrapper;
  argv.insert(argv.end(), {
      CollectorBin(), "--listen", listen, "--store",
      options_.store.empty() ? "sqlite:" + options_.db : options_.store, "--tokens", tokens_file()});
  // Always on an ephemeral port: the default (9464) would collide between tests.
  argv.push_back("--metrics-listen");
  argv.push_back("127.0.0.1:0");
  for (const std::string& e : options_.extra) argv.push_back(e);
  if (absl::Status s = child_.Start(argv, out, options_.dir + "/collector.err"); !s.ok()) return s;
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  // Restarting on the same port may race the old socket's teardown: retry a few times.
  while (absl::Now() < deadline) {
    std::string text = ReadFileOrEmpty(out);
    bool listening = false, metrics = false;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::ConsumePrefix(&line, "listening on ")) {
        address_ = std::string(line);
        std::string port(line.substr(line.rfind(':') + 1));
        if (!absl::SimpleAtoi(port, &port_)) return absl::InternalError("bad port: " + text);
        listening = true;
      } else if (absl::ConsumePrefix(&line, "metrics on ")) {
        metrics_address_ = std::string(line);
        metrics = true;
      }
    }
    if (listening && metrics) return absl::OkStatus();
    if (!child_.running()) {
      return absl::InternalError(absl::StrCat("opmap-collector exited early; stderr:\n", Log()));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return absl::DeadlineExceededError("opmap-collector did not print 'listening on'; stderr:\n" +
                                     Log());
}

void CollectorProcess::Kill() {
  child_.Signal(SIGKILL);
  child_.Wait(absl::Seconds(10));
}

int CollectorProcess::Stop() {
  child_.Signal(SIGTERM);
  std::optional<int> code = child_.Wait(absl::Seconds(20));
  if (!code) {
    Kill();
    return -1;
  }
  return *code;
}

std::string CollectorProcess::Log() const { return ReadFileOrEmpty(options_.dir + "/collector.err"); }

int64_t CollectorProcess::Metric(const std::string& name) const {
  return static_cast<int64_t>(MetricValue(name));
}

double CollectorProcess::MetricValue(const std::string& name) const {
  if (metrics_address_.empty()) return -1;
  std::string body = HttpGet(metrics_address_, "/metrics");
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (!absl::ConsumePrefix(&line, name) || !absl::ConsumePrefix(&line, " ")) continue;
    double v;
    if (absl::SimpleAtod(line, &v)) return v;
  }
  return -1;
}

double PeakRssMiB(pid_t pid) {
  for (absl::string_view line :
       absl::StrSplit(ReadFileOrEmpty(absl::StrCat("/proc/", pid, "/status")), '\n')) {
    if (absl::ConsumePrefix(&line, "VmHWM:")) {
      int64_t kb = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::StripSuffix(line, "kB")), &kb)) {
        return kb / 1024.0;
      }
    }
  }
  return -1;
}

std::string HttpGet(const std::string& address, const std::string& path) {
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) return "";
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return "";
  }
  std::string req = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", address,
                                 "\r\nConnection: close\r\n\r\n");
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return "";
  }
  std::string resp;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    resp.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  size_t body = resp.find("\r\n\r\n");
  return body == std::string::npos ? "" : resp.substr(body + 4);
}

}  // namespace opmap::testing
