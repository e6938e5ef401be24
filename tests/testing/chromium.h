// Headless Debian Chromium for report tests: the binary's presence (a missing browser
// fails the test unless OPMAP_NO_CHROMIUM=1 says the machine knowingly lacks it), a run
// with its own profile dir and HOME under `dir`, and the plots a dumped DOM holds.
#ifndef OPMAP_TESTS_TESTING_CHROMIUM_H_
#define OPMAP_TESTS_TESTING_CHROMIUM_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tests/testing/run_process.h"

namespace opmap::testing {

inline constexpr const char* kChromium = "/usr/bin/chromium";

// Empty when Chromium is there; else "skip: ..." (OPMAP_NO_CHROMIUM=1) or "fail: ...".
std::string ChromiumMissing();

// chromium --headless ... `args` (e.g. --dump-dom URL), under `timeout 60`.
ProcessResult RunChromium(const std::string& dir, const std::vector<std::string>& args);

// The number of class="mark" elements inside the <svg id="ID"> of a dumped DOM; nullopt
// when the id is absent, not on an <svg>, or present twice.
std::optional<size_t> PlotMarks(const std::string& dom, const std::string& id);

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_TESTING_CHROMIUM_H_
