#include "agent/power/power_window.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/power/window_energy.h"

namespace opmap::agent {
namespace {

void Unavailable(opmap::v1::PowerSample* row, const char* what, const std::string& reason) {
  opmap::v1::Unavailable* u = row->add_unavailable();
  u->set_what(what);
  u->set_reason(reason.empty() ? "not read" : reason);
}

// Sets `set(value)` from the reading, or names the figure unavailable with its reason.
template <typename T, typename Set>
void Copy(const Reading<T>& r, const char* what, opmap::v1::PowerSample* row, Set set) {
  if (r.value) {
    set(*r.value);
  } else {
    Unavailable(row, what, r.unavailable);
  }
}

}  // namespace

ReadSpan WindowReads(std::span<const int64_t> times, int64_t start_ns, int64_t end_ns) {
  // Last read at or before start (or the first read after it), through the last at or
  // before end.
  auto after_start = std::upper_bound(times.begin(), times.end(), start_ns);
  auto first = after_start == times.begin() ? after_start : after_start - 1;
  auto last = std::upper_bound(times.begin(), times.end(), end_ns);
  if (last < first) last = first;
  return ReadSpan{static_cast<size_t>(first - times.begin()),
                  static_cast<size_t>(last - times.begin())};
}

opmap::v1::PowerSample GpuPowerRow(std::span<const GpuState> reads) {
  opmap::v1::PowerSample row;
  const GpuState& last = reads.back();
  row.set_domain(opmap::v1::POWER_DOMAIN_GPU);
  row.set_device(!last.uuid.empty() ? last.uuid : "nvml:" + std::to_string(last.index));
  row.set_name(last.name);
  row.set_index(last.index);
  row.set_start_ns(reads.front().time_ns);
  row.set_end_ns(last.time_ns);
  row.set_reads(static_cast<uint32_t>(reads.size()));
  absl::StatusOr<WindowEnergy> energy =
      EnergyOverWindow(std::vector<GpuState>(reads.begin(), reads.end()));
  if (energy.ok()) {
    row.set_energy_mj(static_cast<uint64_t>(std::llround(energy->joules * 1e3)));
    row.set_covered_ns(energy->covered_ns);
    row.set_method(energy->method == "energy_counter" ? opmap::v1::ENERGY_METHOD_COUNTER
                                                      : opmap::v1::ENERGY_METHOD_INTEGRATED_POWER);
  } else {
    Unavailable(&row, "energy_mj", std::string(energy.status().message()));
  }
  Copy(last.power_limit_mw, "power_limit_mw", &row, [&](uint32_t v) { row.set_power_limit_mw(v); });
  Copy(last.sm_clock_mhz, "sm_clock_mhz", &row, [&](uint32_t v) { row.set_sm_clock_mhz(v); });
  Copy(last.mem_clock_mhz, "memory_clock_mhz", &row,
       [&](uint32_t v) { row.set_memory_clock_mhz(v); });
  Copy(last.persistence, "persistence", &row, [&](bool v) { row.set_persistence(v); });
  Copy(last.mig, "mig", &row, [&](bool v) { row.set_mig(v); });
  Copy(last.compute_mode, "compute_mode", &row, [&](int v) { row.set_compute_mode(v); });
  // Over the span: a throttle that came and went, and the hottest moment, are what matter.
  bool any_throttle = false, any_temperature = false;
  uint64_t throttle = 0;
  uint32_t temperature = 0;
  for (const GpuState& r : reads) {
    if (r.throttle_reasons.value) {
      any_throttle = true;
      throttle |= *r.throttle_reasons.value;
    }
    if (r.temperature_c.value) {
      any_temperature = true;
      temperature = std::max(temperature, *r.temperature_c.value);
    }
  }
  if (any_throttle) {
    row.set_throttle_reasons(throttle);
  } else {
    Unavailable(&row, "throttle_reasons", last.throttle_reasons.unavailable);
  }
  if (any_temperature) {
    row.set_temperature_c(temperature);
  } else {
    Unavailable(&row, "temperature_c", last.temperature_c.unavailable);
  }
  return row;
}

opmap::v1::PowerSample ZonePowerRow(const RaplZone& zone, std::span<const ZoneRead> reads) {
  opmap::v1::PowerSample row;
  row.set_domain(zone.name.starts_with("dram") ? opmap::v1::POWER_DOMAIN_DRAM
                                               : opmap::v1::POWER_DOMAIN_CPU);
  row.set_device(zone.id);
  row.set_name(zone.name);
  row.set_reads(static_cast<uint32_t>(reads.size()));
  if (!reads.empty()) {
    row.set_start_ns(reads.front().time_ns);
    row.set_end_ns(reads.back().time_ns);
  }
  if (reads.size() < 2 || reads.back().time_ns <= reads.front().time_ns) {
    Unavailable(&row, "energy_mj",
                "energy needs two reads over time, the window has " + std::to_string(reads.size()));
    return row;
  }
  uint64_t uj = 0;
  for (size_t i = 1; i < reads.size(); ++i) {
    uj += RaplDeltaUj(reads[i - 1].energy_uj, reads[i].energy_uj, zone.max_energy_range_uj);
  }
  row.set_energy_mj((uj + 500) / 1000);
  row.set_covered_ns(reads.back().time_ns - reads.front().time_ns);
  row.set_method(opmap::v1::ENERGY_METHOD_COUNTER);
  return row;
}

std::vector<size_t> VisibleGpus(bool unset, const std::string& cuda_visible_devices,
                                std::span<const std::string> uuids) {
  std::vector<size_t> out;
  if (unset) {
    for (size_t i = 0; i < uuids.size(); ++i) out.push_back(i);
    return out;
  }
  for (absl::string_view entry : absl::StrSplit(cuda_visible_devices, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    size_t found = uuids.size();
    int ordinal = 0;
    if (absl::SimpleAtoi(entry, &ordinal)) {
      if (ordinal >= 0 && static_cast<size_t>(ordinal) < uuids.size()) found = ordinal;
    } else if (absl::StartsWith(entry, "GPU-") && entry.size() > 4) {
      for (size_t i = 0; i < uuids.size(); ++i) {
        if (absl::StartsWith(uuids[i], entry)) {
          // A prefix that two GPUs share names neither, as CUDA treats it.
          if (found != uuids.size()) {
            found = uuids.size();
            break;
          }
          found = i;
        }
      }
    }
    if (found == uuids.size()) break;  // CUDA stops at the first entry naming no GPU
    if (std::find(out.begin(), out.end(), found) == out.end()) out.push_back(found);
  }
  return out;
}

}  // namespace opmap::agent
