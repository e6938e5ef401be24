// Classifies every distinct kernel name of every trace in shared/traces (read in place,
// never copied into the repository) and checks the table's coverage on real names; on the
// serving replays, compares matmul time with TraceLens' GEMM time.
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

std::optional<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Inflates gzip (all members) or returns plain bytes unchanged; nullopt on corrupt input.
std::optional<std::string> MaybeGunzip(std::string bytes) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f ||
      static_cast<unsigned char>(bytes[1]) != 0x8b) {
    return bytes;
  }
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return std::nullopt;
  zs.next_in = reinterpret_cast<Bytef*>(bytes.data());
  zs.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      if (inflateReset(&zs) != Z_OK) break;  // next gzip member
    } else if (rc != Z_OK) {
      break;
    }
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

struct KernelNames {
  std::map<std::string, std::string> first_trace;  // distinct name -> first trace file
  std::vector<std::string> events;                 // one entry per kernel event
  std::vector<double> durations_us;                // the events' `dur`, same order
};

// Kernel events: cat "kernel" (2022+) or "Kernel" (2021 traces).
bool CollectKernelNames(const std::string& json, const std::string& trace, KernelNames* out) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(simdjson::padded_string(json)).get(doc) != simdjson::SUCCESS) return false;
  simdjson::dom::array events;
  if (doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS &&
      doc.get_array().get(events) != simdjson::SUCCESS) {
    return false;
  }
  for (simdjson::dom::element event : events) {
    std::string_view cat, name;
    if (event["cat"].get_string().get(cat) != simdjson::SUCCESS) continue;
    if (cat != "kernel" && cat != "Kernel") continue;
    if (event["name"].get_string().get(name) != simdjson::SUCCESS) continue;
    double dur = 0;
    if (event["dur"].get_double().get(dur) != simdjson::SUCCESS) dur = 0;
    out->first_trace.emplace(std::string(name), trace);
    out->events.emplace_back(name);
    out->durations_us.push_back(dur);
  }
  return true;
}

// Loads one trace's kernel events into `out`, naming them after `label`.
void LoadTrace(const std::filesystem::path& path, const std::string& label, KernelNames* out) {
  std::optional<std::string> bytes = ReadFile(path);
  ASSERT_TRUE(bytes.has_value()) << path;
  std::optional<std::string> json = MaybeGunzip(*std::move(bytes));
  ASSERT_TRUE(json.has_value()) << "bad gzip: " << path;
  EXPECT_TRUE(CollectKernelNames(*json, label, out)) << path;
}

// Today 119 of the 476 distinct names (25%) match no row: cuDNN's *_scudnn_* convs,
// reductions, sorts/scans, pooling, norm backward kernels, MoE routing. The bound catches
// a regression in the table without freezing it.
constexpr int kMaxOtherPercent = 30;

TEST(TaxonomyOnTracesTest, AllDistinctKernelNames) {
  const std::filesystem::path dir = std::filesystem::path(OPMAP_SHARED_DIR) / "traces";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    GTEST_SKIP() << "no traces at " << dir << " (shared/ absent)";
  }
  // Subfolders too: inference/ holds the serving traces. Their execution_details.json
  // files say which capture trace is which batch size; they are not traces.
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "execution_details.json") continue;
    if (absl::EndsWith(name, ".json") || absl::EndsWith(name, ".json.gz")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no *.json[.gz] in " << dir;

  KernelNames names;
  for (const auto& path : files) {
    LoadTrace(path, std::filesystem::relative(path, dir).string(), &names);
  }
  ASSERT_FALSE(names.first_trace.empty());

  int counts[kNumLayerTypes] = {};
  std::vector<std::string> others;
  for (const auto& [name, trace] : names.first_trace) {
    const LayerType type = ClassifyKernelName(name);
    ++counts[static_cast<int>(type)];
    const std::string lower = absl::AsciiStrToLower(name);
    if (absl::StrContains(lower, "gemm") || absl::StartsWith(lower, "cijk_")) {
      EXPECT_NE(type, LayerType::kOther)
          << "a GEMM kernel is other: " << name << " (" << trace << ")";
    }
    if (type == LayerType::kOther) others.push_back(name.substr(0, 100));
  }

  const int distinct = static_cast<int>(names.first_trace.size());
  std::cout << distinct << " distinct kernel names in " << files.size() << " traces:\n";
  for (int i = 0; i < kNumLayerTypes; ++i) {
    std::printf("  %-13s %4d\n", std::string(LayerTypeName(LayerType(i))).c_str(), counts[i]);
  }
  std::cout << "some of the names classified other:\n";
  for (size_t i = 0; i < others.size(); i += std::max<size_t>(1, others.size() / 10)) {
    std::cout << "  " << others[i] << "\n";
  }
  EXPECT_LT(counts[static_cast<int>(LayerType::kOther)] * 100, distinct * kMaxOtherPercent)
      << "more than " << kMaxOtherPercent << "% of distinct kernel names are other";
  for (LayerType t : {LayerType::kCommunication, LayerType::kMemcpy, LayerType::kAttention,
                      LayerType::kConv, LayerType::kMatmul, LayerType::kNorm, LayerType::kSoftmax,
                      LayerType::kEmbedding, LayerType::kElementwise}) {
    EXPECT_GT(counts[static_cast<int>(t)], 0) << LayerTypeName(t);
  }

  // Every kernel event through one memoizing classifier: one evaluation per distinct name.
  LayerClassifier classifier;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& name : names.events) classifier.ClassifyKernel(name);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(classifier.evaluations(), names.first_trace.size());
  std::cout << names.events.size() << " kernel events classified in " << ms << " ms ("
            << classifier.evaluations() << " rule evaluations)\n";
}

