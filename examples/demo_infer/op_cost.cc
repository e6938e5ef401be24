#include "examples/demo_infer/op_cost.h"

#include <cstdint>
#include <string>

namespace opmap::demo {
namespace {
constexpr uint64_t kF = 4;  // bytes per float32 / int32
}  // namespace

OpCost LinearCost(int64_t m, int64_t k, int64_t n) {
  // The accumulator starts at the bias, so the bias add costs nothing: k multiplies and k
  // adds per output.
  return {uint64_t(2 * m * n * k), kF * uint64_t(m * k + k * n + n + m * n)};
}

OpCost EmbeddingCost(int64_t batch, int64_t seq, int64_t hidden) {
  const int64_t t = batch * seq;
  // One add per output element; reads the token ids, t gathered rows and seq positional rows.
  return {uint64_t(t * hidden), kF * uint64_t(t + t * hidden + seq * hidden + t * hidden)};
}

OpCost LayerNormCost(int64_t rows, int64_t hidden) {
  // Per row: sum (h), mean (1 div), sum of squared deviations (3h: sub, mul, add),
  // variance (1 div), rstd = 1/sqrt(var+eps) (3), normalise (4h: sub, mul, mul, add).
  return {uint64_t(rows * (8 * hidden + 5)), kF * uint64_t(2 * rows * hidden + 2 * hidden)};
}

OpCost AttentionScoresCost(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim) {
  const int64_t scores = batch * heads * seq * seq;
  // head_dim multiplies and adds per score, plus one multiply by 1/sqrt(head_dim).
  const int64_t q_and_k = 2 * batch * seq * heads * head_dim;
  return {uint64_t(scores * (2 * head_dim + 1)), kF * uint64_t(q_and_k + scores)};
}

OpCost SoftmaxCost(int64_t rows, int64_t cols) {
  // Per row: max (cols compares), exp(x-max) (2 cols), sum (cols), 1/sum (1), scale (cols).
  return {uint64_t(rows * (5 * cols + 1)), kF * uint64_t(2 * rows * cols)};
}

OpCost AttentionContextCost(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim) {
  const int64_t probs = batch * heads * seq * seq;
  const int64_t v = batch * seq * heads * head_dim;  // V read once, context written once
  return {uint64_t(2 * probs * head_dim), kF * uint64_t(probs + 2 * v)};
}

OpCost GeluCost(int64_t n) {
  // 0.5*x*(1 + tanh(c*(x + 0.044715*x^3))): x^3 (2), *0.044715 (1), +x (1), *c (1),
  // tanh (1), 1+ (1), 0.5*x (1), * (1).
  return {uint64_t(9 * n), kF * uint64_t(2 * n)};
}

OpCost ResidualAddCost(int64_t n) { return {uint64_t(n), kF * uint64_t(3 * n)}; }

std::string CostMessage(const std::string& name, const OpCost& cost) {
  return name + "{flops=" + std::to_string(cost.flops) + ",bytes=" + std::to_string(cost.bytes) +
         "}";
}

}  // namespace opmap::demo
