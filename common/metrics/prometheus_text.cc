#include "common/metrics/prometheus_text.h"

#include <limits>
#include <sstream>

#include "prometheus/text_serializer.h"

namespace opmap::metrics {

prometheus::ClientMetric& Families::Add(const std::string& name, const std::string& help,
                                        prometheus::MetricType type, const Labels& labels) {
  prometheus::MetricFamily* family = nullptr;
  for (prometheus::MetricFamily& f : families_) {
    if (f.name == name) family = &f;
  }
  if (family == nullptr) {
    families_.push_back(prometheus::MetricFamily{name, help, type, {}});
    family = &families_.back();
  }
  prometheus::ClientMetric& m = family->metric.emplace_back();
  for (const auto& [k, v] : labels) m.label.push_back({k, v});
  return m;
}

void Families::Counter(const std::string& name, const std::string& help, double value,
                       const Labels& labels) {
  Add(name, help, prometheus::MetricType::Counter, labels).counter.value = value;
}

void Families::Gauge(const std::string& name, const std::string& help, double value,
                     const Labels& labels) {
  Add(name, help, prometheus::MetricType::Gauge, labels).gauge.value = value;
}

void Families::Histogram(const std::string& name, const std::string& help,
                         const std::vector<double>& upper_bounds,
                         const std::vector<uint64_t>& bucket_counts, double sum) {
  prometheus::ClientMetric& m = Add(name, help, prometheus::MetricType::Histogram, {});
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bucket_counts.size(); ++i) {
    cumulative += bucket_counts[i];
    const double bound = i < upper_bounds.size() ? upper_bounds[i]
                                                 : std::numeric_limits<double>::infinity();
    m.histogram.bucket.push_back({cumulative, bound});
  }
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = sum;
}

std::string Families::Text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families_);
  return out.str();
}

}  // namespace opmap::metrics
