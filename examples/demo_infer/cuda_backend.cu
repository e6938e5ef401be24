// The demo's operators as CUDA kernels (built with -DOPMAP_DEMO_CUDA=ON). Small and plain
// on purpose: one kernel per operator, launched inside the operator's NVTX range on the
// worker's own stream, so a capture maps each kernel to its range by launch nesting. The
// arithmetic per element is the CPU path's (op_cost.h); only the order of additions in the
// reductions differs, so tokens may differ from the CPU run in rare near-ties.
//
// Kernel names are chosen to classify by METRICS.md's kernel regexes (gemm -> matmul,
// attention, softmax, layer_norm -> norm, embedding, elementwise).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "examples/demo_infer/backend.h"

namespace opmap::demo {
namespace {

constexpr int kTile = 16;  // GEMM tile edge (16x16 threads, shared-memory tiles)
constexpr int kThreads = 256;

// Block-wide reduction over blockDim.x <= 1024 threads; `op` is + or max.
template <typename Op>
__device__ float BlockReduce(float v, Op op, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + stride]);
    __syncthreads();
  }
  const float r = shared[0];
  __syncthreads();
  return r;
}

struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__global__ void embedding_kernel(const int32_t* tokens, int seq, int hidden, const float* tok_emb,
                                 const float* pos_emb, float* out) {
  const int64_t t = blockIdx.x;
  const float* e = tok_emb + int64_t(tokens[t]) * hidden;
  const float* p = pos_emb + (t % seq) * hidden;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) out[t * hidden + i] = e[i] + p[i];
}

__global__ void layer_norm_kernel(const float* in, const float* gamma, const float* beta,
                                  float* out, int hidden) {
  __shared__ float shared[kThreads];
  const float* x = in + int64_t(blockIdx.x) * hidden;
  float* y = out + int64_t(blockIdx.x) * hidden;
  float s = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) s += x[i];
  const float mean = BlockReduce(s, Add(), shared) / hidden;
  float sq = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    const float d = x[i] - mean;
    sq += d * d;
  }
  const float var = BlockReduce(sq, Add(), shared) / hidden;
  const float rstd = 1.f / sqrtf(var + 1e-5f);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
  }
}

// out[m,n] = bias[n] + a[m,:] . w[:,n], 16x16 output tile per block through shared memory.
__global__ void linear_gemm_kernel(const float* a, int lda, const float* w, const float* bias,
                                   float* out, int m, int k, int n) {
  __shared__ float as[kTile][kTile];
  __shared__ float ws[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float acc = col < n ? bias[col] : 0.f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    const int ka = k0 + threadIdx.x, kw = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = row < m && ka < k ? a[int64_t(row) * lda + ka] : 0.f;
    ws[threadIdx.y][threadIdx.x] = kw < k && col < n ? w[int64_t(kw) * n + col] : 0.f;
    __syncthreads();
    const int kmax = min(kTile, k - k0);
    for (int kk = 0; kk < kmax; ++kk) acc += as[threadIdx.y][kk] * ws[kk][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) out[int64_t(row) * n + col] = acc;
}

// Block (b*heads + h, i): one query row; threads over key positions j.
__global__ void attention_scores_kernel(const float* qkv, float* scores, int seq, int hidden,
                                        int heads) {
  const int bh = blockIdx.x, i = blockIdx.y;
  const int b = bh / heads, h = bh % heads, d = hidden / heads;
  const int64_t row = 3 * int64_t(hidden);
  const float scale = rsqrtf(float(d));
  const float* q = qkv + (int64_t(b) * seq + i) * row + h * d;
  float* s = scores + (int64_t(bh) * seq + i) * seq;
  for (int j = threadIdx.x; j < seq; j += blockDim.x) {
    const float* kv = qkv + (int64_t(b) * seq + j) * row + hidden + h * d;
    float acc = 0.f;
    for (int e = 0; e < d; ++e) acc += q[e] * kv[e];
    s[j] = j > i ? -INFINITY : acc * scale;
  }
}

__global__ void softmax_kernel(float* x, int cols) {
  __shared__ float shared[kThreads];
  float* v = x + int64_t(blockIdx.x) * cols;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) mx = fmaxf(mx, v[j]);
  mx = BlockReduce(mx, Max(), shared);
  float sum = 0.f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    v[j] = expf(v[j] - mx);
    sum += v[j];
  }
  const float inv = 1.f / BlockReduce(sum, Add(), shared);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) v[j] *= inv;
}

// Block (b*heads + h, i); threads over the head dimension.
__global__ void attention_context_kernel(const float* probs, const float* qkv, float* ctx, int seq,
                                         int hidden, int heads) {
  const int bh = blockIdx.x, i = blockIdx.y;
  const int b = bh / heads, h = bh % heads, d = hidden / heads;
  const int64_t row = 3 * int64_t(hidden);
  const float* p = probs + (int64_t(bh) * seq + i) * seq;
  for (int e = threadIdx.x; e < d; e += blockDim.x) {
    float acc = 0.f;
    for (int j = 0; j < seq; ++j)
      acc += p[j] * qkv[(int64_t(b) * seq + j) * row + 2 * hidden + h * d + e];
    ctx[(int64_t(b) * seq + i) * hidden + h * d + e] = acc;
  }
}

__global__ void gelu_elementwise_kernel(float* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    const float inner = 0.7978845608028654f * (v + 0.044715f * (v * v * v));
    x[i] = 0.5f * v * (1.f + tanhf(inner));
  }
}

