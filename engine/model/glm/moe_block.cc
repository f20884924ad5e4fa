#include "engine/model/glm/moe_block.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/common/check.h"
#include "engine/model/glm/dense_mlp.h"
#include "kernels/moe/expert_ffn_ref.h"
#include "kernels/moe/router_ref.h"

namespace gcmoe::model::glm {
namespace {

kernels::DenseExpertWeights dense_expert(SwigluWeights const& w) {
  return {.hidden = w.gate.in,
          .intermediate = w.gate.out,
          .gate = w.gate.w,
          .up = w.up.w,
          .down = w.down.w};
}

}  // namespace

Status moe_block(MoeWeights const& weights, GlmDims const& dims, runtime::Communicator& comm,
                 std::span<float const> x, std::span<float> out) {
  auto const hidden = static_cast<std::size_t>(dims.hidden);
  std::size_t const mine = x.size() / hidden;

  // 1. The group's tokens, rank after rank.
  std::vector<float> gathered;
  std::size_t offset = 0;  // this rank's first row in the gathered rows
  std::span<float const> all = x;
  if (comm.world_size() > 1) {
    std::vector<std::byte> bytes;
    std::vector<std::size_t> sizes;
    GCMOE_RETURN_IF_ERROR(comm.all_gather(std::as_bytes(x), bytes, sizes));
    GCMOE_CHECK_INTERNAL(static_cast<std::int32_t>(sizes.size()) == comm.world_size() &&
                             bytes.size() % (hidden * sizeof(float)) == 0,
                         "MoE all_gather returned {} bytes from {} ranks", bytes.size(),
                         sizes.size());
    for (std::int32_t r = 0; r < comm.rank(); ++r) {
      offset += sizes[static_cast<std::size_t>(r)] / (hidden * sizeof(float));
    }
    gathered.resize(bytes.size() / sizeof(float));
    std::memcpy(gathered.data(), bytes.data(), bytes.size());
    all = gathered;
  }
  std::size_t const rows = all.size() / hidden;

  // 2-3. Route every row; run the local experts on theirs.
  std::vector<float> sum(all.size(), 0.0f);
  if (rows > 0) {
    kernels::RouterParams params = kernels::glm5_router_params();
    params.renormalize = dims.norm_topk_prob;
    params.routed_scaling = dims.routed_scaling;
    kernels::RouterShape const shape{.num_tokens = static_cast<std::int32_t>(rows),
                                     .hidden = static_cast<std::int32_t>(dims.hidden),
                                     .num_experts = static_cast<std::int32_t>(dims.experts),
                                     .top_k = static_cast<std::int32_t>(dims.top_k)};
    GCMOE_ASSIGN_OR_RETURN(
        kernels::RouterRefResult const routing,
        kernels::router_ref({.x = all, .gate_weight = weights.router, .bias = weights.bias}, shape,
                            params));
    kernels::ExpertFfnOptions const options{
        .swiglu_limit = 0.0f,
        .weight_before_down = false,
        .activation_recipe = formats::ActivationRecipe::kExactFp32};
    auto const k = static_cast<std::size_t>(dims.top_k);
    std::vector<std::size_t> slots;
    std::vector<float> in;
    std::vector<float> y;
    for (std::size_t i = 0; i < weights.local_experts.size(); ++i) {
      slots.clear();
      for (std::size_t s = 0; s < rows * k; ++s) {
        if (routing.topk_ids[s] == weights.local_experts[i]) {
          slots.push_back(s);
        }
      }
      if (slots.empty()) {
        continue;
      }
      in.resize(slots.size() * hidden);
      for (std::size_t r = 0; r < slots.size(); ++r) {
        std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(slots[r] / k * hidden), hidden,
                    in.begin() + static_cast<std::ptrdiff_t>(r * hidden));
      }
      y.resize(in.size());
      GCMOE_RETURN_IF_ERROR(
          kernels::expert_ffn_ref(dense_expert(weights.experts[i]), options, in, {}, y));
      for (std::size_t r = 0; r < slots.size(); ++r) {
        float const w = routing.topk_weights[slots[r]];
        float* dst = sum.data() + slots[r] / k * hidden;
        float const* src = y.data() + r * hidden;
        for (std::size_t c = 0; c < hidden; ++c) {
          dst[c] += w * src[c];
        }
      }
    }
  }

  // 4. The group's sum; this rank's rows plus the shared expert.
  if (comm.world_size() > 1) {
    GCMOE_RETURN_IF_ERROR(comm.all_reduce_sum(sum));
  }
  std::copy_n(sum.begin() + static_cast<std::ptrdiff_t>(offset * hidden), mine * hidden,
              out.begin());
  if (weights.shared.has_value() && mine > 0) {
    std::vector<float> shared(mine * hidden);
    swiglu_mlp(*weights.shared, x, shared);
    for (std::size_t i = 0; i < shared.size(); ++i) {
      out[i] += shared[i];
    }
  }
  return Status();
}

}  // namespace gcmoe::model::glm
