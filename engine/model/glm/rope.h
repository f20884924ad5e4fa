#pragma once
// Rotary position embedding of GLM-5.2: default rope (no YaRN), θ = rope_theta, over the
// qk_rope_head_dim dims of the main attention's q/k and of the indexer's q/k.
//
// Convention (settled against transformers 5.24 `apply_rotary_pos_emb_interleave`, which matches
// vLLM/SGLang is_neox_style=False and config rope_interleave=true): INTERLEAVED pairs — element
// pairs (x[2i], x[2i+1]) rotate by the angle pos · θ^(−2i/d). transformers writes the rotated pairs
// de-interleaved (evens then odds); this implementation keeps them interleaved. Queries and keys
// get the same permutation either way, so every q·k (all the model uses them for) is the same.
// The older rotate-half revision of the HF code (pairs (x[i], x[i + d/2])) is NOT used.

#include <cstdint>
#include <span>
#include <vector>

namespace gcmoe::model::glm {

class Rope {
 public:
  // `dim` (even) rotated dims; inverse frequencies as transformers computes them in fp32:
  // 1 / θ^(2i/dim).
  Rope(std::int64_t dim, double theta);

  std::int64_t dim() const { return dim_; }

  // Rotates x[0, dim) of each of `rows` consecutive vectors of `stride` floats at `position`.
  void apply(float* x, std::int64_t rows, std::int64_t stride, std::int32_t position) const;

 private:
  std::int64_t dim_ = 0;
  std::vector<float> inv_freq_;  // dim / 2
};

}  // namespace gcmoe::model::glm
