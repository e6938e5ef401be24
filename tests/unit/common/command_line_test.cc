// config::ParseCommandLine: the daemons' flag tables with operands and short names, as
// every `opmap` subcommand uses them.
#include <string>
#include <vector>

#include "common/config/flag_config.h"
#include "gtest/gtest.h"

namespace opmap::config {
namespace {

struct Flags {
  std::string out;
  std::vector<std::string> labels;
  bool quiet = false;
};

const std::vector<ConfigKey<Flags>>& Keys() {
  static const std::vector<ConfigKey<Flags>> keys = {
      {"out", false, "FILE", "where", StringSetter(&Flags::out)},
      {"label", false, "K=V", "repeatable",
       [](std::string_view v, Flags* f) {
         if (v.find('=') == std::string_view::npos) {
           return absl::InvalidArgumentError("needs KEY=VALUE");
         }
         f->labels.emplace_back(v);
         return absl::OkStatus();
       }},
      {"quiet", true, "", "no summary",
       [](std::string_view, Flags* f) {
         f->quiet = true;
         return absl::OkStatus();
       }},
  };
  return keys;
}

const CommandShape kShape{.config_file = false, .operands = true,
                          .short_names = {{'q', "quiet"}, {'o', "out"}}};

absl::StatusOr<bool> Parse(std::vector<std::string> args, Flags* f,
                           std::vector<std::string>* operands) {
  return ParseCommandLine(args, Keys(), kShape, f, operands);
}

TEST(CommandLine, OperandsFlagsShortNamesAndRepeats) {
  Flags f;
  std::vector<std::string> operands;
  absl::StatusOr<bool> help = Parse({"a.json", "--label", "k=v", "-q", "b.json", "--label=x=y",
                                     "-o", "out.txt", "-"},
                                    &f, &operands);
  ASSERT_TRUE(help.ok()) << help.status();
  EXPECT_FALSE(*help);
  EXPECT_EQ(operands, (std::vector<std::string>{"a.json", "b.json", "-"}));
  EXPECT_EQ(f.labels, (std::vector<std::string>{"k=v", "x=y"}));
  EXPECT_TRUE(f.quiet);
  EXPECT_EQ(f.out, "out.txt");
}

TEST(CommandLine, ErrorsNameTheFlag) {
  auto error = [](std::vector<std::string> args) {
    Flags f;
    std::vector<std::string> operands;
    absl::StatusOr<bool> r = Parse(std::move(args), &f, &operands);
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  EXPECT_EQ(error({"--bogus"}), "unknown flag --bogus (see --help)");
  EXPECT_EQ(error({"-x"}), "unknown flag -x (see --help)");
  EXPECT_EQ(error({"--out"}), "--out needs a value");
  EXPECT_EQ(error({"--out="}), "--out: empty value");
  EXPECT_EQ(error({"--label", "novalue"}), "--label: needs KEY=VALUE");
  // No config files on a command line whose shape has none: --config is just unknown.
  EXPECT_EQ(error({"--config", "f"}), "unknown flag --config (see --help)");
}

TEST(CommandLine, HelpWinsAndOperandsAreRefusedWhenTheShapeHasNone) {
  Flags f;
  std::vector<std::string> operands;
  absl::StatusOr<bool> help = Parse({"--bogus-after-help-is-not-read", "-h"}, &f, &operands);
  EXPECT_FALSE(help.ok());  // flags are read in order: the unknown one comes first
  help = Parse({"-h", "--bogus"}, &f, &operands);
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(*help);
  absl::StatusOr<bool> r = ParseCommandLine(std::vector<std::string>{"stray"}, Keys(),
                                            CommandShape{.config_file = false, .operands = false, .short_names = {}},
                                            &f, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "unexpected argument 'stray'");
}

}  // namespace
}  // namespace opmap::config