// TraceLens' GEMM kernel time (µs) in an ops_summary.csv: rows whose category is GEMM, plus
// the MoE operator that TraceLens files under other (docs/metrics.md says why opmap does not).
double TraceLensGemmUs(const std::filesystem::path& csv) {
  double gemm_us = 0;
  for (const opmap::testing::CsvRow& row : opmap::testing::ReadCsv(csv.string())) {
    const auto category = row.find("Categories");
    const auto name = row.find("name");
    const auto time = row.find("total_direct_kernel_time_sum");
    if (category == row.end() || name == row.end() || time == row.end()) continue;
    if (category->second == "['GEMM']" || name->second == "vllm::moe_forward") {
      gemm_us += opmap::testing::ToDouble(time->second);
    }
  }
  return gemm_us;
}

// In a graph replay no operator encloses a kernel, so the kernel-name table alone decides
// each layer type. On both serving replays opmap's matmul time must be the time TraceLens
// gives GEMMs (found from the capture's operators, not from names): an independent check
// that the table knows hipBLASLt's Cijk_* and triton_kernels' _matmul_ogs_* GEMMs.
TEST(TaxonomyOnTracesTest, ServingReplaysMatmulIsTraceLensGemm) {
  const std::filesystem::path shared(OPMAP_SHARED_DIR);
  const struct {
    const char* trace;
    const char* ops_summary;
  } kCases[] = {
      {"traces/inference/vllm_decode_full/graph_execution.json.gz",
       "reference/tracelens_inference/vllm_decode_full/ops_summary.csv"},
      {"traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
       "reference/tracelens_inference/sglang_decode/ops_summary.csv"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.trace);
    std::error_code ec;
    if (!std::filesystem::exists(shared / c.trace, ec) ||
        !std::filesystem::exists(shared / c.ops_summary, ec)) {
      GTEST_SKIP() << "no " << (shared / c.trace) << " or its TraceLens reference";
    }
    KernelNames kernels;
    LoadTrace(shared / c.trace, c.trace, &kernels);
    double by_type[kNumLayerTypes] = {};
    double total = 0;
    for (size_t i = 0; i < kernels.events.size(); ++i) {
      by_type[static_cast<int>(ClassifyKernelName(kernels.events[i]))] += kernels.durations_us[i];
      total += kernels.durations_us[i];
    }
    ASSERT_GT(total, 0);
    std::cout << c.trace << ": " << kernels.events.size() << " kernels, " << total << " us\n";
    for (int i = 0; i < kNumLayerTypes; ++i) {
      if (by_type[i] == 0) continue;
      std::printf("  %-13s %9.1f us %5.1f%%\n", std::string(LayerTypeName(LayerType(i))).c_str(),
                  by_type[i], 100 * by_type[i] / total);
    }
    const double gemm_us = TraceLensGemmUs(shared / c.ops_summary);
    ASSERT_GT(gemm_us, 0) << "no GEMM rows in " << (shared / c.ops_summary);
    EXPECT_NEAR(by_type[static_cast<int>(LayerType::kMatmul)], gemm_us, 1e-3 * gemm_us);
  }
}

// docs/metrics.md's kernel-name table is the definition and layer_taxonomy.cc holds a
// verbatim copy: every row's regex must be the code's. The docs are found from this file's
// path (the repository's tests/unit/taxonomy/).
TEST(TaxonomyDocsTest, KernelNameTableIsTheCodes) {
  const std::filesystem::path docs =
      std::filesystem::path(__FILE__).parent_path() / "../../../docs/metrics.md";
  std::optional<std::string> text = ReadFile(docs);
  if (!text.has_value()) GTEST_SKIP() << "no " << docs;
  // A row: "| 5 | matmul | `regex` | examples |"; row 10 (other) has no regex. Only the
  // section "Kernel type and layer type" is read: other sections may hold other tables.
  int rows = 0;
  bool in_section = false;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (absl::StartsWith(line, "## ")) in_section = line == "## Kernel type and layer type";
    if (!in_section) continue;
    const std::vector<std::string> cells = absl::StrSplit(line, " | ");
    if (cells.size() < 4 || cells[0].size() != 3 || cells[0][0] != '|') continue;
    const int row = cells[0][2] - '0';
    if (row < 1 || row > 9 || cells[2].size() < 2 || cells[2].front() != '`') continue;
    const std::string regex =
        absl::StrReplaceAll(cells[2].substr(1, cells[2].size() - 2), {{"\\|", "|"}});
    EXPECT_EQ(cells[1], LayerTypeName(static_cast<LayerType>(row - 1))) << "row " << row;
    EXPECT_EQ(regex, KernelNameTablePattern(row)) << "docs/metrics.md row " << row;
    ++rows;
  }
  EXPECT_EQ(rows, 9) << "kernel-name table rows with a regex in " << docs;
  EXPECT_EQ(KernelNameTablePattern(10), "");
}

}  // namespace
}  // namespace opmap::analysis
