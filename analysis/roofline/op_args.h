// The arguments of one recorded operator instance, as Kineto writes them: "Input Dims"
// (shapes), "Input type" (dtypes), "Concrete Inputs" (scalars and int lists as text) and
// "Input Strides", zipped by position. docs/metrics.md ("Roofline inputs") says what each
// cost formula reads from them.
#ifndef OPMAP_ANALYSIS_ROOFLINE_OP_ARGS_H_
#define OPMAP_ANALYSIS_ROOFLINE_OP_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::analysis {

struct OpArg {
  // Shape of a tensor argument ([] for a 0-dim tensor or a non-tensor).
  std::vector<int64_t> dims;
  // A tensor-list argument (cat's inputs): one shape per tensor.
  bool is_list = false;
  std::vector<std::vector<int64_t>> list;
  std::string type;      // "c10::BFloat16", "float", "Scalar", "ScalarList", "TensorList", ""
  std::string concrete;  // "", "1", "[0, 0]", "True", "-1", "same"
  std::vector<int64_t> strides;

  // A tensor: its type names a dtype (so a 0-dim "double" tensor is one, "Scalar" is not),
  // or no type was recorded and it has a shape.
  bool IsTensor() const;
  // Elements of the tensor (1 for 0-dim); 0 for a non-tensor.
  double Numel() const;
  // Bytes per element of the tensor's dtype; nullopt when the type names none.
  std::optional<int> ElementBytes() const;
  // Concrete value as an integer / integer list / bool; nullopt when absent or not one.
  std::optional<int64_t> ConcreteInt() const;
  std::optional<std::vector<int64_t>> ConcreteInts() const;
  std::optional<bool> ConcreteBool() const;
};

// Bytes per element of a Kineto dtype name: fp64/int64 8, fp32/int32 4, bf16/fp16/int16 2,
// fp8/int8/uint8/bool 1, complex<float> 8, complex<double> 16; nullopt for anything else
// (Scalar, ScalarList, TensorList, "", unknown names).
std::optional<int> DtypeBytes(std::string_view type);
// Whether a dtype is floating point (decides matrix vs vector precision; ints use fp32's).
bool IsFloatDtype(std::string_view type);

// Zips the four texts (each a JSON array as the trace wrote it; any may be empty, then
// its field stays empty). Errors name the field and byte offset; arrays of different
// lengths are an error naming both lengths.
absl::StatusOr<std::vector<OpArg>> ParseOpArgs(std::string_view input_dims,
                                               std::string_view input_types,
                                               std::string_view concrete_inputs,
                                               std::string_view input_strides);

// A recorded array in one canonical line: whitespace outside strings dropped, ", " after
// each comma (`[[8, 12], []]`), whatever indentation the trace was written with.
std::string CompactArrayText(std::string_view text);

// ["a", "b"] → {"a", "b"} (JSON string escapes decoded). Errors name the byte offset.
absl::StatusOr<std::vector<std::string>> ParseStringArray(std::string_view text,
                                                          std::string_view field);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_ROOFLINE_OP_ARGS_H_
