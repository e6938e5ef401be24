// Runs a real binary for an integration test: argv without a shell, optional extra
// environment, stdin from /dev/null, stdout and stderr captured on separate pipes, the
// exit code (128 + signal when killed) and the child's own peak RSS (from wait4).
#ifndef OPMAP_TESTS_TESTING_RUN_PROCESS_H_
#define OPMAP_TESTS_TESTING_RUN_PROCESS_H_

#include <string>
#include <utility>
#include <vector>

namespace opmap::testing {

struct ProcessResult {
  int exit_code = -1;  // -1: could not start (a test failure is recorded)
  std::string out, err;
  long max_rss_kib = 0;
};

ProcessResult RunProcess(const std::string& binary, const std::vector<std::string>& args,
                         const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_TESTING_RUN_PROCESS_H_
