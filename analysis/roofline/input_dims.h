// Kineto "Input Dims" (and "Input Strides", same grammar) text → one shape per argument.
#ifndef OPMAP_ANALYSIS_ROOFLINE_INPUT_DIMS_H_
#define OPMAP_ANALYSIS_ROOFLINE_INPUT_DIMS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::analysis {

// One argument of "Input Dims": a tensor's dims ([] for scalars, None and empty lists),
// or, for a tensor-list argument ([[2, 3], [4]]), is_list with the list's shapes.
struct ArgDims {
  std::vector<int64_t> dims;
  bool is_list = false;
  std::vector<std::vector<int64_t>> list;
};

// Parses Kineto "Input Dims" text, e.g. `[[16, 128, 512], [512, 512], []]`. Whitespace
// anywhere; integers may be negative (symbolic -1). Errors name the byte offset.
absl::StatusOr<std::vector<ArgDims>> ParseInputDims(std::string_view text);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_ROOFLINE_INPUT_DIMS_H_
