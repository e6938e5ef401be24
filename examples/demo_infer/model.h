// A GPT-style pre-LayerNorm transformer decoder: token + positional embedding, `layers`
// blocks of (layer norm, fused QKV projection, causal multi-head attention, output
// projection, residual, layer norm, 4x MLP with GELU, residual), a final layer norm and a
// language-model head on each sequence's last position. One request is one prefill
// forward pass over batch x seq tokens, and its result is the greedy next token of each
// sequence.
//
// Weights come from the seed, so two runs with the same flags compute the same tokens
// whatever the thread count, the arrival order or an NVTX tool in the process.
// Forward() is const and thread-safe given one Workspace and one Backend per thread.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_MODEL_H_
#define OPMAP_EXAMPLES_DEMO_INFER_MODEL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "examples/demo_infer/backend.h"
#include "examples/demo_infer/flags.h"
#include "examples/demo_infer/nvtx_marks.h"
#include "examples/demo_infer/op_cost.h"

namespace opmap::demo {

// One operator of the forward pass, as annotated.
struct OpInfo {
  std::string name;     // e.g. "demo::qkv_linear"
  std::string message;  // the NVTX message: name{flops=..,bytes=..}
  int per_request = 0;  // ranges of this name per forward pass
  OpCost cost;          // of one range
  MarkId mark = 0;
};

class Model {
 public:
  // Per-thread activation buffers, allocated from that thread's backend.
  struct Workspace {
    float* x = nullptr;       // residual stream   [batch*seq, hidden]
    float* h = nullptr;       // normalised input  [batch*seq, hidden]
    float* qkv = nullptr;     //                   [batch*seq, 3*hidden]
    float* scores = nullptr;  //                   [batch, heads, seq, seq]
    float* ctx = nullptr;     //                   [batch*seq, hidden]
    float* proj = nullptr;    //                   [batch*seq, hidden]
    float* up = nullptr;      //                   [batch*seq, 4*hidden]
    float* logits = nullptr;  //                   [batch, vocab]
    std::vector<float> host_logits;
  };

  // Builds the weights from config.seed into `weights` (which must outlive the model) and
  // registers every NVTX message with `marks`.
  Model(const Config& config, Backend& weights, NvtxMarks& marks);

  Workspace NewWorkspace(Backend& backend) const;

  // Tokens for one request: batch*seq ids in [0, vocab), from (seed, request id).
  std::vector<int32_t> RequestTokens(uint64_t request_id) const;

  // One annotated forward pass. Returns the next token per sequence, or an empty vector
  // when the backend failed (its Error() says why).
  // `injected_ns`, when given, receives the time --slow-every and --host-stall-us added.
  std::vector<int32_t> Forward(Backend& backend, Workspace& ws, const std::vector<int32_t>& tokens,
                               uint64_t request_id, int64_t* injected_ns = nullptr) const;

  const std::vector<OpInfo>& ops() const { return ops_; }
  uint64_t FlopsPerRequest() const;

  // What --slow-every and --host-stall-us added, measured by the steady clock around the
  // extra down projections and the sleeps: the ground truth tail tests compare against
  // (on cuda the extra projections are launches, so only their host time is measured).
  struct Injected {
    int64_t slow_requests = 0;
    int64_t slow_extra_ns = 0;
    int64_t stalled_requests = 0;
    int64_t stall_ns = 0;
  };
  Injected injected() const;

 private:
  struct Layer {
    float *ln1_g, *ln1_b, *w_qkv, *b_qkv, *w_out, *b_out;
    float *ln2_g, *ln2_b, *w_up, *b_up, *w_down, *b_down;
  };
  // Index into ops_.
  enum Op {
    kEmbedding,
    kLayerNorm,
    kQkv,
    kScores,
    kSoftmax,
    kContext,
    kOut,
    kResidual,
    kUp,
    kGelu,
    kDown,
    kFinalNorm,
    kHead,
    kOpCount
  };

  Config c_;
  NvtxMarks& marks_;
  std::vector<OpInfo> ops_;  // indexed by Op
  MarkId forward_mark_ = 0;
  std::vector<MarkId> layer_marks_;
  float *tok_emb_ = nullptr, *pos_emb_ = nullptr, *lnf_g_ = nullptr, *lnf_b_ = nullptr;
  float *w_head_ = nullptr, *b_head_ = nullptr;
  std::vector<Layer> layers_;
  mutable std::atomic<int64_t> slow_requests_{0}, slow_extra_ns_{0};
  mutable std::atomic<int64_t> stalled_requests_{0}, stall_ns_{0};
};

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_MODEL_H_
