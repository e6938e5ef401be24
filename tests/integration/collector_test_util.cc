#include "tests/integration/collector_test_util.h"

#include <cstdlib>

#include <simdjson.h>

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::testing {

std::vector<std::string> SharedTraceNames() {
  return {
      "hta_call_stack_backward_thread.json",
      "hta_triton_example_a100.json.gz",
      "hta_mi250_rocm.json.gz",
      "hta_alexnet_a100.json.gz",
      "tl_h100_gaunernst_bert-small-uncased__1016001.json.gz",
      "hta_sampled_rank-1.json.gz",
      "hta_sampled_rank-0.json.gz",
      "tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz",
      "tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
      "hta_nccl_data_a100_rank0.json.gz",
      "tl_b200_eager_trace.json.gz",
      "hta_ns_resolution_v100_rank0.json.gz",
      "kineto_resnet50_v100_2021.json.gz",
      "tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz",
  };
}

Expected Analyze(const std::string& path) {
  Expected e;
  absl::StatusOr<analysis::Trace> trace =
      path.ends_with(".sqlite") ? analysis::ImportNsysSqlite(ReadFileOrDie(path))
                                : analysis::ImportKinetoBytes(ReadFileOrDie(path));
  if (!trace.ok()) {
    ADD_FAILURE() << path << ": " << trace.status();
    return e;
  }
  e.trace = std::move(*trace);
  e.mapping = analysis::MapGpuEvents(e.trace);
  e.summary = analysis::Summarize(e.trace, e.mapping);
  absl::flat_hash_map<int32_t, int64_t> instance_time;
  for (size_t i = 0; i < e.trace.gpu_events.size(); ++i) {
    const analysis::GpuEvent& g = e.trace.gpu_events[i];
    e.kernel_durations[std::string(e.trace.strings.Get(g.name))].push_back(
        static_cast<double>(g.dur_ns));
    int32_t r = e.mapping.events[i].range;
    if (r >= 0) instance_time[r] += g.dur_ns;
  }
  for (const auto& [r, ns] : instance_time) {
    e.operator_instances[std::string(e.trace.strings.Get(e.trace.ranges[r].name))].push_back(
        static_cast<double>(ns));
    ++e.operator_instance_count;
    e.operator_gpu_time_ns += ns;
  }
  for (auto& [name, v] : e.kernel_durations) std::sort(v.begin(), v.end());
  for (auto& [name, v] : e.operator_instances) std::sort(v.begin(), v.end());
  return e;
}

int64_t UsToNs(double us) { return std::llround(us * 1000.0); }

size_t LowerRank(double q, size_t n) {
  return n == 0 ? 0 : static_cast<size_t>(std::floor(q * static_cast<double>(n - 1)));
}

bool ParseLatencyJson(const std::string& json, const std::vector<std::string>& keys,
                      const std::vector<std::string>& quantile_names, LatencyResult* out) {
  simdjson::dom::parser parser;
  try {
    simdjson::dom::element doc = parser.parse(json);
    out->relative_accuracy = double(doc["relative_accuracy"]);
    out->truncated = bool(doc["truncated"]);
    for (simdjson::dom::element u : simdjson::dom::array(doc["unavailable"])) {
      out->unavailable.push_back(std::string(std::string_view(u["reason"])));
    }
    for (simdjson::dom::element r : simdjson::dom::array(doc["rows"])) {
      LatencyRow row;
      for (const std::string& k : keys) {
        row.key.push_back(std::string(std::string_view(r[k])));
      }
      row.count = int64_t(r["count"]);
      row.sum_ns = UsToNs(double(r["total_us"]));
      row.min_ns = UsToNs(double(r["min_us"]));
      row.max_ns = UsToNs(double(r["max_us"]));
      for (const std::string& q : quantile_names) {
        row.quantile_ns.push_back(double(r[q + "_us"]) * 1000.0);
      }
      out->rows.push_back(std::move(row));
    }
  } catch (const simdjson::simdjson_error& e) {
    ADD_FAILURE() << "query JSON does not parse (" << e.what() << "): " << json;
    return false;
  }
  return true;
}

bool DeviceRow::operator<(const DeviceRow& o) const {
  return std::tie(span_ns, busy_ns, idle_ns, compute_ns, non_compute_ns, kernel_count) <
         std::tie(o.span_ns, o.busy_ns, o.idle_ns, o.compute_ns, o.non_compute_ns,
                  o.kernel_count);
}
bool DeviceRow::operator==(const DeviceRow& o) const { return !(*this < o) && !(o < *this); }

bool ParseBreakdownJson(const std::string& json, std::vector<DeviceRow>* out) {
  simdjson::dom::parser parser;
  try {
    simdjson::dom::element doc = parser.parse(json);
    for (simdjson::dom::element d : simdjson::dom::array(doc["devices"])) {
      DeviceRow row;
      row.span_ns = UsToNs(double(d["span_us"]));
      row.busy_ns = UsToNs(double(d["busy_us"]));
      row.idle_ns = UsToNs(double(d["idle_us"]));
      row.compute_ns = UsToNs(double(d["compute_us"]));
      row.non_compute_ns = UsToNs(double(d["non_compute_us"]));
      row.kernel_count = int64_t(d["kernel_count"]);
      out->push_back(row);
    }
  } catch (const simdjson::simdjson_error& e) {
    ADD_FAILURE() << "breakdown JSON does not parse (" << e.what() << "): " << json;
    return false;
  }
  return true;
}

RunResult Opmap(const std::vector<std::string>& args, const std::string& dir,
                const std::vector<std::string>& env, absl::Duration timeout) {
  std::vector<std::string> argv = {OpmapBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, dir, env, timeout);
}

bool HaveOpenssl() { return system("openssl version >/dev/null 2>&1") == 0; }

// A self-signed CA, a server certificate for 127.0.0.1/localhost and a client
// certificate, all signed by it, written into `dir` with the openssl CLI.
bool MakeCertificates(const std::string& dir, std::string* log) {
  const std::string d = dir + "/";
  WriteFileOrDie(d + "server.ext",
                 "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                 "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n");
  WriteFileOrDie(d + "client.ext",
                 "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                 "extendedKeyUsage=clientAuth\n");
  const std::vector<std::vector<std::string>> steps = {
      {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
       "-nodes", "-keyout", d + "ca.key", "-out", d + "ca.pem", "-days", "2", "-subj",
       "/CN=opmap test CA"},
      {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
       "-nodes", "-keyout", d + "other-ca.key", "-out", d + "other-ca.pem", "-days", "2",
       "-subj", "/CN=some other CA"},
      {"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
       "-keyout", d + "server.key", "-out", d + "server.csr", "-subj", "/CN=127.0.0.1"},
      {"openssl", "x509", "-req", "-in", d + "server.csr", "-CA", d + "ca.pem", "-CAkey",
       d + "ca.key", "-CAcreateserial", "-out", d + "server.pem", "-days", "2", "-extfile",
       d + "server.ext"},
      {"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
       "-keyout", d + "client.key", "-out", d + "client.csr", "-subj", "/CN=opmap analyst"},
      {"openssl", "x509", "-req", "-in", d + "client.csr", "-CA", d + "ca.pem", "-CAkey",
       d + "ca.key", "-CAcreateserial", "-out", d + "client.pem", "-days", "2", "-extfile",
       d + "client.ext"},
  };
  for (const auto& argv : steps) {
    std::vector<std::string> full = argv;
    full[0] = "/usr/bin/openssl";
    RunResult r = Run(full, dir);
    if (r.exit_code != 0) {
      *log = absl::StrCat(argv[1], " failed: ", r.err);
      return false;
    }
  }
  return true;
}


}  // namespace opmap::testing
