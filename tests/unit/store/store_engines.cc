#include "tests/unit/store/store_engines.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "collector/store/clickhouse/clickhouse_store.h"

namespace opmap::collector::testing {
namespace {

// A cluster this process started (scripts/clickhouse_cluster.sh), stopped at exit.
std::string* started_dir = nullptr;

void StopCluster() {
  if (started_dir == nullptr) return;
  const std::string cmd = absl::StrFormat("bash %s/scripts/clickhouse_cluster.sh stop %s >/dev/null 2>&1",
                                          OPMAP_SOURCE_DIR, *started_dir);
  (void)std::system(cmd.c_str());
  const std::string rm = absl::StrFormat("rm -rf %s", *started_dir);
  (void)std::system(rm.c_str());
}

absl::StatusOr<std::string> UrlFromEnvFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("cannot read %s", path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CH_URL=", 0) == 0) return line.substr(7);
  }
  return absl::NotFoundError(absl::StrFormat("%s has no CH_URL line", path));
}

absl::StatusOr<std::string> StartCluster() {
  if (access("/usr/sbin/clickhouse-server", X_OK) != 0) {
    return absl::UnavailableError(
        "no ClickHouse: set OPMAP_CLICKHOUSE_ENV (scripts/clickhouse_cluster.sh start DIR) or "
        "OPMAP_CLICKHOUSE_URL, or install clickhouse-server and zookeeper "
        "(scripts/setup.sh); OPMAP_NO_CLICKHOUSE=1 skips these tests");
  }
  std::string dir = ::testing::TempDir() + "opmap_ch_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string log = dir + "/start.log";
  const std::string cmd = absl::StrFormat("bash %s/scripts/clickhouse_cluster.sh start %s/cluster >%s 2>&1",
                                          OPMAP_SOURCE_DIR, dir, log);
  started_dir = new std::string(dir + "/cluster");
  std::atexit(StopCluster);
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return absl::UnavailableError(
        absl::StrFormat("scripts/clickhouse_cluster.sh start failed:\n%s", text.str()));
  }
  return UrlFromEnvFile(*started_dir + "/cluster.env");
}

absl::StatusOr<std::string> BaseUrl() {
  static std::mutex mu;
  static absl::StatusOr<std::string>* base = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (base == nullptr) {
    if (const char* url = std::getenv("OPMAP_CLICKHOUSE_URL"); url != nullptr && *url != '\0') {
      base = new absl::StatusOr<std::string>(std::string(url));
    } else if (const char* env = std::getenv("OPMAP_CLICKHOUSE_ENV");
               env != nullptr && *env != '\0') {
      base = new absl::StatusOr<std::string>(UrlFromEnvFile(env));
    } else {
      base = new absl::StatusOr<std::string>(StartCluster());
    }
  }
  return *base;
}

}  // namespace

absl::StatusOr<std::string> ClickHouseUrl(const std::string& database) {
  absl::StatusOr<std::string> base = BaseUrl();
  if (!base.ok()) return base.status();
  static std::atomic<int> counter{0};
  const std::string db =
      !database.empty() ? database
                        : absl::StrFormat("opmap_t%d_%d_%d", getpid(), counter.fetch_add(1),
                                          absl::ToUnixMillis(absl::Now()) % 100000000);
  // clickhouse://HOSTS/DB?PARAMS: swap DB.
  const std::string& url = *base;
  const size_t hosts = url.find('/', std::string("clickhouse://").size());
  if (url.rfind("clickhouse://", 0) != 0 || hosts == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat("not a clickhouse:// URL: %s", url));
  }
  const size_t params = url.find('?', hosts);
  return url.substr(0, hosts + 1) + db + (params == std::string::npos ? "" : url.substr(params));
}

void EngineTest::SetUp() {
  if (clickhouse()) {
    absl::StatusOr<std::string> url = ClickHouseUrl();
    if (!url.ok()) {
      const char* no = std::getenv("OPMAP_NO_CLICKHOUSE");
      if (no != nullptr && std::string(no) == "1") GTEST_SKIP() << url.status();
      FAIL() << "ClickHouse engine unavailable: " << url.status();
    }
    url_ = *url;
  } else {
    url_ = "sqlite:" + SqlitePath();
  }
  store_ = Reopen();
  ASSERT_NE(store_, nullptr);
}

void EngineTest::TearDown() {
  if (clickhouse() && store_ != nullptr) {
    auto* ch = dynamic_cast<ClickHouseStore*>(store_.get());
    if (ch != nullptr) {
      const std::string on =
          ch->cluster().empty() ? "" : absl::StrFormat(" ON CLUSTER %s", ch->cluster());
      (void)ch->Execute(absl::StrFormat("DROP DATABASE IF EXISTS %s%s", ch->database(), on));
    }
  }
  store_.reset();
}

std::unique_ptr<Store> EngineTest::Reopen() {
  absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(url_);
  EXPECT_TRUE(store.ok()) << url_ << ": " << store.status();
  return store.ok() ? std::move(store).value() : nullptr;
}

}  // namespace opmap::collector::testing
