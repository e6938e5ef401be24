// The ClickHouse test cluster (scripts/clickhouse_cluster.sh) seen from a test: ZooKeeper
// plus `opmap` = shard1 {replica1, replica2}, shard2 {replica1} on 127.0.0.1.
//
// AcquireClickHouseCluster() uses the cluster named by OPMAP_CLICKHOUSE_ENV (the
// cluster.env that `scripts/clickhouse_cluster.sh start DIR` wrote; scripts/test.sh starts
// one for the whole run) or, when that is unset or `fresh` is asked, starts one in a temp
// dir and stops it at destruction. Tests that SIGKILL replicas ask for a fresh one so they
// never disturb suites running in parallel against the shared cluster.
//
// When ClickHouse can't be started, the test must FAIL with the reason; only
// OPMAP_NO_CLICKHOUSE=1 turns that into a skip (machines that knowingly lack it). Use
// OPMAP_REQUIRE_CLICKHOUSE(cluster_or_status) in SetUp.
#ifndef OPMAP_TESTS_INTEGRATION_CLICKHOUSE_CLUSTER_FIXTURE_H_
#define OPMAP_TESTS_INTEGRATION_CLICKHOUSE_CLUSTER_FIXTURE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/clickhouse_client/http_client.h"

namespace opmap::testing {

class ClickHouseCluster {
 public:
  ~ClickHouseCluster();  // stops the cluster when this object started it
  ClickHouseCluster(const ClickHouseCluster&) = delete;
  ClickHouseCluster& operator=(const ClickHouseCluster&) = delete;

  // "shard1-replica1", "shard1-replica2", "shard2-replica1".
  const std::vector<std::string>& names() const { return names_; }
  uint16_t HttpPort(const std::string& name) const;
  const std::string& cluster_name() const { return cluster_; }
  const std::string& dir() const { return dir_; }
  bool owned() const { return owned_; }
  int64_t start_ms() const { return start_ms_; }  // as measured by the script; -1 if unknown
  const std::string& Env(const std::string& key) const;  // "" when absent

  // Client options for the named servers in that order (all when empty).
  collector::clickhouse_client::ClientOptions Options(const std::vector<std::string>& names = {}) const;
  // clickhouse://127.0.0.1:P1,...,127.0.0.1:P3/default?user=default&cluster=opmap
  std::string Url() const;

  // SIGKILL / restart one server ("zookeeper" too) through the script.
  absl::Status KillReplica(const std::string& name);
  absl::Status RestartReplica(const std::string& name);

 private:
  friend absl::StatusOr<std::unique_ptr<ClickHouseCluster>> AcquireClickHouseCluster(bool);
  ClickHouseCluster() = default;
  absl::Status Load(const std::string& env_path);

  std::string dir_;
  bool owned_ = false;
  std::string cluster_;
  int64_t start_ms_ = -1;
  std::map<std::string, std::string> env_;
  std::vector<std::string> names_;
  std::vector<uint16_t> http_ports_;
};

absl::StatusOr<std::unique_ptr<ClickHouseCluster>> AcquireClickHouseCluster(bool fresh = false);

// OPMAP_NO_CLICKHOUSE=1 is set.
bool ClickHouseOptedOut();
std::string ClusterScript();  // <repo>/scripts/clickhouse_cluster.sh

// A name unique to this process and call, for tables on a shared cluster.
std::string UniqueTableName(const std::string& prefix);

}  // namespace opmap::testing

// In a fixture's SetUp(): `status_or_ptr` is the AcquireClickHouseCluster() result.
#define OPMAP_REQUIRE_CLICKHOUSE(status_or_ptr)                                           \
  do {                                                                                    \
    if (!(status_or_ptr).ok()) {                                                          \
      if (::opmap::testing::ClickHouseOptedOut()) {                                       \
        GTEST_SKIP() << "OPMAP_NO_CLICKHOUSE=1: " << (status_or_ptr).status().message();  \
      }                                                                                   \
      FAIL() << "ClickHouse cluster unavailable: " << (status_or_ptr).status().message()  \
             << "\n(install with scripts/setup.sh, or set OPMAP_NO_CLICKHOUSE=1 to skip)"; \
    }                                                                                     \
  } while (0)

#endif  // OPMAP_TESTS_INTEGRATION_CLICKHOUSE_CLUSTER_FIXTURE_H_