__global__ void residual_add_elementwise_kernel(float* x, const float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    x[i] += y[i];
  }
}

unsigned ElementwiseBlocks(int64_t n) {
  return unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(cudaStream_t stream, std::string name) : stream_(stream), name_(std::move(name)) {}
  ~CudaBackend() override {
    for (void* p : buffers_) cudaFree(p);
    cudaStreamDestroy(stream_);
  }

  float* Alloc(size_t n) override {
    void* p = nullptr;
    if (!Check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc")) return nullptr;
    buffers_.push_back(p);
    return static_cast<float*>(p);
  }
  // On this backend's stream and waited for: workers' non-blocking streams do not order
  // after the legacy default stream, so the weights must be in place before they start.
  void CopyIn(float* dst, const float* host, size_t n) override {
    Check(cudaMemcpyAsync(dst, host, n * sizeof(float), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync");
    Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void CopyOut(float* host, const float* src, size_t n) override {
    Check(cudaMemcpyAsync(host, src, n * sizeof(float), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
    Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void Embedding(const int32_t* tokens, int batch, int seq, int hidden, const float* tok_emb,
                 const float* pos_emb, float* out) override {
    const size_t t = size_t(batch) * seq;
    if (tokens_.size() < t) {  // first request on this worker: size the token buffer once
      void* p = nullptr;
      if (!Check(cudaMalloc(&p, t * sizeof(int32_t)), "cudaMalloc")) return;
      buffers_.push_back(p);
      tokens_dev_ = static_cast<int32_t*>(p);
      tokens_.resize(t);
    }
    Check(
        cudaMemcpyAsync(tokens_dev_, tokens, t * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync");
    embedding_kernel<<<unsigned(t), kThreads, 0, stream_>>>(tokens_dev_, seq, hidden, tok_emb,
                                                            pos_emb, out);
    Launched("embedding_kernel");
  }
  void LayerNorm(const float* in, const float* gamma, const float* beta, float* out, int rows,
                 int hidden) override {
    layer_norm_kernel<<<unsigned(rows), kThreads, 0, stream_>>>(in, gamma, beta, out, hidden);
    Launched("layer_norm_kernel");
  }
  void Linear(const float* a, int lda, const float* w, const float* bias, float* out, int m, int k,
              int n) override {
    const dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile), block(kTile, kTile);
    linear_gemm_kernel<<<grid, block, 0, stream_>>>(a, lda, w, bias, out, m, k, n);
    Launched("linear_gemm_kernel");
  }
  void AttentionScores(const float* qkv, float* scores, int batch, int seq, int hidden,
                       int heads) override {
    const dim3 grid(unsigned(batch * heads), unsigned(seq));
    attention_scores_kernel<<<grid, std::min(seq, kThreads), 0, stream_>>>(qkv, scores, seq, hidden,
                                                                           heads);
    Launched("attention_scores_kernel");
  }
  void Softmax(float* x, int64_t rows, int cols) override {
    softmax_kernel<<<unsigned(rows), kThreads, 0, stream_>>>(x, cols);
    Launched("softmax_kernel");
  }
  void AttentionContext(const float* probs, const float* qkv, float* ctx, int batch, int seq,
                        int hidden, int heads) override {
    const dim3 grid(unsigned(batch * heads), unsigned(seq));
    attention_context_kernel<<<grid, std::min(hidden / heads, kThreads), 0, stream_>>>(
        probs, qkv, ctx, seq, hidden, heads);
    Launched("attention_context_kernel");
  }
  void Gelu(float* x, int64_t n) override {
    gelu_elementwise_kernel<<<ElementwiseBlocks(n), kThreads, 0, stream_>>>(x, n);
    Launched("gelu_elementwise_kernel");
  }
  void ResidualAdd(float* x, const float* y, int64_t n) override {
    residual_add_elementwise_kernel<<<ElementwiseBlocks(n), kThreads, 0, stream_>>>(x, y, n);
    Launched("residual_add_elementwise_kernel");
  }
  std::string Name() const override { return name_; }
  std::string Error() const override { return error_; }

 private:
  bool Check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    if (error_.empty()) error_ = std::string(what) + ": " + cudaGetErrorString(e);
    return false;
  }
  // Launch-configuration errors surface here; execution errors at the next synchronisation.
  void Launched(const char* kernel) { Check(cudaGetLastError(), kernel); }

  cudaStream_t stream_;
  std::string name_;
  std::string error_;
  std::vector<void*> buffers_;
  std::vector<char> tokens_;  // only its size matters: capacity of tokens_dev_
  int32_t* tokens_dev_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> MakeCudaBackend(std::string* reason) {
  // The static runtime dlopens the driver here; without one this fails instead of the
  // process failing to start.
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *reason =
        std::string("no CUDA driver or device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
    return nullptr;
  }
  if (count == 0) {
    *reason = "no CUDA device";
    return nullptr;
  }
  cudaDeviceProp prop{};
  if ((e = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess) {
    *reason = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    return nullptr;
  }
  cudaStream_t stream = nullptr;
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    *reason = std::string("cudaStreamCreate: ") + cudaGetErrorString(e);
    return nullptr;
  }
  return std::make_unique<CudaBackend>(stream, std::string("cuda: ") + prop.name);
}

}  // namespace opmap::demo
