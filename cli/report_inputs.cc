#include "cli/report_inputs.h"

#include "absl/strings/str_cat.h"
#include "cli/read_file.h"

namespace opmap::cli {
namespace {

template <typename T>
absl::StatusOr<T> Load(const char* flag, const std::string& path,
                       absl::StatusOr<T> (*parse)(std::string_view)) {
  absl::StatusOr<std::string> text = ReadFileBytes(path);
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
  return absl::InvalidArgumentError(
      absl::StrCat("--gpu: no built-in envelope for '", gpu, "' (A100, H100, H200, B200)"));
}

}  // namespace opmap::cli
