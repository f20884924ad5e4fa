#include "kernels/moe/moe_combine_ref.h"

#include "engine/common/check.h"
#include "engine/formats/bf16.h"

namespace gcmoe::kernels {

Status moe_combine_ref(CombineShape shape, std::span<float const> slots,
                       std::span<float const> weights, bool apply_weights,
                       std::span<float const> shared, std::span<float> out, bool round_to_bf16) {
  auto const [tokens, top_k, hidden] = shape;
  GCMOE_CHECK_ARG(tokens >= 0 && top_k > 0 && hidden > 0, "bad combine shape T={} k={} H={}",
                  tokens, top_k, hidden);
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(slots.size()) == tokens * top_k * hidden,
                  "slots has {} floats, expected T·k·H = {}", slots.size(),
                  tokens * top_k * hidden);
  GCMOE_CHECK_ARG(!apply_weights || static_cast<std::int64_t>(weights.size()) == tokens * top_k,
                  "{} weights for T·k = {} slots", weights.size(), tokens * top_k);
  GCMOE_CHECK_ARG(shared.empty() || static_cast<std::int64_t>(shared.size()) == tokens * hidden,
                  "shared output has {} floats, expected T·H = {}", shared.size(), tokens * hidden);
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(out.size()) == tokens * hidden,
                  "out has {} floats, expected T·H = {}", out.size(), tokens * hidden);
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t c = 0; c < hidden; ++c) {
      float acc = 0.0f;
      for (std::int64_t k = 0; k < top_k; ++k) {
        float const w = apply_weights ? weights[t * top_k + k] : 1.0f;
        acc += w * slots[(t * top_k + k) * hidden + c];
      }
      if (!shared.empty()) {
        acc += shared[t * hidden + c];
      }
      out[t * hidden + c] = round_to_bf16 ? formats::decode_bf16(formats::encode_bf16(acc)) : acc;
    }
  }
  return Status();
}

}  // namespace gcmoe::kernels
