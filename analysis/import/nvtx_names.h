// What an NVTX range name says, beyond its operator: the shape payload of opmap's own
// convention and the decorations PyTorch's emit_nvtx adds. Every NVTX source (the live
// capture, Nsight Systems exports) goes through here, so an operator has one name.
//
//   "demo::matmul{flops=2097152,bytes=196608}" → name "demo::matmul", flops 2097152,
//                                                 bytes 196608
//   "aten::linear, seq = 3, op_id = 7"          → name "aten::linear"
//   "aten::addmm, op_id = 12, sizes = [[8, 64], [64, 64]]" → name "aten::addmm"
//   "decoder_layer.3"                            → unchanged, no payload
//
// The shape payload is a trailing `{key=value,...}` of unsigned decimal integers; keys
// other than flops and bytes are ignored. A malformed suffix is kept as part of the name
// (it is then not a payload) rather than guessed at.
#ifndef OPMAP_ANALYSIS_IMPORT_NVTX_NAMES_H_
#define OPMAP_ANALYSIS_IMPORT_NVTX_NAMES_H_

#include <cstdint>
#include <string_view>

namespace opmap::analysis {

struct NvtxName {
  std::string_view name;  // a view into the input
  int64_t flops = -1;     // -1 = not given
  int64_t bytes = -1;
};

NvtxName ParseNvtxName(std::string_view text);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_NVTX_NAMES_H_
