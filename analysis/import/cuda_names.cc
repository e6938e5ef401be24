#include "analysis/import/cuda_names.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/strings/str_format.h"

namespace opmap::analysis {
namespace {

const char* CopyKindName(int64_t kind) {
  static const char* kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                 "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind >= 0 && kind < static_cast<int64_t>(sizeof(kNames) / sizeof(kNames[0]))
             ? kNames[kind]
             : "Unknown";
}

const char* MemoryKindName(int64_t kind) {
  static const char* kNames[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                 "Array",   "Managed",  "Device Static", "Managed Static"};
  return kind >= 0 && kind < static_cast<int64_t>(sizeof(kNames) / sizeof(kNames[0]))
             ? kNames[kind]
             : "Unknown";
}

}  // namespace

std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind) {
  return absl::StrFormat("Memcpy %s (%s -> %s)", CopyKindName(copy_kind),
                         MemoryKindName(src_kind), MemoryKindName(dst_kind));
}

std::string MemsetName(int64_t memory_kind) {
  return absl::StrFormat("Memset (%s)", MemoryKindName(memory_kind));
}

std::string_view StripApiVersion(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 == name.size()) return name;
  for (char c : name.substr(v + 2)) {
    if (c < '0' || c > '9') return name;
  }
  return name.substr(0, v);
}

std::string DemangleKernelName(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  std::string mangled(name);  // __cxa_demangle needs a terminated string
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return mangled;
  }
  std::string demangled(out);
  std::free(out);
  return demangled;
}

}  // namespace opmap::analysis
