#include "examples/demo_infer/model.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace opmap::demo {
namespace {

// SplitMix64: tiny, fast, and identical on every platform (std::*_distribution is not),
// so weights and tokens depend only on the seed.
uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [-scale, scale]; scale 1/sqrt(fan_in) keeps activations O(1) through the layers.
std::vector<float> Uniform(uint64_t seed, uint64_t tensor, size_t n, float scale) {
  uint64_t state = seed ^ (tensor * 0xd1b54a32d192ed03ull);
  std::vector<float> v(n);
  for (float& x : v) {
    const double u = double(SplitMix(state) >> 11) * 0x1.0p-53;  // [0, 1)
    x = float((2.0 * u - 1.0) * scale);
  }
  return v;
}

float* Upload(Backend& b, const std::vector<float>& host) {
  float* p = b.Alloc(host.size());
  b.CopyIn(p, host.data(), host.size());
  return p;
}

}  // namespace

Model::Model(const Config& config, Backend& weights, NvtxMarks& marks) : c_(config), marks_(marks) {
  const int64_t h = c_.hidden, t = int64_t(c_.batch) * c_.seq, d = c_.hidden / c_.heads;
  const int l = c_.layers;
  // Same order as the Op enum.
  const struct {
    const char* name;
    int per_request;
    OpCost cost;
  } plan[kOpCount] = {
      {"demo::embedding", 1, EmbeddingCost(c_.batch, c_.seq, h)},
      {"demo::layer_norm", 2 * l, LayerNormCost(t, h)},
      {"demo::qkv_linear", l, LinearCost(t, h, 3 * h)},
      {"demo::attention_scores", l, AttentionScoresCost(c_.batch, c_.heads, c_.seq, d)},
      {"demo::softmax", l, SoftmaxCost(int64_t(c_.batch) * c_.heads * c_.seq, c_.seq)},
      {"demo::attention_context", l, AttentionContextCost(c_.batch, c_.heads, c_.seq, d)},
      {"demo::out_linear", l, LinearCost(t, h, h)},
      {"demo::residual_add", 2 * l, ResidualAddCost(t * h)},
      {"demo::mlp_up_linear", l, LinearCost(t, h, 4 * h)},
      {"demo::gelu", l, GeluCost(t * 4 * h)},
      {"demo::mlp_down_linear", l, LinearCost(t, 4 * h, h)},
      {"demo::final_layer_norm", 1, LayerNormCost(t, h)},
      {"demo::lm_head_linear", 1, LinearCost(c_.batch, h, c_.vocab)},
  };
  for (const auto& p : plan) {
    OpInfo op{p.name, CostMessage(p.name, p.cost), p.per_request, p.cost, 0};
    op.mark = marks_.Register(op.name, op.message);
    ops_.push_back(op);
  }
  forward_mark_ = marks_.Register("forward", "forward");
  for (int i = 0; i < l; ++i) {
    const std::string name = "decoder_layer." + std::to_string(i);
    layer_marks_.push_back(marks_.Register(name, name));
  }

  uint64_t tensor = 0;
  auto random = [&](size_t n, double fan_in) {
    return Upload(weights, Uniform(c_.seed, ++tensor, n, float(1.0 / std::sqrt(fan_in))));
  };
  auto constant = [&](size_t n, float value) {
    return Upload(weights, std::vector<float>(n, value));
  };
  const size_t hs = size_t(h);
  tok_emb_ = random(size_t(c_.vocab) * hs, 1.0);
  pos_emb_ = random(size_t(c_.seq) * hs, 4.0);
  for (int i = 0; i < l; ++i) {
    Layer y;
    y.ln1_g = constant(hs, 1.f);
    y.ln1_b = constant(hs, 0.f);
    y.w_qkv = random(hs * 3 * hs, double(h));
    y.b_qkv = random(3 * hs, 50.0 * h);
    y.w_out = random(hs * hs, double(h));
    y.b_out = random(hs, 50.0 * h);
    y.ln2_g = constant(hs, 1.f);
    y.ln2_b = constant(hs, 0.f);
    y.w_up = random(hs * 4 * hs, double(h));
    y.b_up = random(4 * hs, 50.0 * h);
    y.w_down = random(4 * hs * hs, 4.0 * h);
    y.b_down = random(hs, 50.0 * h);
    layers_.push_back(y);
  }
  lnf_g_ = constant(hs, 1.f);
  lnf_b_ = constant(hs, 0.f);
  w_head_ = random(hs * size_t(c_.vocab), double(h));
  b_head_ = constant(size_t(c_.vocab), 0.f);
}

Model::Workspace Model::NewWorkspace(Backend& b) const {
  const size_t t = size_t(c_.batch) * c_.seq, h = size_t(c_.hidden);
  Workspace ws;
  ws.x = b.Alloc(t * h);
  ws.h = b.Alloc(t * h);
  ws.qkv = b.Alloc(t * 3 * h);
  ws.scores = b.Alloc(size_t(c_.batch) * c_.heads * c_.seq * c_.seq);
  ws.ctx = b.Alloc(t * h);
  ws.proj = b.Alloc(t * h);
  ws.up = b.Alloc(t * 4 * h);
  ws.logits = b.Alloc(size_t(c_.batch) * c_.vocab);
  ws.host_logits.resize(size_t(c_.batch) * c_.vocab);
  return ws;
}

