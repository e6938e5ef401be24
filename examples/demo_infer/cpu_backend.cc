// The operators on the CPU, float32, one thread per request (parallelism comes from the
// worker threads). The arithmetic is exactly what op_cost.cc counts: change one, change both.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "examples/demo_infer/backend.h"

namespace opmap::demo {
namespace {

// Cache blocking: a kBlockK x kBlockN tile of w (128 KiB) stays in L2 while the rows of a
// stream past it. Register blocking: kRows x kCols outputs stay in registers across the k
// loop, so each loaded w vector feeds kRows multiply-adds. Partial tiles take the one-row
// path.
constexpr int kBlockK = 128;
constexpr int kBlockN = 256;
constexpr int kRows = 4;
constexpr int kCols = 16;

// out[j0:j1] += arow[k0:k1] . w[k0:k1, j0:j1] for one row.
void RowPanel(const float* arow, const float* w, float* __restrict orow, int n, int k0, int k1,
              int j0, int j1) {
  for (int kk = k0; kk < k1; ++kk) {
    const float av = arow[kk];
    const float* __restrict wrow = w + int64_t(kk) * n;
    for (int j = j0; j < j1; ++j) orow[j] += av * wrow[j];
  }
}

// GCC/Clang vector extension: four floats, one SSE or NEON register on any target (the
// binary is carried between machines, so no -march=native).
typedef float Vec4 __attribute__((vector_size(16)));

Vec4 Load4(const float* p) {
  Vec4 v;
  std::memcpy(&v, p, sizeof v);  // unaligned load
  return v;
}

// The kRows x kCols tile of out at (i, j) += a[i:i+kRows, k0:k1] . w[k0:k1, j:j+kCols].
void Tile(const float* a, int lda, const float* w, float* out, int n, int i, int j, int k0,
          int k1) {
  constexpr int kVecs = kCols / 4;
  Vec4 acc[kRows][kVecs];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVecs; ++v) acc[r][v] = Load4(out + int64_t(i + r) * n + j + 4 * v);
  }
  for (int kk = k0; kk < k1; ++kk) {
    const float* wrow = w + int64_t(kk) * n + j;
    Vec4 wv[kVecs];
    for (int v = 0; v < kVecs; ++v) wv[v] = Load4(wrow + 4 * v);
    for (int r = 0; r < kRows; ++r) {
      const float av = a[int64_t(i + r) * lda + kk];
      for (int v = 0; v < kVecs; ++v) acc[r][v] += av * wv[v];
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVecs; ++v) {
      std::memcpy(out + int64_t(i + r) * n + j + 4 * v, &acc[r][v], sizeof(Vec4));
    }
  }
}

void LinearCpu(const float* a, int lda, const float* w, const float* bias, float* out, int m, int k,
               int n) {
  for (int i = 0; i < m; ++i) std::memcpy(out + int64_t(i) * n, bias, sizeof(float) * n);
  for (int j0 = 0; j0 < n; j0 += kBlockN) {
    const int j1 = std::min(n, j0 + kBlockN);
    const int j_tiles = j0 + (j1 - j0) / kCols * kCols;
    for (int k0 = 0; k0 < k; k0 += kBlockK) {
      const int k1 = std::min(k, k0 + kBlockK);
      const int i_tiles = m / kRows * kRows;
      for (int i = 0; i < i_tiles; i += kRows) {
        for (int j = j0; j < j_tiles; j += kCols) Tile(a, lda, w, out, n, i, j, k0, k1);
        for (int r = i; r < i + kRows; ++r) {
          RowPanel(a + int64_t(r) * lda, w, out + int64_t(r) * n, n, k0, k1, j_tiles, j1);
        }
      }
      for (int r = i_tiles; r < m; ++r) {
        RowPanel(a + int64_t(r) * lda, w, out + int64_t(r) * n, n, k0, k1, j0, j1);
      }
    }
  }
}

