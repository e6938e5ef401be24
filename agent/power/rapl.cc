#include "agent/power/rapl.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace opmap::agent {
namespace {

// A sysfs attribute is one short line; anything longer is not ours to trust.
absl::StatusOr<std::string> ReadAttribute(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int error = errno;
    if (error == EACCES || error == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat(path, ": permission denied"));
    }
    return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(error)));
  }
  char buffer[128] = {};
  in.read(buffer, sizeof(buffer) - 1);
  std::string text(buffer, static_cast<size_t>(in.gcount()));
  return std::string(absl::StripAsciiWhitespace(text));
}

absl::StatusOr<uint64_t> ReadCounter(const std::string& path) {
  absl::StatusOr<std::string> text = ReadAttribute(path);
  if (!text.ok()) return text.status();
  uint64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value)) {
    return absl::DataLossError(absl::StrCat(path, ": not a counter: '", *text, "'"));
  }
  return value;
}

// "intel-rapl:0" or "intel-rapl:0:1": the zones and subzones, not the "intel-rapl" type
// directory nor the MMIO duplicate ("intel-rapl-mmio:0") of package 0.
bool IsZoneId(const std::string& name) {
  if (!absl::StartsWith(name, "intel-rapl:")) return false;
  const std::string rest = name.substr(strlen("intel-rapl:"));
  return !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == ':';
  });
}

}  // namespace

uint64_t RaplDeltaUj(uint64_t before, uint64_t after, uint64_t max_energy_range_uj) {
  if (after >= before) return after - before;
  return max_energy_range_uj - before + after;
}

absl::StatusOr<RaplReader> RaplReader::Open(const std::string& powercap_root) {
  DIR* dir = opendir(powercap_root.c_str());
  if (dir == nullptr) {
    return absl::UnavailableError(absl::StrCat("no RAPL zone under ", powercap_root, " (",
                                               std::strerror(errno), ")"));
  }
  std::vector<std::string> ids;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (IsZoneId(name)) ids.push_back(std::move(name));
  }
  closedir(dir);
  std::sort(ids.begin(), ids.end());
  if (ids.empty()) {
    return absl::UnavailableError(absl::StrCat("no RAPL zone under ", powercap_root));
  }
  RaplReader reader;
  reader.root_ = powercap_root;
  absl::Status first_error;
  for (const std::string& id : ids) {
    const std::string zone = absl::StrCat(powercap_root, "/", id, "/");
    absl::StatusOr<uint64_t> energy = ReadCounter(zone + "energy_uj");
    absl::StatusOr<uint64_t> range = ReadCounter(zone + "max_energy_range_uj");
    absl::StatusOr<std::string> name = ReadAttribute(zone + "name");
    if (!energy.ok() || !range.ok() || !name.ok()) {
      if (first_error.ok()) {
        first_error = !energy.ok() ? energy.status() : !range.ok() ? range.status() : name.status();
      }
      continue;
    }
    reader.zones_.push_back({id, *name, *range});
  }
  if (reader.zones_.empty()) {
    std::string reason(first_error.message());
    if (absl::IsPermissionDenied(first_error)) {
      absl::StrAppend(&reason, " (RAPL energy is readable by root only)");
    }
    return absl::UnavailableError(reason);
  }
  return reader;
}

absl::StatusOr<std::vector<uint64_t>> RaplReader::ReadEnergyUj() const {
  std::vector<uint64_t> values;
  values.reserve(zones_.size());
  for (const RaplZone& zone : zones_) {
    absl::StatusOr<uint64_t> energy = ReadCounter(absl::StrCat(root_, "/", zone.id, "/energy_uj"));
    if (!energy.ok()) return energy.status();
    values.push_back(*energy);
  }
  return values;
}

}  // namespace opmap::agent
