#include "tests/unit/store/store_test_util.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <random>

#include "gtest/gtest.h"

namespace opmap::collector::testing {

TempDir::TempDir() {
  std::string pattern = ::testing::TempDir() + "opmap_store_XXXXXX";
  char* made = mkdtemp(pattern.data());
  if (made == nullptr) ADD_FAILURE() << "mkdtemp " << pattern << " failed";
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

opmap::v1::Batch MakeBatch(const BatchSpec& spec) {
  opmap::v1::Batch b;
  b.set_agent_id(spec.agent);
  b.set_session_id(spec.session);
  b.set_seq(spec.seq);
  opmap::v1::Resource* r = b.mutable_resource();
  r->set_host(spec.host);
  r->set_model_name(spec.model);
  r->set_model_revision(spec.revision);
  for (const auto& [k, v] : spec.labels) (*r->mutable_labels())[k] = v;
  for (const BatchSpec::Gpu& g : spec.gpus) {
    opmap::v1::Gpu* gpu = r->add_gpus();
    gpu->set_device(g.device);
    gpu->set_uuid(g.uuid);
    gpu->set_name(g.name);
  }
  b.set_window_start_ns(spec.window_start_ns);
  b.set_window_end_ns(spec.window_end_ns);
  b.set_last_in_session(spec.last);
  return b;
}

analysis::RollupRow Row(analysis::RollupSubject subject, const std::string& layer_type,
                        const std::string& op, const std::string& kernel,
                        const std::vector<int64_t>& values_ns) {
  analysis::RollupRow row;
  row.subject = subject;
  row.layer_type = layer_type;
  row.operator_name = op;
  row.kernel_name = kernel;
  for (int64_t v : values_ns) {
    if (row.count == 0 || v < row.min_ns) row.min_ns = v;
    if (row.count == 0 || v > row.max_ns) row.max_ns = v;
    ++row.count;
    row.sum_ns += v;
    row.sketch.Add(static_cast<double>(v));
  }
  return row;
}

opmap::v1::Batch MakeKernelBatch(const std::string& agent, const std::string& session,
                                 uint64_t seq, int kernels, uint64_t seed) {
  constexpr int kNames = 60;
  BatchSpec spec;
  spec.agent = agent;
  spec.session = session;
  spec.seq = seq;
  spec.gpus = {{0, "GPU-5d1c7e2a-0000-4000-8000-000000000000", "NVIDIA H200"}};
  opmap::v1::Batch b = MakeBatch(spec);
  if (seq == 1) {
    opmap::v1::StringTableDelta* d = b.mutable_strings();
    d->set_base_index(0);
    d->add_strings("");
    for (int i = 1; i <= kNames; ++i) {
      d->add_strings("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
                     "execute_segment_k_off_kernel__5x_cublas_" + std::to_string(i));
    }
  }
  std::mt19937_64 rng(seed ^ seq);
  std::lognormal_distribution<double> dur(std::log(12000.0), 1.0);
  std::uniform_int_distribution<int> name(1, kNames);
  opmap::v1::KernelColumns* k = b.mutable_kernels();
  int64_t t = 1'760'000'000'000'000'000 + static_cast<int64_t>(seq) * 1'000'000'000;
  uint32_t correlation = static_cast<uint32_t>(seq * 100'000);
  for (int i = 0; i < kernels; ++i) {
    const int64_t d = static_cast<int64_t>(dur(rng));
    k->add_start_ns(t);
    k->add_dur_ns(d);
    t += d + 1500;
    const int n = name(rng);
    k->add_name_id(n);
    k->add_device(0);
    k->add_stream(7);
    k->add_correlation(correlation += 2);
    k->add_grid_x(static_cast<uint32_t>(n * 4 + 4));
    k->add_block_x(n % 2 ? 128 : 256);
    k->add_registers_per_thread(static_cast<uint32_t>(32 + n % 5 * 24));
  }
  return b;
}

RawDb::RawDb(const std::string& path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) ADD_FAILURE() << "open " << path;
  sqlite3_busy_timeout(db_, 5000);
}
RawDb::~RawDb() { sqlite3_close(db_); }

std::string RawDb::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return "";
  std::string message = err != nullptr ? err : "error";
  sqlite3_free(err);
  return message;
}

int64_t RawDb::Int(const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t v = -1;
  if (st != nullptr && sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

std::string RawDb::Text(const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  std::string v;
  if (st != nullptr && sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* p = sqlite3_column_text(st, 0);
    if (p != nullptr) v = reinterpret_cast<const char*>(p);
  }
  sqlite3_finalize(st);
  return v;
}

}  // namespace opmap::collector::testing