std::vector<int32_t> Model::RequestTokens(uint64_t request_id) const {
  // Offset from the weight streams so tokens never reuse a weight tensor's sequence.
  uint64_t state = c_.seed ^ ((request_id + 1) * 0x9fb21c651e98df25ull) ^ 0x5851f42d4c957f2dull;
  std::vector<int32_t> tokens(size_t(c_.batch) * c_.seq);
  for (int32_t& tok : tokens) tok = int32_t(SplitMix(state) % uint64_t(c_.vocab));
  return tokens;
}

std::vector<int32_t> Model::Forward(Backend& b, Workspace& ws, const std::vector<int32_t>& tokens,
                                    uint64_t request_id, int64_t* injected_ns) const {
  int64_t injected = 0;
  const int t = c_.batch * c_.seq, h = c_.hidden;
  const int64_t th = int64_t(t) * h;
  ScopedRange forward(marks_, forward_mark_, request_id);
  {
    ScopedRange r(marks_, ops_[kEmbedding].mark);
    b.Embedding(tokens.data(), c_.batch, c_.seq, h, tok_emb_, pos_emb_, ws.x);
  }
  for (int i = 0; i < c_.layers; ++i) {
    const Layer& y = layers_[i];
    ScopedRange layer(marks_, layer_marks_[i], uint64_t(i));
    if (i == c_.stall_layer && c_.host_stall_us > 0 && (request_id + 1) % c_.stall_every == 0) {
      const auto t0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::microseconds(c_.host_stall_us));
      const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - t0).count();
      stall_ns_ += ns;
      injected += ns;
      ++stalled_requests_;
    }
    {
      ScopedRange r(marks_, ops_[kLayerNorm].mark);
      b.LayerNorm(ws.x, y.ln1_g, y.ln1_b, ws.h, t, h);
    }
    {
      ScopedRange r(marks_, ops_[kQkv].mark);
      b.Linear(ws.h, h, y.w_qkv, y.b_qkv, ws.qkv, t, h, 3 * h);
    }
    {
      ScopedRange r(marks_, ops_[kScores].mark);
      b.AttentionScores(ws.qkv, ws.scores, c_.batch, c_.seq, h, c_.heads);
    }
    {
      ScopedRange r(marks_, ops_[kSoftmax].mark);
      b.Softmax(ws.scores, int64_t(c_.batch) * c_.heads * c_.seq, c_.seq);
    }
    {
      ScopedRange r(marks_, ops_[kContext].mark);
      b.AttentionContext(ws.scores, ws.qkv, ws.ctx, c_.batch, c_.seq, h, c_.heads);
    }
    {
      ScopedRange r(marks_, ops_[kOut].mark);
      b.Linear(ws.ctx, h, y.w_out, y.b_out, ws.proj, t, h, h);
    }
    {
      ScopedRange r(marks_, ops_[kResidual].mark);
      b.ResidualAdd(ws.x, ws.proj, th);
    }
    {
      ScopedRange r(marks_, ops_[kLayerNorm].mark);
      b.LayerNorm(ws.x, y.ln2_g, y.ln2_b, ws.h, t, h);
    }
    {
      ScopedRange r(marks_, ops_[kUp].mark);
      b.Linear(ws.h, h, y.w_up, y.b_up, ws.up, t, h, 4 * h);
    }
    {
      ScopedRange r(marks_, ops_[kGelu].mark);
      b.Gelu(ws.up, 4 * th);
    }
    {
      ScopedRange r(marks_, ops_[kDown].mark);
      const bool slowed = i == c_.slow_layer && (request_id + 1) % c_.slow_every == 0;
      const int repeat = slowed ? c_.slow_repeat : 1;
      b.Linear(ws.up, 4 * h, y.w_down, y.b_down, ws.proj, t, 4 * h, h);
      if (repeat > 1) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 1; k < repeat; ++k) {
          b.Linear(ws.up, 4 * h, y.w_down, y.b_down, ws.proj, t, 4 * h, h);
        }
        const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - t0).count();
        slow_extra_ns_ += ns;
        injected += ns;
        ++slow_requests_;
      }
    }
    {
      ScopedRange r(marks_, ops_[kResidual].mark);
      b.ResidualAdd(ws.x, ws.proj, th);
    }
  }
  {
    ScopedRange r(marks_, ops_[kFinalNorm].mark);
    b.LayerNorm(ws.x, lnf_g_, lnf_b_, ws.h, t, h);
  }
  {
    // Only each sequence's last position predicts the next token: rows seq-1, 2*seq-1, ...
    ScopedRange r(marks_, ops_[kHead].mark);
    b.Linear(ws.h + int64_t(c_.seq - 1) * h, c_.seq * h, w_head_, b_head_, ws.logits, c_.batch, h,
             c_.vocab);
  }
  b.CopyOut(ws.host_logits.data(), ws.logits, ws.host_logits.size());
  if (injected_ns != nullptr) *injected_ns = injected;
  if (!b.Error().empty()) return {};
  std::vector<int32_t> next(c_.batch);
  for (int s = 0; s < c_.batch; ++s) {
    const float* row = ws.host_logits.data() + int64_t(s) * c_.vocab;
    int best = 0;
    for (int v = 1; v < c_.vocab; ++v) best = row[v] > row[best] ? v : best;
    next[s] = best;
  }
  return next;
}

Model::Injected Model::injected() const {
  return {slow_requests_.load(), slow_extra_ns_.load(), stalled_requests_.load(),
          stall_ns_.load()};
}

uint64_t Model::FlopsPerRequest() const {
  uint64_t f = 0;
  for (const OpInfo& op : ops_) f += uint64_t(op.per_request) * op.cost.flops;
  return f;
}

}  // namespace opmap::demo
