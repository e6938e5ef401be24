#include "examples/demo_infer/report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "common/text/json_writer.h"

namespace opmap::demo {
namespace {

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string JsonString(const std::string& s) {
  std::string out;
  opmap::text::AppendJsonEscaped(s, &out);
  return out;
}

struct Latency {
  bool available = false;
  double p50 = 0, p95 = 0, p99 = 0, mean = 0, min = 0, max = 0;  // ms
};

Latency Summarise(std::vector<int64_t> ns) {
  Latency l;
  if (ns.empty()) return l;
  std::sort(ns.begin(), ns.end());
  l.available = true;
  l.p50 = ExactQuantile(ns, 0.50) / 1e6;
  l.p95 = ExactQuantile(ns, 0.95) / 1e6;
  l.p99 = ExactQuantile(ns, 0.99) / 1e6;
  l.mean = std::accumulate(ns.begin(), ns.end(), 0.0) / double(ns.size()) / 1e6;
  l.min = double(ns.front()) / 1e6;
  l.max = double(ns.back()) / 1e6;
  return l;
}

// Range names in the order a reader meets them: request, forward, layers, then operators
// in forward-pass order; anything else (none today) last.
std::vector<std::pair<std::string, uint64_t>> OrderedRanges(const ReportInput& in) {
  std::vector<std::string> order = {"request", "forward"};
  for (int i = 0; i < in.config->layers; ++i) order.push_back("decoder_layer." + std::to_string(i));
  for (const OpInfo& op : in.model->ops()) order.push_back(op.name);
  std::map<std::string, uint64_t> rest = in.ranges;
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const std::string& name : order) {
    auto it = rest.find(name);
    if (it == rest.end()) continue;
    out.push_back(*it);
    rest.erase(it);
  }
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

double Throughput(const ReportInput& in) {
  const double wall_s = double(in.serve.wall_ns) / 1e9;
  return wall_s > 0 ? double(in.serve.latencies_ns.size()) / wall_s : 0;
}

double GflopsPerSecond(const ReportInput& in) {
  const double wall_s = double(in.serve.wall_ns) / 1e9;
  const double done = double(in.serve.latencies_ns.size() - in.serve.failed);
  return wall_s > 0 ? done * double(in.model->FlopsPerRequest()) / wall_s / 1e9 : 0;
}

}  // namespace

double ExactQuantile(const std::vector<int64_t>& sorted, double q) {
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - double(lo);
  return double(sorted[lo]) + (double(sorted[hi]) - double(sorted[lo])) * frac;
}

std::string TextReport(const ReportInput& in) {
  const Config& c = *in.config;
  const ServeResult& s = in.serve;
  const Latency l = Summarise(s.latencies_ns);
  std::string out;
  out += "opmap-demo-infer: " + in.device + "; " + std::to_string(c.layers) + " layers, hidden " +
         std::to_string(c.hidden) + ", " + std::to_string(c.heads) + " heads, seq " +
         std::to_string(c.seq) + ", batch " + std::to_string(c.batch) + ", vocab " +
         std::to_string(c.vocab) + "; NVTX " + in.nvtx + " (domain opmap.demo)\n";
  out += "load: " +
         (c.duration_s > 0 ? "arrivals for " + Fmt("%g", c.duration_s) + " s"
                           : std::to_string(c.requests) + " requests") +
         " at " + Fmt("%g", c.rate) + "/s offered (Poisson, seed " + std::to_string(c.seed) +
         ") from " + std::to_string(c.clients) + " clients into a queue of " +
         std::to_string(c.queue) + "; " + std::to_string(c.workers) + " workers\n";
  out += "served " + std::to_string(s.latencies_ns.size()) + " requests in " +
         Fmt("%.3f", double(s.wall_ns) / 1e9) + " s: " + Fmt("%.1f", Throughput(in)) + " req/s; " +
         std::to_string(s.queue_full_waits) + " arrivals found the queue full; " +
         std::to_string(s.failed) + " failed\n";
  if (l.available) {
    out += "latency ms (exact over all requests, arrival to completion): p50 " +
           Fmt("%.3f", l.p50) + "  p95 " + Fmt("%.3f", l.p95) + "  p99 " + Fmt("%.3f", l.p99) +
           "  mean " + Fmt("%.3f", l.mean) + "  max " + Fmt("%.3f", l.max) + "\n";
  } else {
    out += "latency: unavailable: no requests completed\n";
  }
  out += "model: " + Fmt("%.3f", double(in.model->FlopsPerRequest()) / 1e6) +
         " MFLOP per request, " + Fmt("%.2f", GflopsPerSecond(in)) +
         " GFLOP/s sustained; output checksum " + Hex(s.output_checksum) + "\n\n";

  char line[256];
  std::snprintf(line, sizeof line, "%-26s %10s %12s %14s %14s\n", "NVTX range", "count",
                "per_request", "flops/range", "bytes/range");
  out += line;
  for (const auto& [name, count] : OrderedRanges(in)) {
    const OpInfo* op = nullptr;
    for (const OpInfo& o : in.model->ops()) op = o.name == name ? &o : op;
    if (op != nullptr) {
      std::snprintf(line, sizeof line, "%-26s %10" PRIu64 " %12d %14" PRIu64 " %14" PRIu64 "\n",
                    name.c_str(), count, op->per_request, op->cost.flops, op->cost.bytes);
    } else {
      std::snprintf(line, sizeof line, "%-26s %10" PRIu64 "\n", name.c_str(), count);
    }
    out += line;
  }
  return out;
}

std::string JsonReport(const ReportInput& in) {
  const Config& c = *in.config;
  const ServeResult& s = in.serve;
  const Latency l = Summarise(s.latencies_ns);
  std::string o = "{\"tool\":\"opmap-demo-infer\"";
  o += ",\"device\":" + JsonString(in.device);
  o += ",\"nvtx\":" + JsonString(in.nvtx) + ",\"nvtx_domain\":\"opmap.demo\"";
  o += ",\"config\":{\"layers\":" + std::to_string(c.layers) +
       ",\"hidden\":" + std::to_string(c.hidden) + ",\"heads\":" + std::to_string(c.heads) +
       ",\"seq\":" + std::to_string(c.seq) + ",\"batch\":" + std::to_string(c.batch) +
       ",\"vocab\":" + std::to_string(c.vocab) + ",\"rate\":" + Fmt("%.17g", c.rate) +
       ",\"clients\":" + std::to_string(c.clients) + ",\"workers\":" + std::to_string(c.workers) +
       ",\"queue\":" + std::to_string(c.queue) +
       ",\"requests\":" + (c.duration_s > 0 ? std::string("null") : std::to_string(c.requests)) +
       ",\"duration_s\":" + (c.duration_s > 0 ? Fmt("%.17g", c.duration_s) : "null") +
       ",\"seed\":" + std::to_string(c.seed) + "}";
  o += ",\"requests\":" + std::to_string(s.latencies_ns.size());
  o += ",\"failed\":" + std::to_string(s.failed);
  o += ",\"wall_s\":" + Fmt("%.6f", double(s.wall_ns) / 1e9);
  o += ",\"throughput_rps\":" + Fmt("%.3f", Throughput(in));
  if (l.available) {
    o += ",\"latency_ms\":{\"p50\":" + Fmt("%.6f", l.p50) + ",\"p95\":" + Fmt("%.6f", l.p95) +
         ",\"p99\":" + Fmt("%.6f", l.p99) + ",\"mean\":" + Fmt("%.6f", l.mean) +
         ",\"min\":" + Fmt("%.6f", l.min) + ",\"max\":" + Fmt("%.6f", l.max) + "}";
  } else {
    o += ",\"latency_ms\":\"unavailable: no requests completed\"";
  }
  o += ",\"percentiles\":\"exact over all requests, linear interpolation between closest ranks\"";
  o += ",\"queue_full_waits\":" + std::to_string(s.queue_full_waits);
  o += ",\"flops_per_request\":" + std::to_string(in.model->FlopsPerRequest());
  const Model::Injected inj = in.model->injected();
  auto mean_ms = [](int64_t ns, int64_t n) { return n > 0 ? Fmt("%.6f", double(ns) / n / 1e6) : "null"; };
  o += ",\"injected\":{\"slow_requests\":" + std::to_string(inj.slow_requests) +
       ",\"slow_extra_ms_mean\":" + mean_ms(inj.slow_extra_ns, inj.slow_requests) +
       ",\"stalled_requests\":" + std::to_string(inj.stalled_requests) +
       ",\"stall_ms_mean\":" + mean_ms(inj.stall_ns, inj.stalled_requests) + "}";
  o += ",\"model_gflops_per_s\":" + Fmt("%.4f", GflopsPerSecond(in));
  o += ",\"output_checksum\":\"" + Hex(s.output_checksum) + "\"";
  o += ",\"ranges\":{";
  bool first = true;
  for (const auto& [name, count] : OrderedRanges(in)) {
    o += (first ? "" : ",") + JsonString(name) + ":" + std::to_string(count);
    first = false;
  }
  o += "},\"operators\":[";
  first = true;
  for (const OpInfo& op : in.model->ops()) {
    o += std::string(first ? "" : ",") + "{\"name\":" + JsonString(op.name) +
         ",\"message\":" + JsonString(op.message) +
         ",\"per_request\":" + std::to_string(op.per_request) +
         ",\"flops\":" + std::to_string(op.cost.flops) +
         ",\"bytes\":" + std::to_string(op.cost.bytes) + "}";
    first = false;
  }
  o += "]}\n";
  return o;
}

std::string WriteRequestLog(const std::string& path, std::vector<RequestTimes> times) {
  std::sort(times.begin(), times.end(),
            [](const RequestTimes& a, const RequestTimes& b) { return a.id < b.id; });
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return "cannot write '" + path + "'";
  std::fputs("# id start_before_ns start_after_ns end_before_ns end_after_ns (CLOCK_REALTIME) "
             "injected_ns\n",
             f);
  for (const RequestTimes& t : times) {
    std::fprintf(f, "%" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n",
                 t.id, t.start_before, t.start_after, t.end_before, t.end_after, t.injected_ns);
  }
  if (std::fclose(f) != 0) return "cannot write '" + path + "'";
  return "";
}

}  // namespace opmap::demo
