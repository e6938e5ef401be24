// FLOPs and bytes of each demo operator for one shape. They travel in the NVTX message
// ("<name>{flops=F,bytes=B}", examples/README.md) so opmap can compute MFU and intensity
// from a capture without knowing the model.
//
// FLOPs are exact for the implementation in cpu_ops.cc (and the CUDA kernels, which do the
// same arithmetic): one multiply, add, compare, division, square root, exp or tanh is one
// FLOP; a fused multiply-add is two. Masked (causal) attention scores are computed and then
// masked, so attention carries no causal discount (the docs/metrics.md convention).
// Bytes are the compulsory traffic: every operand read once and every result written once,
// 4 bytes per float32 and per int32 token id.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_OP_COST_H_
#define OPMAP_EXAMPLES_DEMO_INFER_OP_COST_H_

#include <cstdint>
#include <string>

namespace opmap::demo {

struct OpCost {
  uint64_t flops = 0;
  uint64_t bytes = 0;
};

// out[m,n] = bias[n] + sum_k a[m,k] * w[k,n]
OpCost LinearCost(int64_t m, int64_t k, int64_t n);
// out[t,:] = tok_emb[token[t],:] + pos_emb[t % seq,:] for t < batch*seq
OpCost EmbeddingCost(int64_t batch, int64_t seq, int64_t hidden);
// rows of width `hidden`: two-pass mean and variance, then (x-mean)*rstd*gamma+beta
OpCost LayerNormCost(int64_t rows, int64_t hidden);
// scores[b,h,i,j] = scale * q[b,i,h,:] . k[b,j,h,:], then j > i set to -inf
OpCost AttentionScoresCost(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim);
// row-wise softmax over `cols`, in place
OpCost SoftmaxCost(int64_t rows, int64_t cols);
// ctx[b,i,h,:] = sum_j p[b,h,i,j] * v[b,j,h,:]
OpCost AttentionContextCost(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim);
// tanh-approximate GELU, in place
OpCost GeluCost(int64_t n);
// x += y
OpCost ResidualAddCost(int64_t n);

// "<name>{flops=F,bytes=B}": the NVTX message convention opmap parses.
std::string CostMessage(const std::string& name, const OpCost& cost);

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_OP_COST_H_
