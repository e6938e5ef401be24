#include "agent/power/power_probe.h"

#include <time.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/power/window_energy.h"
#include "common/text/json_writer.h"

namespace opmap::agent {
namespace {

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

template <typename T, typename Format>
std::string Describe(const char* label, const Reading<T>& r, Format format) {
  if (!r.value) return absl::StrCat(label, " unavailable: ", r.unavailable);
  return absl::StrCat(label, " ", format(*r.value));
}

std::string OnOff(bool on) { return on ? "on" : "off"; }

template <typename T>
void JsonReading(text::JsonWriter& json, std::string_view key, const Reading<T>& r) {
  if (r.value) {
    if constexpr (std::is_same_v<T, bool>) {
      json.Key(key).Bool(*r.value);
    } else {
      json.Key(key).Int(static_cast<int64_t>(*r.value));
    }
  } else {
    json.Key(key).Null();
    json.Field(std::string(key) + "_unavailable", r.unavailable);
  }
}

}  // namespace

PowerProbe ProbePower(const PowerProbeOptions& options) {
  PowerProbe probe;
  probe.duration = options.duration;
  std::unique_ptr<GpuPowerReader> gpus;
  if (absl::StatusOr<NvmlApi> api = LoadNvmlApi(options.nvml_library); !api.ok()) {
    probe.gpu_unavailable = std::string(api.status().message());
  } else if (auto reader = GpuPowerReader::Open(*std::move(api)); !reader.ok()) {
    probe.gpu_unavailable = std::string(reader.status().message());
  } else {
    gpus = *std::move(reader);
    probe.gpus.resize(gpus->gpu_count());
  }
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(options.powercap_root);
  if (!rapl.ok()) probe.cpu_unavailable = std::string(rapl.status().message());
  auto read_gpus = [&] {
    if (gpus == nullptr) return;
    const int64_t now = MonotonicNs();
    for (size_t i = 0; i < gpus->gpu_count(); ++i) probe.gpus[i].push_back(gpus->Read(i, now));
  };
  const int64_t start = MonotonicNs();
  read_gpus();
  if (rapl.ok()) {
    probe.zones = rapl->zones();
    absl::StatusOr<std::vector<uint64_t>> first = rapl->ReadEnergyUj();
    if (first.ok()) probe.zone_first_uj = *first;
    else probe.cpu_unavailable = std::string(first.status().message());
  }
  const int64_t end = start + absl::ToInt64Nanoseconds(options.duration);
  const int64_t step = std::max<int64_t>(absl::ToInt64Nanoseconds(options.interval), 1000000);
  for (int64_t next = start + step; next < end; next += step) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(next - MonotonicNs()));
    read_gpus();
  }
  std::this_thread::sleep_for(std::chrono::nanoseconds(end - MonotonicNs()));
  read_gpus();
  if (rapl.ok() && probe.cpu_unavailable.empty()) {
    absl::StatusOr<std::vector<uint64_t>> last = rapl->ReadEnergyUj();
    if (last.ok()) {
      probe.zone_last_uj = *last;
      probe.zone_covered_ns = MonotonicNs() - start;
    } else {
      probe.cpu_unavailable = std::string(last.status().message());
    }
  }
  return probe;
}

