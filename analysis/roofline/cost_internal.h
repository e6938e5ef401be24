// Helpers the per-family cost files share (not part of the roofline API).
#ifndef OPMAP_ANALYSIS_ROOFLINE_COST_INTERNAL_H_
#define OPMAP_ANALYSIS_ROOFLINE_COST_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "analysis/roofline/op_cost.h"

namespace opmap::analysis::cost {

// Each family: returns false when the op is not one of its own (cost untouched).
// Serving: paged attention and fused MoE, whose cost needs the trace around the instance.
bool Serving(absl::string_view op, const std::vector<OpArg>& args, const CostContext& context,
             OpCost& c);
bool Matmul(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
bool Attention(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
bool Conv(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
bool Elementwise(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
bool NormSoftmaxReduce(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
bool DataMovement(absl::string_view op, const std::vector<OpArg>& args,
                  std::optional<int> element_bytes_hint, OpCost& c);
bool Communication(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
bool FusedServing(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
bool Inductor(absl::string_view op, const std::vector<OpArg>& args, OpCost& c);
// Whether op is a fused MoE operator (not an Inductor kernel named after one).
bool IsFusedMoe(absl::string_view op);

// Whether op is one of names.
bool IsOneOf(absl::string_view op, std::initializer_list<absl::string_view> names);

double Product(const std::vector<int64_t>& v, size_t begin = 0,
               size_t end = static_cast<size_t>(-1));
std::string Dims(const std::vector<int64_t>& v);
// The tensor argument at i with at least `min_rank` dims, or nullptr.
const OpArg* TensorAt(const std::vector<OpArg>& args, size_t i, size_t min_rank = 0);
// Element size of a tensor argument, 0 when its dtype is not recorded (OpCostFor then
// drops the bytes: a figure from a guessed element size would be made up).
int Eb(const OpArg& a);
// numel × element size of a tensor argument (0 when its dtype is not recorded).
double TensorBytes(const OpArg& a);
// Numpy-style broadcast of shapes (right-aligned); nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<std::vector<int64_t>>& shapes);

// Marks the cost unavailable with a reason (keeps the family).
void Missing(OpCost& c, absl::string_view op, absl::string_view why);
// Sets FLOPs (executed = model) and bytes.
void Set(OpCost& c, double flops, std::string formula, double bytes, std::string bytes_formula);
// "%.6g" of a count, for formulas.
std::string Num(double v);

}  // namespace opmap::analysis::cost

#endif  // OPMAP_ANALYSIS_ROOFLINE_COST_INTERNAL_H_