void LayerNormCpu(const float* in, const float* gamma, const float* beta, float* out, int rows,
                  int hidden) {
  constexpr float kEps = 1e-5f;
  for (int r = 0; r < rows; ++r) {
    const float* x = in + int64_t(r) * hidden;
    float* y = out + int64_t(r) * hidden;
    float sum = 0.f;
    for (int i = 0; i < hidden; ++i) sum += x[i];
    const float mean = sum / hidden;
    float sq = 0.f;
    for (int i = 0; i < hidden; ++i) {
      const float d = x[i] - mean;
      sq += d * d;
    }
    const float var = sq / hidden;
    const float rstd = 1.f / std::sqrt(var + kEps);
    for (int i = 0; i < hidden; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
  }
}

void AttentionScoresCpu(const float* qkv, float* scores, int batch, int seq, int hidden,
                        int heads) {
  const int d = hidden / heads;
  const int64_t row = 3 * int64_t(hidden);
  const float scale = 1.f / std::sqrt(float(d));  // per call, not per score: not counted
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      float* s = scores + (int64_t(b) * heads + h) * seq * seq;
      for (int i = 0; i < seq; ++i) {
        const float* q = qkv + (int64_t(b) * seq + i) * row + h * d;
        for (int j = 0; j < seq; ++j) {
          const float* kv = qkv + (int64_t(b) * seq + j) * row + hidden + h * d;
          float acc = 0.f;
          for (int e = 0; e < d; ++e) acc += q[e] * kv[e];
          // Computed, then masked: the FLOPs carry no causal discount (op_cost.h).
          s[int64_t(i) * seq + j] = j > i ? -std::numeric_limits<float>::infinity() : acc * scale;
        }
      }
    }
  }
}

void SoftmaxCpu(float* x, int64_t rows, int cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float* v = x + r * cols;
    float mx = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < cols; ++j) mx = std::max(mx, v[j]);
    float sum = 0.f;
    for (int j = 0; j < cols; ++j) {
      v[j] = std::exp(v[j] - mx);
      sum += v[j];
    }
    const float inv = 1.f / sum;
    for (int j = 0; j < cols; ++j) v[j] *= inv;
  }
}

void AttentionContextCpu(const float* probs, const float* qkv, float* ctx, int batch, int seq,
                         int hidden, int heads) {
  const int d = hidden / heads;
  const int64_t row = 3 * int64_t(hidden);
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      const float* p = probs + (int64_t(b) * heads + h) * seq * seq;
      for (int i = 0; i < seq; ++i) {
        float* __restrict out = ctx + (int64_t(b) * seq + i) * hidden + h * d;
        std::fill(out, out + d, 0.f);
        for (int j = 0; j < seq; ++j) {
          const float pij = p[int64_t(i) * seq + j];
          const float* __restrict v = qkv + (int64_t(b) * seq + j) * row + 2 * hidden + h * d;
          for (int e = 0; e < d; ++e) out[e] += pij * v[e];
        }
      }
    }
  }
}

void GeluCpu(float* x, int64_t n) {
  const float c = 0.7978845608028654f;  // sqrt(2/pi)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float inner = c * (v + 0.044715f * (v * v * v));
    x[i] = 0.5f * v * (1.f + std::tanh(inner));
  }
}

class CpuBackend final : public Backend {
 public:
  float* Alloc(size_t n) override {
    buffers_.push_back(std::make_unique<float[]>(n));
    return buffers_.back().get();
  }
  void CopyIn(float* dst, const float* host, size_t n) override {
    std::memcpy(dst, host, n * sizeof(float));
  }
  void CopyOut(float* host, const float* src, size_t n) override {
    std::memcpy(host, src, n * sizeof(float));
  }
  void Embedding(const int32_t* tokens, int batch, int seq, int hidden, const float* tok_emb,
                 const float* pos_emb, float* out) override {
    for (int64_t t = 0; t < int64_t(batch) * seq; ++t) {
      const float* e = tok_emb + int64_t(tokens[t]) * hidden;
      const float* p = pos_emb + (t % seq) * hidden;
      float* o = out + t * hidden;
      for (int i = 0; i < hidden; ++i) o[i] = e[i] + p[i];
    }
  }
  void LayerNorm(const float* in, const float* gamma, const float* beta, float* out, int rows,
                 int hidden) override {
    LayerNormCpu(in, gamma, beta, out, rows, hidden);
  }
  void Linear(const float* a, int lda, const float* w, const float* bias, float* out, int m, int k,
              int n) override {
    LinearCpu(a, lda, w, bias, out, m, k, n);
  }
  void AttentionScores(const float* qkv, float* scores, int batch, int seq, int hidden,
                       int heads) override {
    AttentionScoresCpu(qkv, scores, batch, seq, hidden, heads);
  }
  void Softmax(float* x, int64_t rows, int cols) override { SoftmaxCpu(x, rows, cols); }
  void AttentionContext(const float* probs, const float* qkv, float* ctx, int batch, int seq,
                        int hidden, int heads) override {
    AttentionContextCpu(probs, qkv, ctx, batch, seq, hidden, heads);
  }
  void Gelu(float* x, int64_t n) override { GeluCpu(x, n); }
  void ResidualAdd(float* x, const float* y, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
  }
  std::string Name() const override { return "cpu"; }
  std::string Error() const override { return ""; }

 private:
  std::vector<std::unique_ptr<float[]>> buffers_;
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace opmap::demo
