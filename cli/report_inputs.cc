#include "cli/report_inputs.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/io/read_file.h"

namespace opmap::cli {
namespace {

template <typename T>
absl::StatusOr<T> Load(const char* flag, const std::string& path,
                       absl::StatusOr<T> (*parse)(std::string_view)) {
  absl::StatusOr<std::string> text = io::ReadFileBytes(path);
  if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat(flag, " ", text.status().message()));
  absl::StatusOr<T> parsed = parse(*text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": ", parsed.status().message()));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<analysis::WorkloadProfile> LoadProfile(const std::string& path) {
  return Load<analysis::WorkloadProfile>("--profile", path, &analysis::ParseWorkloadProfileText);
}

absl::StatusOr<analysis::HardwareEnvelope> LoadEnvelope(const std::string& path) {
  return Load<analysis::HardwareEnvelope>("--envelope", path, &analysis::ParseEnvelopeText);
}

absl::StatusOr<analysis::HardwareEnvelope> BuiltinEnvelope(const std::string& gpu) {
  for (const analysis::HardwareEnvelope& e : analysis::BuiltinEnvelopes()) {
    // "H100" names the table's H100 row.
    if (e.name.rfind(gpu + " ", 0) == 0) return e;
  }
  if (auto e = analysis::EnvelopeForGpuName(gpu)) return *e;
  // The short names --gpu takes: each table name's first word, once.
  std::vector<std::string> names;
  for (const analysis::HardwareEnvelope& e : analysis::BuiltinEnvelopes()) {
    std::string first = e.name.substr(0, e.name.find(' '));
    if (std::find(names.begin(), names.end(), first) == names.end()) names.push_back(first);
  }
  return absl::InvalidArgumentError(absl::StrCat("--gpu: ", analysis::NoEnvelopeMessage(gpu),
                                                 " (built-in: ", absl::StrJoin(names, ", "), ")"));
}

}  // namespace opmap::cli
