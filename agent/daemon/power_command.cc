#include "agent/daemon/power_command.h"

#include <iostream>

#include "agent/power/power_probe.h"
#include "common/config/flag_config.h"

namespace opmap::agent {
namespace {

// The probe's options plus the output format; the setters write the base's fields.
struct PowerArgs : PowerProbeOptions {
  bool json = false;
};

constexpr char kPowerUsage[] =
    "usage: opmap-agent power [--duration 1s] [--interval 100ms] [--json]\n"
    "                         [--nvml-library LIB] [--powercap-root DIR]\n\n"
    "Reads every GPU NVML sees (energy, power limit, clocks, throttle reasons, temperature,\n"
    "persistence, MIG and compute mode) and every RAPL zone at the start of a window, every\n"
    "--interval during it and at its end, and prints energy over the window. What cannot be\n"
    "measured on this host says `unavailable: <reason>`.\n\n";

// A window or interval: the duration grammar, at most 10 minutes.
absl::StatusOr<absl::Duration> ParseProbeDuration(std::string_view v) {
  absl::StatusOr<absl::Duration> d = config::ParseDuration(v);
  if (d.ok() && *d > absl::Minutes(10)) return absl::InvalidArgumentError("at most 10m");
  return d;
}

const config::CommandShape kShape{.config_file = false, .operands = false, .short_names = {}};

const std::vector<config::ConfigKey<PowerArgs>>& PowerKeys() {
  static const auto* keys = new std::vector<config::ConfigKey<PowerArgs>>{
      {"duration", false, "D", "the window (default 1s, at most 10m)",
       config::ParsedSetter(&PowerProbeOptions::duration, ParseProbeDuration)},
      {"interval", false, "D", "reads during the window (default 100ms, at least 1ms)",
       config::ParsedSetter(&PowerProbeOptions::interval, ParseProbeDuration)},
      {"json", true, "", "one JSON object instead of text",
       config::ParsedSetter(&PowerArgs::json, config::ParseBool)},
      {"nvml-library", false, "LIB", "NVML to dlopen (default libnvidia-ml.so.1)",
       config::StringSetter(&PowerProbeOptions::nvml_library)},
      {"powercap-root", false, "DIR", "the powercap tree (default /sys/class/powercap)",
       config::StringSetter(&PowerProbeOptions::powercap_root)}};
  return *keys;
}

}  // namespace

int RunPowerCommand(const std::vector<std::string>& args) {
  PowerArgs parsed;
  absl::StatusOr<bool> help = config::ParseCommandLine(args, PowerKeys(), kShape, &parsed, nullptr);
  if (!help.ok()) {
    std::cerr << "opmap-agent power: " << help.status().message() << "\n"
              << "run 'opmap-agent power --help' for usage\n";
    return 2;
  }
  if (*help) {
    std::cout << kPowerUsage << config::FlagHelp(PowerKeys(), kShape);
    return 0;
  }
  const PowerProbe probe = ProbePower(parsed);
  std::cout << (parsed.json ? PowerProbeJson(probe) : PowerProbeText(probe));
  return 0;
}

}  // namespace opmap::agent
