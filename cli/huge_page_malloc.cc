#include "cli/huge_page_malloc.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace opmap::cli {
namespace {

constexpr char kTunable[] = "glibc.malloc.hugetlb";

bool ThpIsMadviseOnly() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(in, mode);
  return mode.find("[madvise]") != std::string::npos;
}

}  // namespace

void ReexecWithHugePageMalloc(char** argv) {
  const char* off = getenv("OPMAP_NO_HUGE_PAGES");
  if (off != nullptr && std::string(off) == "1") return;
  const char* tunables = getenv("GLIBC_TUNABLES");
  const std::string before = tunables != nullptr ? tunables : "";
  if (before.find(kTunable) != std::string::npos) return;  // set: by us or by the user
  if (!ThpIsMadviseOnly()) return;
  const std::string after = (before.empty() ? "" : before + ":") + kTunable + "=1";
  if (setenv("GLIBC_TUNABLES", after.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: carry on as we were.
  if (tunables != nullptr) {
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
}

}  // namespace opmap::cli
