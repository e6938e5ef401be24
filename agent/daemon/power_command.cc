#include "agent/daemon/power_command.h"

#include <iostream>

#include "agent/power/power_probe.h"
#include "common/config/flag_config.h"

namespace opmap::agent {
namespace {

struct PowerArgs {
  PowerProbeOptions probe;
  bool json = false;
};

constexpr char kPowerUsage[] =
    "usage: opmap-agent power [--duration 1s] [--interval 100ms] [--json]\n"
    "                         [--nvml-library LIB] [--powercap-root DIR]\n\n"
    "Reads every GPU NVML sees (energy, power limit, clocks, throttle reasons, temperature,\n"
    "persistence, MIG and compute mode) and every RAPL zone at the start of a window, every\n"
    "--interval during it and at its end, and prints energy over the window. What cannot be\n"
    "measured on this host says `unavailable: <reason>`.\n\n";

absl::Status SetDuration(std::string_view v, absl::Duration* out) {
  absl::StatusOr<absl::Duration> d = config::ParseDuration(v);
  if (!d.ok()) return d.status();
  if (*d > absl::Minutes(10)) return absl::InvalidArgumentError("at most 10m");
  *out = *d;
  return absl::OkStatus();
}

const std::vector<config::ConfigKey<PowerArgs>>& PowerKeys() {
  static const auto* keys = new std::vector<config::ConfigKey<PowerArgs>>{
      {"duration", false, "D", "the window (default 1s, at most 10m)",
       [](std::string_view v, PowerArgs* a) { return SetDuration(v, &a->probe.duration); }},
      {"interval", false, "D", "reads during the window (default 100ms, at least 1ms)",
       [](std::string_view v, PowerArgs* a) { return SetDuration(v, &a->probe.interval); }},
      {"json", true, "", "one JSON object instead of text",
       [](std::string_view v, PowerArgs* a) -> absl::Status {
         absl::StatusOr<bool> b = config::ParseBool(v);
         if (!b.ok()) return b.status();
         a->json = *b;
         return absl::OkStatus();
       }},
      {"nvml-library", false, "LIB", "NVML to dlopen (default libnvidia-ml.so.1)",
       [](std::string_view v, PowerArgs* a) -> absl::Status {
         if (v.empty()) return absl::InvalidArgumentError("empty value");
         a->probe.nvml_library = std::string(v);
         return absl::OkStatus();
       }},
      {"powercap-root", false, "DIR", "the powercap tree (default /sys/class/powercap)",
       [](std::string_view v, PowerArgs* a) -> absl::Status {
         if (v.empty()) return absl::InvalidArgumentError("empty value");
         a->probe.powercap_root = std::string(v);
         return absl::OkStatus();
       }}};
  return *keys;
}

}  // namespace

int RunPowerCommand(const std::vector<std::string>& args) {
  PowerArgs parsed;
  config::CommandShape shape;
  shape.config_file = false;
  absl::StatusOr<bool> help =
      config::ParseCommandLine(args, PowerKeys(), shape, &parsed, nullptr);
  if (!help.ok()) {
    std::cerr << "opmap-agent power: " << help.status().message() << "\n"
              << "run 'opmap-agent power --help' for usage\n";
    return 2;
  }
  if (*help) {
    std::string flags;
    for (const auto& k : PowerKeys()) {
      config::internal::AppendHelpLine(k.name, k.value_hint, k.help, &flags);
    }
    config::internal::AppendHelpLine("help", "", "print this help", &flags);
    std::cout << kPowerUsage << flags;
    return 0;
  }
  const PowerProbe probe = ProbePower(parsed.probe);
  std::cout << (parsed.json ? PowerProbeJson(probe) : PowerProbeText(probe));
  return 0;
}

}  // namespace opmap::agent
