#include "agent/daemon/process_resource.h"

#include <time.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/version/version.h"

namespace opmap::agent {
namespace {

std::string ReadAll(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// CLOCK_REALTIME of boot: now(realtime) − now(boottime).
int64_t BootRealtimeNs() {
  timespec rt{}, bt{};
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_BOOTTIME, &bt);
  return (int64_t{rt.tv_sec} - bt.tv_sec) * 1'000'000'000 + (rt.tv_nsec - bt.tv_nsec);
}

// The last run of 64 hex digits in a cgroup path (docker-<id>.scope, cri-containerd-<id>).
std::string ContainerIdFrom(const std::string& cgroup) {
  std::string best;
  size_t run = 0;
  for (size_t i = 0; i <= cgroup.size(); ++i) {
    if (i < cgroup.size() && std::isxdigit(static_cast<unsigned char>(cgroup[i]))) {
      ++run;
      continue;
    }
    if (run == 64) best = cgroup.substr(i - 64, 64);
    run = 0;
  }
  return best;
}

// Resource strings must be valid UTF-8; metadata came from another process.
std::string Printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  return out;
}

}  // namespace

void AddJobLabels(const std::string& text,
                  google::protobuf::Map<std::string, std::string>* labels) {
  constexpr int kMaxLabels = 32;
  constexpr size_t kMaxKey = 63, kMaxValue = 255;
  int added = 0;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos || added == kMaxLabels) continue;
    const std::string key(absl::StripAsciiWhitespace(item.substr(0, eq)));
    const std::string value(absl::StripAsciiWhitespace(item.substr(eq + 1)));
    const bool key_ok =
        !key.empty() && key.size() <= kMaxKey &&
        std::all_of(key.begin(), key.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                 c == '-' || c == '/';
        });
    // The agent's own labels are not the process's to set.
    if (!key_ok || value.size() > kMaxValue || key == "injection" || key == "library_version") {
      continue;
    }
    (*labels)[key] = Printable(value);
    ++added;
  }
}

absl::StatusOr<ProcFacts> ReadProcFacts(pid_t pid) {
  ProcFacts f;
  bool ok = false;
  const std::string base = absl::StrFormat("/proc/%d/", pid);
  std::string stat = ReadAll(base + "stat", &ok);
  if (!ok || stat.empty()) return absl::NotFoundError(absl::StrFormat("pid %d: no such process", pid));
  // Field 2 (comm) may hold spaces and parentheses: fields restart after the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return absl::DataLossError(base + "stat: no ')'");
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) f.start_ticks = std::stoull(field);
  }
  const long hz = sysconf(_SC_CLK_TCK);
  f.start_ns = BootRealtimeNs() + static_cast<int64_t>(f.start_ticks) * (1'000'000'000 / hz);
  std::string cgroup = ReadAll(base + "cgroup", &ok);
  // cgroup v2: one line "0::/path".
  if (size_t at = cgroup.find("0::"); at != std::string::npos) {
    size_t end = cgroup.find('\n', at);
    f.cgroup = cgroup.substr(at + 3, end == std::string::npos ? std::string::npos : end - at - 3);
  }
  f.container_id = ContainerIdFrom(f.cgroup);
  std::string cmdline = ReadAll(base + "cmdline", &ok);
  for (char& c : cmdline) if (c == '\0') c = ' ';
  f.cmdline = Printable(std::string(absl::StripTrailingAsciiWhitespace(cmdline)));
  return f;
}

opmap::v1::Precision ParsePrecision(const std::string& text) {
  const std::string p = absl::AsciiStrToLower(text);
  if (p == "fp32" || p == "float32") return opmap::v1::PRECISION_FP32;
  if (p == "tf32") return opmap::v1::PRECISION_TF32;
  if (p == "fp16" || p == "float16" || p == "half") return opmap::v1::PRECISION_FP16;
  if (p == "bf16" || p == "bfloat16") return opmap::v1::PRECISION_BF16;
  if (p == "fp8") return opmap::v1::PRECISION_FP8;
  if (p == "int8") return opmap::v1::PRECISION_INT8;
  if (p == "fp4") return opmap::v1::PRECISION_FP4;
  if (p == "int4") return opmap::v1::PRECISION_INT4;
  return opmap::v1::PRECISION_UNSPECIFIED;
}

opmap::v1::Resource BuildResource(const std::string& host, pid_t pid, const ProcFacts& facts,
                                  const std::map<std::string, std::string>& metadata) {
  auto get = [&](const char* key) -> std::string {
    auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : Printable(it->second);
  };
  opmap::v1::Resource r;
  r.set_host(host);
  r.set_pid(static_cast<uint32_t>(pid));
  r.set_process_start_ns(facts.start_ns);
  r.set_container_id(facts.container_id);
  r.set_cgroup(Printable(facts.cgroup));
  r.set_model_name(get("model"));
  r.set_model_revision(get("model_revision"));
  r.set_precision(ParsePrecision(get("precision")));
  r.set_framework(get("framework"));
  r.set_framework_version(get("framework_version"));
  r.set_cuda_runtime_version(get("cuda_runtime"));
  r.set_driver_version(get("driver"));
  r.set_cupti_version(get("cupti"));
  r.set_agent_version(std::string(Version()));
  AddJobLabels(get("labels"), r.mutable_labels());
  (*r.mutable_labels())["injection"] = get("injection");
  // The library's own build (its registration's opmap_version), beside agent_version.
  if (std::string v = get("opmap_version"); !v.empty()) {
    (*r.mutable_labels())["library_version"] = v;
  }
  return r;
}

void AddPlatformLabels(opmap::v1::Resource* r) {
  std::set<std::string> names, limits;
  for (const opmap::v1::Gpu& g : r->gpus()) {
    if (!g.name().empty()) names.insert(g.name());
    if (g.power_limit_mw() > 0) limits.insert(absl::StrFormat("%.0f", g.power_limit_mw() / 1e3));
  }
  auto& labels = *r->mutable_labels();
  if (!names.empty()) labels["gpu_name"] = absl::StrJoin(names, "+");
  if (!limits.empty()) labels["power_limit_w"] = absl::StrJoin(limits, "+");
  if (!r->driver_version().empty()) labels["driver_version"] = r->driver_version();
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

}  // namespace opmap::agent
