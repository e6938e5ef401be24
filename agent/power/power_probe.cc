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
  }
  std::vector<std::vector<GpuState>> reads(gpus != nullptr ? gpus->gpu_count() : 0);
  auto read_gpus = [&] {
    const int64_t now = MonotonicNs();
    for (size_t i = 0; i < reads.size(); ++i) reads[i].push_back(gpus->Read(i, now));
  };
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(options.powercap_root);
  const int64_t start = MonotonicNs();
  read_gpus();
  absl::StatusOr<std::vector<uint64_t>> first =
      rapl.ok() ? rapl->ReadEnergyUj() : absl::StatusOr<std::vector<uint64_t>>(rapl.status());
  const int64_t end = start + absl::ToInt64Nanoseconds(options.duration);
  const int64_t step = std::max<int64_t>(absl::ToInt64Nanoseconds(options.interval), 1000000);
  for (int64_t next = start + step; next < end; next += step) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(next - MonotonicNs()));
    read_gpus();
  }
  std::this_thread::sleep_for(std::chrono::nanoseconds(end - MonotonicNs()));
  read_gpus();
  absl::StatusOr<std::vector<uint64_t>> last = first.ok() ? rapl->ReadEnergyUj() : first;
  const int64_t covered = MonotonicNs() - start;  // >= duration > 0

  for (std::vector<GpuState>& r : reads) {
    absl::StatusOr<WindowEnergy> energy = EnergyOverWindow(r);
    probe.gpus.push_back({std::move(r.back()), std::move(energy)});
  }
  if (!last.ok()) {
    probe.cpu_unavailable = std::string(last.status().message());
  } else {
    for (size_t z = 0; z < rapl->zones().size(); ++z) {
      const RaplZone& zone = rapl->zones()[z];
      probe.zones.push_back(
          {zone, RaplDeltaUj((*first)[z], (*last)[z], zone.max_energy_range_uj) / 1e6, covered});
    }
  }
  return probe;
}

std::string PowerProbeText(const PowerProbe& probe) {
  std::string out = absl::StrFormat("window: %.3f s\n", absl::ToDoubleSeconds(probe.duration));
  if (!probe.gpu_unavailable.empty()) {
    absl::StrAppend(&out, "gpu: unavailable: ", probe.gpu_unavailable, "\n");
  }
  for (const GpuProbe& gpu : probe.gpus) {
    const GpuState& last = gpu.last;
    absl::StrAppend(&out, "gpu ", last.index, " ", last.name, ": ");
    if (gpu.energy.ok()) {
      absl::StrAppendFormat(&out, "energy %.3f J (%s, %d reads), %.1f W average\n",
                            gpu.energy->joules, gpu.energy->method, gpu.energy->reads,
                            gpu.energy->average_watts());
    } else {
      absl::StrAppend(&out, "energy unavailable: ", gpu.energy.status().message(), "\n");
    }
    auto mhz = [](uint32_t v) { return absl::StrCat(v, " MHz"); };
    absl::StrAppend(
        &out, "  ",
        Describe("power limit", last.power_limit_mw,
                 [](uint32_t mw) { return absl::StrFormat("%.1f W (enforced)", mw / 1e3); }),
        "; ", Describe("persistence", last.persistence, OnOff), "; ",
        Describe("MIG", last.mig, OnOff), "; ",
        Describe("compute mode", last.compute_mode, ComputeModeName), "\n");
    absl::StrAppend(
        &out, "  ", Describe("SM clock", last.sm_clock_mhz, mhz), "; ",
        Describe("memory clock", last.mem_clock_mhz, mhz), "; ",
        Describe("throttle", last.throttle_reasons, ThrottleReasonNames), "; ",
        Describe("temperature", last.temperature_c, [](uint32_t v) { return absl::StrCat(v, " C"); }),
        "\n");
  }
  if (!probe.cpu_unavailable.empty()) {
    absl::StrAppend(&out, "cpu: unavailable: ", probe.cpu_unavailable, "\n");
  }
  for (const ZoneEnergy& z : probe.zones) {
    absl::StrAppendFormat(&out, "cpu %s (%s): energy %.3f J, %.1f W average\n", z.zone.name,
                          z.zone.id, z.joules, z.average_watts());
  }
  return out;
}

std::string PowerProbeJson(const PowerProbe& probe) {
  text::JsonWriter json;
  json.BeginObject().Field("window_s", absl::ToDoubleSeconds(probe.duration));
  json.Key("gpus").BeginArray();
  for (const GpuProbe& gpu : probe.gpus) {
    const GpuState& last = gpu.last;
    json.BeginObject().Field("index", static_cast<int64_t>(last.index)).Field("name", last.name);
    if (gpu.energy.ok()) {
      json.Field("energy_j", gpu.energy->joules).Field("energy_method", gpu.energy->method);
      json.Field("average_w", gpu.energy->average_watts()).Field("reads", gpu.energy->reads);
    } else {
      json.Key("energy_j").Null().Field("energy_j_unavailable",
                                        std::string(gpu.energy.status().message()));
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
  for (const ZoneEnergy& z : probe.zones) {
    json.BeginObject().Field("id", z.zone.id).Field("name", z.zone.name);
    json.Field("energy_j", z.joules, 6).Field("covered_s", z.covered_ns / 1e9, 6);
    json.Field("average_w", z.average_watts()).EndObject();
  }
  json.EndArray();
  if (!probe.cpu_unavailable.empty()) json.Field("cpu_unavailable", probe.cpu_unavailable);
  json.EndObject();
  return json.Take() + "\n";
}

}  // namespace opmap::agent
