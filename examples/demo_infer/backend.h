// Where the demo's operators run: the CPU (cpu_backend.cc, the default) or a GPU
// (cuda_backend.cu, built with OPMAP_DEMO_CUDA=ON). The model code (model.cc) holds the NVTX
// annotations and calls the same operators on either, so a capture of each shows the same
// operator ranges; on CUDA the kernels are launched inside them.
//
// Pointers returned by Alloc live in the backend's memory space (host or device) and stay
// valid until that backend is destroyed; any backend of the same kind may read them (the
// weights are allocated once and shared by every worker's backend). One backend per thread:
// the CUDA one owns a stream. Errors are sticky and reported by Error(), never thrown.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_BACKEND_H_
#define OPMAP_EXAMPLES_DEMO_INFER_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace opmap::demo {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual float* Alloc(size_t n) = 0;
  virtual void CopyIn(float* dst, const float* host, size_t n) = 0;
  // Waits for the operators issued before it.
  virtual void CopyOut(float* host, const float* src, size_t n) = 0;

  // out[b*seq+s, :] = tok_emb[tokens[b*seq+s], :] + pos_emb[s, :]; tokens are on the host.
  virtual void Embedding(const int32_t* tokens, int batch, int seq, int hidden,
                         const float* tok_emb, const float* pos_emb, float* out) = 0;
  virtual void LayerNorm(const float* in, const float* gamma, const float* beta, float* out,
                         int rows, int hidden) = 0;
  // out[m,n] = bias[n] + a[m,:] . w[:,n]; row i of a starts at a + i*lda.
  virtual void Linear(const float* a, int lda, const float* w, const float* bias, float* out, int m,
                      int k, int n) = 0;
  // qkv rows are [q | k | v], each `hidden` wide, head h at columns h*hidden/heads.
  // scores[b,h,i,j] = q.k / sqrt(head_dim), -inf where j > i (causal).
  virtual void AttentionScores(const float* qkv, float* scores, int batch, int seq, int hidden,
                               int heads) = 0;
  virtual void Softmax(float* x, int64_t rows, int cols) = 0;
  // ctx[b*seq+i, h*head_dim + d] = sum_j probs[b,h,i,j] * v[b*seq+j, h*head_dim + d]
  virtual void AttentionContext(const float* probs, const float* qkv, float* ctx, int batch,
                                int seq, int hidden, int heads) = 0;
  virtual void Gelu(float* x, int64_t n) = 0;
  virtual void ResidualAdd(float* x, const float* y, int64_t n) = 0;

  // "cpu", or "cuda: <device name>" for the report.
  virtual std::string Name() const = 0;
  // Empty while every call so far succeeded; else the first failure.
  virtual std::string Error() const = 0;
};

std::unique_ptr<Backend> MakeCpuBackend();

// nullptr with *reason set when CUDA can't be used: built without OPMAP_DEMO_CUDA, no
// driver, or no device.
std::unique_ptr<Backend> MakeCudaBackend(std::string* reason);

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_BACKEND_H_
