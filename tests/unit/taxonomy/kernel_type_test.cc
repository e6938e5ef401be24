// Kernel type: HTA's get_kernel_type() rule on hand-picked names, then agreement with
// HolisticTraceAnalysis 0.6.1's own labels for every kernel in shared/reference/hta.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/taxonomy/layer_taxonomy.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

TEST(ClassifyKernelTypeTest, HtaRule) {
  using K = KernelType;
  const std::vector<std::pair<const char*, K>> kernels = {
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
       K::kCommunication},
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", K::kCommunication},
      {"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", K::kCommunication},
      {"Memcpy DtoD (Device -> Device)", K::kMemory},
      {"Memcpy HtoD (Pinned -> Device)", K::kMemory},
      {"Memset (Device)", K::kMemory},
      {"dma_copy", K::kMemory},
      {"ampere_sgemm_32x128_nt", K::kComputation},
      {"triton_poi_fused_add_cos_sin_0", K::kComputation},
      // HTA: re.match(r"^nccl.*Kernel") is anchored and case-sensitive.
      {"nccl_something", K::kComputation},
      {"NCCLKernel_AllReduce", K::kComputation},
      {"void multimem_all_reduce_kernel<c10::BFloat16, 16>", K::kComputation},
      {"rccl_main_kernel(ncclDevComm*, unsigned long, ncclWork*)", K::kComputation},
      {"nccl\nKernel", K::kComputation},  // `.` stops at a newline
      {"memcpy32_post", K::kComputation},
      {"void at::native::direct_copy_kernel_cuda", K::kComputation},
      {"", K::kComputation},
  };
  for (const auto& [name, type] : kernels) {
    EXPECT_EQ(KernelTypeName(ClassifyKernelType(name, false)), KernelTypeName(type)) << name;
  }
  // A memcpy/memset activity is memory whatever it is called.
  EXPECT_EQ(ClassifyKernelType("", true), K::kMemory);
  EXPECT_EQ(ClassifyKernelType("ncclDevKernel_X", true), K::kMemory);
  EXPECT_EQ(KernelTypeName(K::kComputation), "computation");
  EXPECT_EQ(KernelTypeName(K::kCommunication), "communication");
  EXPECT_EQ(KernelTypeName(K::kMemory), "memory");
}

// Splits one CSV record (RFC 4180 quoting; HTA's kernel names hold commas and quotes).
std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::string HtaLabel(KernelType type) {
  switch (type) {
    case KernelType::kCommunication:
      return "COMMUNICATION";
    case KernelType::kMemory:
      return "MEMORY";
    case KernelType::kComputation:
      break;
  }
  return "COMPUTATION";
}

// shared/reference/hta/<job>/kernel_breakdown_all_kernels.csv: one row per kernel name
// with HTA's kernel_type. Kernel names have no newlines, so one line is one record.
TEST(ClassifyKernelTypeTest, AgreesWithHtaReferenceOutput) {
  const std::filesystem::path root = std::filesystem::path(OPMAP_SHARED_DIR) / "reference" / "hta";
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    GTEST_SKIP() << "no HTA reference outputs at " << root << " (shared/ absent)";
  }
  int files = 0, rows = 0;
  std::vector<std::string> labels_seen;
  for (const auto& job : std::filesystem::directory_iterator(root, ec)) {
    std::ifstream in(job.path() / "kernel_breakdown_all_kernels.csv");
    if (!in) continue;
    ++files;
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    const std::vector<std::string> header = SplitCsvLine(line);
    size_t name_col = header.size(), type_col = header.size();
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == "name") name_col = i;
      if (header[i] == "kernel_type") type_col = i;
    }
    ASSERT_LT(name_col, header.size()) << job.path();
    ASSERT_LT(type_col, header.size()) << job.path();
    while (std::getline(in, line)) {
      const std::vector<std::string> f = SplitCsvLine(line);
      ASSERT_EQ(f.size(), header.size()) << job.path() << ": " << line;
      ++rows;
      EXPECT_EQ(HtaLabel(ClassifyKernelType(f[name_col], false)), f[type_col])
          << job.path().filename() << ": " << f[name_col];
      labels_seen.push_back(f[type_col]);
    }
  }
  ASSERT_GT(files, 0) << "no kernel_breakdown_all_kernels.csv under " << root;
  for (const char* label : {"COMMUNICATION", "MEMORY", "COMPUTATION"}) {
    EXPECT_NE(std::find(labels_seen.begin(), labels_seen.end(), label), labels_seen.end()) << label;
  }
  std::cout << "HTA reference: " << rows << " kernel rows in " << files
            << " jobs agree with ClassifyKernelType\n";
}

}  // namespace
}  // namespace opmap::analysis
