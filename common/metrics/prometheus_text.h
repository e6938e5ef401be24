// Prometheus exposition text from plain counters and gauges, through prometheus-cpp's data
// model and TextSerializer (Debian's prometheus-cpp-dev, core library only). Daemons keep
// their figures in atomics on their hot paths and build the families at each scrape.
//
//   metrics::Families f;
//   f.Counter("opmap_agent_windows_total", "Capture windows closed.", windows);
//   f.Gauge("opmap_agent_spool_bytes", "Bytes in the spool.", spool, {{"agent", id}});
//   return f.Text();
#ifndef OPMAP_COMMON_METRICS_PROMETHEUS_TEXT_H_
#define OPMAP_COMMON_METRICS_PROMETHEUS_TEXT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/metric_family.h"

namespace opmap::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Families {
 public:
  // One sample each; a name given again adds a sample (other labels) to its family.
  void Counter(const std::string& name, const std::string& help, double value,
               const Labels& labels = {});
  void Gauge(const std::string& name, const std::string& help, double value,
             const Labels& labels = {});
  // `upper_bounds` ascending, `bucket_counts` per bound (not cumulative) plus one for
  // +Inf; `sum` of the observations.
  void Histogram(const std::string& name, const std::string& help,
                 const std::vector<double>& upper_bounds,
                 const std::vector<uint64_t>& bucket_counts, double sum);

  std::string Text() const;  // the text format, version 0.0.4

 private:
  prometheus::ClientMetric& Add(const std::string& name, const std::string& help,
                                prometheus::MetricType type, const Labels& labels);
  std::vector<prometheus::MetricFamily> families_;
};

}  // namespace opmap::metrics

#endif  // OPMAP_COMMON_METRICS_PROMETHEUS_TEXT_H_