std::string PowerProbeText(const PowerProbe& probe) {
  std::string out = absl::StrFormat("window: %.3f s\n", absl::ToDoubleSeconds(probe.duration));
  if (!probe.gpu_unavailable.empty()) {
    absl::StrAppend(&out, "gpu: unavailable: ", probe.gpu_unavailable, "\n");
  }
  for (const std::vector<GpuState>& reads : probe.gpus) {
    if (reads.empty()) continue;
    const GpuState& last = reads.back();
    absl::StrAppend(&out, "gpu ", last.index, " ", last.name, ": ");
    absl::StatusOr<WindowEnergy> energy = EnergyOverWindow(reads);
    if (energy.ok()) {
      absl::StrAppendFormat(&out, "energy %.3f J (%s, %d reads), %.1f W average\n",
                            energy->joules, energy->method, energy->reads,
                            energy->average_watts());
    } else {
      absl::StrAppend(&out, "energy unavailable: ", energy.status().message(), "\n");
    }
    absl::StrAppend(
        &out, "  ",
        Describe("power limit", last.power_limit_mw,
                 [](uint32_t mw) { return absl::StrFormat("%.1f W (enforced)", mw / 1e3); }),
        "; ", Describe("persistence", last.persistence, OnOff), "; ",
        Describe("MIG", last.mig, OnOff), "; ",
        Describe("compute mode", last.compute_mode, ComputeModeName), "\n");
    absl::StrAppend(
        &out, "  ",
        Describe("SM clock", last.sm_clock_mhz, [](uint32_t v) { return absl::StrCat(v, " MHz"); }),
        "; ",
        Describe("memory clock", last.mem_clock_mhz,
                 [](uint32_t v) { return absl::StrCat(v, " MHz"); }),
        "; ", Describe("throttle", last.throttle_reasons, ThrottleReasonNames), "; ",
        Describe("temperature", last.temperature_c, [](uint32_t v) { return absl::StrCat(v, " C"); }),
        "\n");
  }
  if (!probe.cpu_unavailable.empty()) {
    absl::StrAppend(&out, "cpu: unavailable: ", probe.cpu_unavailable, "\n");
  } else {
    const double seconds = probe.zone_covered_ns / 1e9;
    for (size_t z = 0; z < probe.zones.size(); ++z) {
      const double joules = RaplDeltaUj(probe.zone_first_uj[z], probe.zone_last_uj[z],
                                        probe.zones[z].max_energy_range_uj) / 1e6;
      absl::StrAppendFormat(&out, "cpu %s (%s): energy %.3f J, %.1f W average\n",
                            probe.zones[z].name, probe.zones[z].id, joules,
                            seconds > 0 ? joules / seconds : 0.0);
    }
  }
  return out;
}

std::string PowerProbeJson(const PowerProbe& probe) {
  text::JsonWriter json;
  json.BeginObject().Field("window_s", absl::ToDoubleSeconds(probe.duration));
  json.Key("gpus").BeginArray();
  for (const std::vector<GpuState>& reads : probe.gpus) {
    if (reads.empty()) continue;
    const GpuState& last = reads.back();
    json.BeginObject().Field("index", static_cast<int64_t>(last.index)).Field("name", last.name);
    absl::StatusOr<WindowEnergy> energy = EnergyOverWindow(reads);
    if (energy.ok()) {
      json.Field("energy_j", energy->joules).Field("energy_method", energy->method);
      json.Field("average_w", energy->average_watts()).Field("reads", energy->reads);
    } else {
      json.Key("energy_j").Null().Field("energy_j_unavailable",
                                        std::string(energy.status().message()));
    }
    JsonReading(json, "power_limit_mw", last.power_limit_mw);
    JsonReading(json, "sm_clock_mhz", last.sm_clock_mhz);
    JsonReading(json, "mem_clock_mhz", last.mem_clock_mhz);
    JsonReading(json, "throttle_reasons", last.throttle_reasons);
    if (last.throttle_reasons.value) {
      json.Field("throttle", ThrottleReasonNames(*last.throttle_reasons.value));
    }
    JsonReading(json, "temperature_c", last.temperature_c);
    JsonReading(json, "persistence", last.persistence);
    JsonReading(json, "mig", last.mig);
    JsonReading(json, "compute_mode", last.compute_mode);
    json.EndObject();
  }
  json.EndArray();
  if (!probe.gpu_unavailable.empty()) json.Field("gpu_unavailable", probe.gpu_unavailable);
  json.Key("cpu_zones").BeginArray();
  if (probe.cpu_unavailable.empty()) {
    for (size_t z = 0; z < probe.zones.size(); ++z) {
      const double joules = RaplDeltaUj(probe.zone_first_uj[z], probe.zone_last_uj[z],
                                        probe.zones[z].max_energy_range_uj) / 1e6;
      json.BeginObject().Field("id", probe.zones[z].id).Field("name", probe.zones[z].name);
      json.Field("energy_j", joules, 6).Field("covered_s", probe.zone_covered_ns / 1e9, 6);
      json.EndObject();
    }
  }
  json.EndArray();
  if (!probe.cpu_unavailable.empty()) json.Field("cpu_unavailable", probe.cpu_unavailable);
  json.EndObject();
  return json.Take() + "\n";
}

}  // namespace opmap::agent
