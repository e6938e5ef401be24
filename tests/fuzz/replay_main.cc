// The fuzz targets' inputs as an ordinary test, in the normal (gcc) build: every fuzz
// target is compiled into this one binary with its LLVMFuzzerTestOneInput renamed
// (tests/fuzz/CMakeLists.txt), and
//
//   fuzz_replay FUZZER DIR_OR_FILE...
//
// runs FUZZER's entry point once on each file (directories: each file in them, sorted),
// as libFuzzer does when given files. A finding aborts (fuzz_util.h Fail), so ctest
// reports the test as failed; the input's name is printed before it runs.
// Exit status: 0 when every input ran, 2 for usage errors or when no input was found.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define OPMAP_FUZZ_TARGET(name) \
  extern "C" int OpmapFuzz_##name(const uint8_t* data, size_t size);
#include "fuzz_targets.inc"
#undef OPMAP_FUZZ_TARGET

namespace {

struct Target {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};

constexpr Target kTargets[] = {
#define OPMAP_FUZZ_TARGET(name) {#name, &OpmapFuzz_##name},
#include "fuzz_targets.inc"
#undef OPMAP_FUZZ_TARGET
};

std::vector<std::filesystem::path> Inputs(const std::vector<std::string>& args) {
  std::vector<std::filesystem::path> out;
  for (const std::string& a : args) {
    std::error_code ec;
    if (std::filesystem::is_directory(a, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(a)) {
        // README.md and dotfiles describe a folder; they are not inputs.
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && name[0] != '.' && name != "README.md") {
          files.push_back(e.path());
        }
      }
      std::sort(files.begin(), files.end());
      out.insert(out.end(), files.begin(), files.end());
    } else if (std::filesystem::is_regular_file(a, ec)) {
      out.emplace_back(a);
    } else {
      std::fprintf(stderr, "fuzz_replay: %s: no such file or directory (skipped)\n", a.c_str());
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_replay FUZZER DIR_OR_FILE...\nfuzzers:");
    for (const Target& t : kTargets) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  const Target* target = nullptr;
  for (const Target& t : kTargets) {
    if (std::strcmp(t.name, argv[1]) == 0) target = &t;
  }
  if (target == nullptr) {
    std::fprintf(stderr, "fuzz_replay: unknown fuzzer '%s'\n", argv[1]);
    return 2;
  }
  const std::vector<std::filesystem::path> inputs =
      Inputs(std::vector<std::string>(argv + 2, argv + argc));
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz_replay: no inputs for %s\n", target->name);
    return 2;
  }
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "Running: %s (%zu bytes)\n", path.c_str(), bytes.size());
    std::fflush(stderr);
    // A copy of exactly `size` bytes, as libFuzzer passes it (reads past it are bugs).
    // Never a null pointer, also for an empty input (libFuzzer's never is).
    std::vector<uint8_t> data;
    data.reserve(bytes.size() + 1);
    data.assign(bytes.begin(), bytes.end());
    target->run(data.data(), data.size());
  }
  std::fprintf(stderr, "fuzz_replay: %s: %zu inputs ran\n", target->name, inputs.size());
  return 0;
}
