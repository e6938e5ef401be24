#include "tests/integration/clickhouse_cluster_fixture.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/testing/run_process.h"

#ifndef OPMAP_SOURCE_DIR
#error "OPMAP_SOURCE_DIR must name the repository root (tests/integration/CMakeLists.txt)"
#endif

namespace opmap::testing {
namespace {

absl::Status RunScript(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ClusterScript()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = RunProcess("/bin/bash", argv);
  if (r.exit_code == 0) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("scripts/clickhouse_cluster.sh ",
                                             absl::StrJoin(args, " "), " exited ", r.exit_code,
                                             ":\n", r.err, r.out));
}

// The script checks the binaries too; checking here first gives the one-line reason.
absl::Status CheckBinaries() {
  const char* server = std::getenv("OPMAP_CLICKHOUSE_SERVER");
  std::string ch = server != nullptr ? server : "/usr/sbin/clickhouse-server";
  if (access(ch.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(ch, " not found (Debian package clickhouse-server)"));
  }
  if (access("/usr/share/java/zookeeper.jar", R_OK) != 0) {
    return absl::FailedPreconditionError(
        "/usr/share/java/zookeeper.jar not found (Debian package zookeeper)");
  }
  return absl::OkStatus();
}

}  // namespace

bool ClickHouseOptedOut() {
  const char* v = std::getenv("OPMAP_NO_CLICKHOUSE");
  return v != nullptr && std::string_view(v) == "1";
}

std::string ClusterScript() {
  return std::string(OPMAP_SOURCE_DIR) + "/scripts/clickhouse_cluster.sh";
}

std::string UniqueTableName(const std::string& prefix) {
  static std::atomic<int> n{0};
  return absl::StrCat(prefix, "_", getpid(), "_", n++);
}

absl::StatusOr<std::unique_ptr<ClickHouseCluster>> AcquireClickHouseCluster(bool fresh) {
  std::unique_ptr<ClickHouseCluster> c(new ClickHouseCluster());
  const char* shared = std::getenv("OPMAP_CLICKHOUSE_ENV");
  if (!fresh && shared != nullptr && *shared != '\0') {
    absl::Status s = c->Load(shared);
    if (!s.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("OPMAP_CLICKHOUSE_ENV=", shared, ": ", s.message()));
    }
    return c;
  }
  if (absl::Status s = CheckBinaries(); !s.ok()) return s;
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/opmap-ch-XXXXXX");
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", templ, ": ", strerror(errno)));
  }
  c->dir_ = templ;
  c->owned_ = true;  // from here on the destructor stops and removes it
  if (absl::Status s = RunScript({"start", templ}); !s.ok()) return s;
  if (absl::Status s = c->Load(templ + "/cluster.env"); !s.ok()) return s;
  return c;
}

absl::Status ClickHouseCluster::Load(const std::string& env_path) {
  std::ifstream in(env_path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", env_path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    env_[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (dir_.empty()) dir_ = Env("CH_DIR");
  cluster_ = Env("CH_CLUSTER");
  names_ = absl::StrSplit(Env("CH_NAMES"), ',', absl::SkipEmpty());
  for (absl::string_view p : absl::StrSplit(Env("CH_HTTP_PORTS"), ',', absl::SkipEmpty())) {
    uint32_t port = 0;
    if (!absl::SimpleAtoi(p, &port) || port == 0 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(env_path, ": bad port '", p, "'"));
    }
    http_ports_.push_back(static_cast<uint16_t>(port));
  }
  if (names_.size() != 3 || http_ports_.size() != 3 || cluster_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(env_path, ": expected CH_NAMES, CH_HTTP_PORTS (3 each) and CH_CLUSTER"));
  }
  int64_t ms = -1;
  if (absl::SimpleAtoi(Env("CH_START_MS"), &ms)) start_ms_ = ms;
  return absl::OkStatus();
}

ClickHouseCluster::~ClickHouseCluster() {
  if (!owned_) return;
  absl::Status s = RunScript({"stop", dir_});
  if (!s.ok()) {
    fprintf(stderr, "clickhouse cluster stop: %s\n", std::string(s.message()).c_str());
  }
  if (std::getenv("OPMAP_KEEP_TEST_DIRS") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

const std::string& ClickHouseCluster::Env(const std::string& key) const {
  static const std::string kEmpty;
  auto it = env_.find(key);
  return it == env_.end() ? kEmpty : it->second;
}

uint16_t ClickHouseCluster::HttpPort(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return http_ports_[i];
  }
  return 0;
}

collector::clickhouse_client::ClientOptions ClickHouseCluster::Options(
    const std::vector<std::string>& names) const {
  collector::clickhouse_client::ClientOptions o;
  for (const std::string& n : names.empty() ? names_ : names) {
    o.endpoints.push_back({"127.0.0.1", HttpPort(n)});
  }
  const std::string& user = Env("CH_USER");
  if (!user.empty()) o.user = user;  // else ClientOptions' "default"
  o.password = Env("CH_PASSWORD");
  o.settings.insert_or_assign("insert_distributed_sync", std::string("1"));
  return o;
}

std::string ClickHouseCluster::Url() const { return Env("CH_URL"); }

absl::Status ClickHouseCluster::KillReplica(const std::string& name) {
  return RunScript({"kill-replica", dir_, name});
}

absl::Status ClickHouseCluster::RestartReplica(const std::string& name) {
  return RunScript({"restart-replica", dir_, name});
}

}  // namespace opmap::testing
