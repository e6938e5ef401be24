// Shared by the collector integration tests: running `opmap import|query|export` against
// a CollectorProcess, parsing their JSON, and the expected side computed in-process with
// the same analysis library `opmap analyze` uses.
#ifndef OPMAP_TESTS_INTEGRATION_COLLECTOR_TEST_UTIL_H_
#define OPMAP_TESTS_INTEGRATION_COLLECTOR_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/summary/trace_summary.h"
#include "tests/integration/collector_fixture.h"

namespace opmap::testing {

// The 14 traces of ../shared/traces (traces/README.md), smallest first.
std::vector<std::string> SharedTraceNames();

// What `opmap analyze` computes for one trace, plus the raw values behind each
// percentile (to check the sketch's guarantee at its own rank convention).
struct Expected {
  analysis::Trace trace;
  analysis::MappingResult mapping;
  analysis::TraceSummary summary;
  std::map<std::string, std::vector<double>> kernel_durations;     // by name, sorted
  std::map<std::string, std::vector<double>> operator_instances;  // by name, sorted
  int64_t operator_instance_count = 0;
  int64_t operator_gpu_time_ns = 0;
};
Expected Analyze(const std::string& path);

// A parsed `opmap query latency --format json` row.
struct LatencyRow {
  std::vector<std::string> key;
  int64_t count = 0;
  int64_t sum_ns = 0, min_ns = 0, max_ns = 0;
  std::vector<double> quantile_ns;  // in the order asked
};
struct LatencyResult {
  double relative_accuracy = 0;
  bool truncated = false;
  std::vector<LatencyRow> rows;
  std::vector<std::string> unavailable;
};
// Returns false (with a gtest failure) when `json` does not parse.
bool ParseLatencyJson(const std::string& json, const std::vector<std::string>& keys,
                      const std::vector<std::string>& quantile_names, LatencyResult* out);

struct DeviceRow {
  int64_t span_ns = 0, busy_ns = 0, idle_ns = 0, compute_ns = 0, non_compute_ns = 0;
  int64_t kernel_count = 0;
  bool operator<(const DeviceRow& o) const;
  bool operator==(const DeviceRow& o) const;
};
bool ParseBreakdownJson(const std::string& json, std::vector<DeviceRow>* out);

// µs printed with 3 decimals back to integer ns.
int64_t UsToNs(double us);

// `opmap ARGS... --collector ADDR` with connection args appended.
RunResult Opmap(const std::vector<std::string>& args, const std::string& dir,
                const std::vector<std::string>& env = {},
                absl::Duration timeout = absl::Seconds(180));

// The lower-rank position the sketch estimates (ddsketch.h): floor(q·(n−1)).
size_t LowerRank(double q, size_t n);

// The openssl CLI is installed (the TLS tests skip with that reason otherwise).
bool HaveOpenssl();
// A self-signed CA (ca.pem), a server certificate for 127.0.0.1/localhost (server.pem,
// server.key), a client certificate (client.pem, client.key) signed by it, and an
// unrelated CA (other-ca.pem), written into `dir` with the openssl CLI.
bool MakeCertificates(const std::string& dir, std::string* log);

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_INTEGRATION_COLLECTOR_TEST_UTIL_H_
