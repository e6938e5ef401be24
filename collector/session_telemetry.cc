#include "collector/session_telemetry.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace opmap::collector {

void TelemetryAccumulator::Add(const opmap::v1::Batch& stored,
                               const analysis::SessionAssembler& assembler) {
  const analysis::StringTable& strings = assembler.trace().strings;
  // The assembler interned each delta string as it came, so Find gives its id.
  for (const std::string& s : stored.strings().strings()) {
    wire_to_model_.push_back(strings.Find(s));
  }

  const opmap::v1::CounterSamples& c = stored.counters();
  const uint32_t default_pid = stored.resource().pid();
  for (int i = 0; i < c.name_id_size(); ++i) {
    // Validated by the assembler: ids are below its string count, columns complete.
    const uint32_t wire = c.name_id(i);
    const analysis::StringId name =
        wire < wire_to_model_.size() ? wire_to_model_[wire] : analysis::kEmptyString;
    const uint32_t pid = c.pid_size() > i ? c.pid(i) : default_pid;
    const CounterKey key(name, static_cast<int>(c.source(i)), pid);
    auto it = counters_.find(key);
    if (it == counters_.end()) {
      if (counters_.size() >= kMaxCounters) {
        ++counters_over_limit_;
        continue;
      }
      it = counters_.emplace(key, Sums{}).first;
    }
    Sums& sums = it->second;
    ++sums.samples;
    sums.value += c.value(i);
    sums.enabled += c.time_enabled_ns(i);
    sums.running += c.time_running_ns(i);
  }

  const opmap::v1::DropCounters& d = stored.drops();
  for (const opmap::v1::DropCount& drop : d.counts()) {
    DropKey key(static_cast<int>(drop.stage()), static_cast<int>(drop.kind()), drop.reason());
    if (drops_.size() >= kMaxDrops && !drops_.contains(key)) {
      std::get<2>(key) = absl::StrFormat(
          "other (more than %d distinct drop reasons in one session)", kMaxDrops);
    }
    int64_t& total = drops_[key];
    const uint64_t room = static_cast<uint64_t>(std::numeric_limits<int64_t>::max() - total);
    total += static_cast<int64_t>(std::min<uint64_t>(drop.count(), room));  // saturates
  }
  for (const opmap::v1::Unavailable& u : d.unavailable()) AddUnavailable(u.what(), u.reason());
  for (const opmap::v1::PowerSample& row : stored.power()) AddPower(row);
}

void TelemetryAccumulator::AddUnavailable(std::string what, std::string reason) {
  std::pair<std::string, std::string> entry(std::move(what), std::move(reason));
  if (seen_unavailable_.contains(entry)) return;
  if (unavailable_.size() >= kMaxUnavailable) {
    ++unavailable_over_limit_;
    return;
  }
  seen_unavailable_.insert(entry);
  unavailable_.push_back(std::move(entry));
}

void TelemetryAccumulator::AddPower(const opmap::v1::PowerSample& row) {
  // Validated (analysis/wire/power_validate.cc): spans forward, energy with a span.
  for (const opmap::v1::Unavailable& u : row.unavailable()) {
    AddUnavailable(absl::StrCat("power ", row.device(), " ", u.what()), u.reason());
  }
  const std::pair<int, std::string> key(static_cast<int>(row.domain()), row.device());
  auto it = power_.find(key);
  if (it == power_.end()) {
    if (power_.size() >= kMaxPowerDevices) {
      ++power_over_limit_;
      return;
    }
    opmap::v1::PowerSample& kept = power_[key];
    kept = row;
    kept.clear_unavailable();
    return;
  }
  // A second row of one device in one session (an agent that split the window): the
  // energy and time add up; the mode is the later row's.
  opmap::v1::PowerSample& kept = it->second;
  const bool later = row.end_ns() >= kept.end_ns();
  opmap::v1::PowerSample merged = later ? row : kept;
  const opmap::v1::PowerSample& other = later ? kept : row;
  merged.clear_unavailable();
  merged.set_start_ns(std::min(kept.start_ns(), row.start_ns()));
  merged.set_end_ns(std::max(kept.end_ns(), row.end_ns()));
  merged.set_reads(merged.reads() + other.reads());
  if (kept.has_energy_mj() && row.has_energy_mj()) {
    // Each ≤ 100 kW over its span (validated): the sum cannot overflow.
    merged.set_energy_mj(kept.energy_mj() + row.energy_mj());
    merged.set_covered_ns(std::min(kept.covered_ns() + row.covered_ns(),
                                   merged.end_ns() - merged.start_ns()));
    // Two methods: the sum is labelled with the less exact one.
    if (kept.method() != row.method()) merged.set_method(opmap::v1::ENERGY_METHOD_INTEGRATED_POWER);
  } else if (other.has_energy_mj() && !merged.has_energy_mj()) {
    merged.set_energy_mj(other.energy_mj());
    merged.set_covered_ns(other.covered_ns());
    merged.set_method(other.method());
  }
  if (other.has_throttle_reasons()) {
    merged.set_throttle_reasons(merged.throttle_reasons() | other.throttle_reasons());
  }
  if (other.has_temperature_c()) {
    merged.set_temperature_c(std::max(merged.temperature_c(), other.temperature_c()));
  }
  kept = std::move(merged);
}

SessionTelemetry TelemetryAccumulator::Finish(const analysis::StringTable& strings) const {
  SessionTelemetry out;
  out.counters.reserve(counters_.size());
  for (const auto& [key, sums] : counters_) {
    const auto& [name, source, pid] = key;
    CounterTotal& t = out.counters.emplace_back();
    t.name = name < strings.size() ? std::string(strings.Get(name)) : std::string();
    t.source = source;
    t.pid = pid;
    t.samples = sums.samples;
    t.value = sums.value;
    t.time_enabled_ns = sums.enabled;
    t.time_running_ns = sums.running;
  }
  std::sort(out.counters.begin(), out.counters.end(),
            [](const CounterTotal& a, const CounterTotal& b) {
              return std::tie(a.name, a.source, a.pid) < std::tie(b.name, b.source, b.pid);
            });
  for (const auto& [key, count] : drops_) {
    const auto& [stage, kind, reason] = key;
    out.drops.push_back(DropTotal{stage, kind, reason, count});
  }
  std::sort(out.drops.begin(), out.drops.end(), [](const DropTotal& a, const DropTotal& b) {
    return std::tie(a.stage, a.kind, a.reason) < std::tie(b.stage, b.kind, b.reason);
  });
  for (const auto& [key, row] : power_) out.power.push_back(row);
  out.unavailable = unavailable_;
  if (power_over_limit_ > 0) {
    out.unavailable.emplace_back(
        "power", absl::StrFormat("%d rows of devices past the collector's limit of %d devices "
                                 "per session were not kept",
                                 power_over_limit_, kMaxPowerDevices));
  }
  if (counters_over_limit_ > 0) {
    out.unavailable.emplace_back(
        "counters", absl::StrFormat("%d samples of counters past the collector's limit of %d "
                                    "distinct (name, source, pid) per session were not kept",
                                    counters_over_limit_, kMaxCounters));
  }
  if (unavailable_over_limit_ > 0) {
    out.unavailable.emplace_back(
        "unavailable", absl::StrFormat("%d more distinct entries than the collector keeps per "
                                       "session (%d) were not kept",
                                       unavailable_over_limit_, kMaxUnavailable));
  }
  return out;
}

}  // namespace opmap::collector
