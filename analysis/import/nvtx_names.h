// What an NVTX range name says: its operator or module, and the shapes and ids the
// framework that pushed it wrote beside. Every NVTX source (the live capture, Nsight
// Systems exports) goes through here, so a range has one name whatever its source
// (docs/metrics.md, "NVTX range names").
//
//   opmap's shape payload        "demo::matmul{flops=2097152,bytes=196608}"
//                                → "demo::matmul", flops 2097152, bytes 196608
//   PyTorch emit_nvtx            "aten::addmm, seq = 12, op_id = 40, sizes = [[768], [8, 768],
//   (record_shapes=True)          [768, 768]], input_op_ids = [(38, 0), (39, 0)]"
//                                → "aten::addmm", seq 12, op_id 40, input dims
//                                  "[[768], [8, 768], [768, 768]]"; also ", stashed seq = N"
//   vLLM / SGLang layerwise      "{'Module': 'top.model.layers.0.mlp', 'TrainableParams': {...},
//   NVTX (a Python dict repr)     'Inputs': [[8, 1024]], 'StaticParams': {...}}"
//                                → "top.model.layers.0.mlp", input dims "[[8, 1024]]"; vLLM's
//                                  marker holding 'Outputs' (pushed and popped after the
//                                  forward) is an output marker, not a module call
//   opmap_torch.annotate         "opmap.module model.layers.0.mlp (LlamaMLP) shapes=[[8, 1024]]"
//                                → "model.layers.0.mlp (LlamaMLP)" (module path and class:
//                                  summary/modules.h), input dims "[[8, 1024]]"
//   anything else                unchanged ("decoder_layer.3", "step[DECODE bs=8]")
//
// A form that does not parse whole keeps what it can (a dict cut by the ring's name bound
// still names its module) and never guesses a field.
#ifndef OPMAP_ANALYSIS_IMPORT_NVTX_NAMES_H_
#define OPMAP_ANALYSIS_IMPORT_NVTX_NAMES_H_

#include <cstdint>
#include <string_view>

#include "analysis/model/trace.h"

namespace opmap::analysis {

enum class NvtxForm : uint8_t { kPlain, kEmitNvtx, kLayerwise, kOpmapModule };

struct NvtxName {
  std::string_view name;  // views into the input
  NvtxForm form = NvtxForm::kPlain;
  int64_t flops = -1;     // -1 = not given
  int64_t bytes = -1;
  std::string_view input_dims;    // a JSON array of shapes, as Kineto's "Input Dims"; "" none
  int64_t seq = -1;               // emit_nvtx's autograd sequence number (or stashed seq)
  int64_t op_id = -1;             // emit_nvtx's op id
  std::string_view input_op_ids;  // emit_nvtx's "[(38, 0), (39, 0)]"
  bool output_marker = false;     // a layerwise output marker: not a module call
};

NvtxName ParseNvtxName(std::string_view text);

// Names `r` from `text`: its name, flops, bytes and input dims, interned in `strings`.
// False for a layerwise output marker, which is no range of its own (importers drop it).
bool NameNvtxRange(std::string_view text, StringTable& strings, Range& r);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_NVTX_NAMES_H_
