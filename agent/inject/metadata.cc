#include "agent/inject/metadata.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "abi/control_messages.h"
#include "abi/ring_protocol.h"

#ifndef OPMAP_LIBRARY_VERSION
#define OPMAP_LIBRARY_VERSION "unknown"
#endif

namespace opmap::inject {
namespace {

void Add(std::string* out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  out->append(key);
  out->push_back('=');
  for (char c : value) out->push_back(c == '\n' || c == '\r' || c == '\0' ? ' ' : c);
  out->push_back('\n');
}

std::string Cmdline() {
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return {};
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

// Calls `int fn(int*)` from a library that is already loaded (RTLD_NOLOAD), e.g.
// cuDriverGetVersion. Empty when it is not loaded or the call fails.
std::string VersionFrom(const char* library, const char* function) {
  void* h = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return {};
  using Fn = int (*)(int*);
  auto fn = reinterpret_cast<Fn>(dlsym(h, function));
  int v = 0;
  const bool ok = fn != nullptr && fn(&v) == 0;
  dlclose(h);
  return ok ? std::to_string(v) : std::string();
}

// Whether `library` is already loaded, without loading it or calling into it.
bool Mapped(const char* library) {
  void* h = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return false;
  dlclose(h);
  return true;
}

}  // namespace

std::string BuildMetadata(const InjectConfig& config, uint32_t loaded_by) {
  std::string m;
  Add(&m, "pid", std::to_string(getpid()));
  Add(&m, "cmdline", Cmdline());
  Add(&m, "model", config.model);
  Add(&m, "model_revision", config.model_revision);
  Add(&m, "precision", config.precision);
  Add(&m, "labels", config.labels);
  std::string how;
  if (loaded_by & kLoadedByPreload) how += "preload,";
  if (loaded_by & kLoadedByNvtx) how += "nvtx,";
  if (loaded_by & kLoadedByCuda) how += "cuda,";
  if (!how.empty()) how.pop_back();
  Add(&m, "injection", how);
  // Which GPUs the process may use, so the agent attributes GPU power to its windows;
  // "none" when set but empty (CUDA then sees no GPU), absent when unset (all GPUs).
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    Add(&m, "cuda_visible_devices", *visible != 0 ? visible : "none");
  }
  Add(&m, "inject_version", std::to_string(ring::kVersion));
  Add(&m, "opmap_version", OPMAP_LIBRARY_VERSION);
  Add(&m, "driver", VersionFrom("libcuda.so.1", "cuDriverGetVersion"));
  Add(&m, "cuda_runtime", VersionFrom("libcudart.so.13", "cudaRuntimeGetVersion"));
  if (m.find("cuda_runtime=") == std::string::npos) {
    Add(&m, "cuda_runtime", VersionFrom("libcudart.so.12", "cudaRuntimeGetVersion"));
  }
  // CUPTI by the soname mapped, never by calling into it: cuptiGetVersion from this
  // thread, in a process whose CUPTI has no driver under it (torch's CUDA 13.2 wheel on a
  // CPU host), recursed until the stack overflowed and killed the workload.
  Add(&m, "cupti", Mapped("libcupti.so.13") ? "13" : "");
  if (m.size() > ring::kMaxControlBody - sizeof(ring::HelloBody)) {
    m.resize(ring::kMaxControlBody - sizeof(ring::HelloBody));
    const size_t last = m.rfind('\n');
    m.resize(last == std::string::npos ? 0 : last + 1);
  }
  return m;
}

}  // namespace opmap::inject
