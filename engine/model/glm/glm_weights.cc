#include "engine/model/glm/glm_weights.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>

#include "engine/common/check.h"

namespace gcmoe::model::glm {
namespace {

template <typename T>
StatusOr<T const*> slot(std::map<std::string, T> const& group, std::string const& name,
                        std::string const& prefix) {
  auto const it = group.find(name);
  if (it == group.end()) {
    return data_loss_error(fmt::format("the weight map of block '{}' has no '{}'", prefix, name));
  }
  return &it->second;
}

StatusOr<SwigluWeights> read_swiglu(WeightReader const& reader, SwigluSpec const& spec) {
  SwigluWeights w;
  GCMOE_ASSIGN_OR_RETURN(w.gate, reader.linear(spec.gate));
  GCMOE_ASSIGN_OR_RETURN(w.up, reader.linear(spec.up));
  GCMOE_ASSIGN_OR_RETURN(w.down, reader.linear(spec.down));
  return w;
}

StatusOr<AttentionWeights> read_attention(WeightReader const& reader, BlockSpec const& block,
                                          bool const indexer) {
  TensorGroup const& g = block.attention;
  AttentionWeights w;
  std::pair<char const*, DenseLinear*> const linears[] = {{"self_attn.q_a_proj", &w.q_a},
                                                          {"self_attn.q_b_proj", &w.q_b},
                                                          {"self_attn.kv_a_proj_with_mqa", &w.kv_a},
                                                          {"self_attn.kv_b_proj", &w.kv_b},
                                                          {"self_attn.o_proj", &w.o}};
  for (auto const& [name, dest] : linears) {
    GCMOE_ASSIGN_OR_RETURN(LinearSpec const* spec, slot(g.linears, name, block.prefix));
    GCMOE_ASSIGN_OR_RETURN(*dest, reader.linear(*spec));
  }
  GCMOE_ASSIGN_OR_RETURN(TensorSpec const* q_norm,
                         slot(g.tensors, "self_attn.q_a_layernorm.weight", block.prefix));
  GCMOE_ASSIGN_OR_RETURN(w.q_a_norm, reader.tensor(*q_norm));
  GCMOE_ASSIGN_OR_RETURN(TensorSpec const* kv_norm,
                         slot(g.tensors, "self_attn.kv_a_layernorm.weight", block.prefix));
  GCMOE_ASSIGN_OR_RETURN(w.kv_a_norm, reader.tensor(*kv_norm));
  if (!indexer) {
    return w;
  }
  IndexerWeights& ix = w.indexer.emplace();
  GCMOE_ASSIGN_OR_RETURN(LinearSpec const* wq_b,
                         slot(g.linears, "self_attn.indexer.wq_b", block.prefix));
  GCMOE_ASSIGN_OR_RETURN(ix.wq_b, reader.linear(*wq_b));
  GCMOE_ASSIGN_OR_RETURN(LinearSpec const* wk,
                         slot(g.linears, "self_attn.indexer.wk", block.prefix));
  GCMOE_ASSIGN_OR_RETURN(ix.wk, reader.linear(*wk));
  GCMOE_ASSIGN_OR_RETURN(TensorSpec const* proj,
                         slot(g.tensors, "self_attn.indexer.weights_proj.weight", block.prefix));
  GCMOE_ASSIGN_OR_RETURN(ix.weights_proj.w, reader.tensor(*proj));
  ix.weights_proj.out = proj->shape.at(0);
  ix.weights_proj.in = proj->shape.at(1);
  GCMOE_ASSIGN_OR_RETURN(TensorSpec const* kw,
                         slot(g.tensors, "self_attn.indexer.k_norm.weight", block.prefix));
  GCMOE_ASSIGN_OR_RETURN(ix.k_norm_weight, reader.tensor(*kw));
  GCMOE_ASSIGN_OR_RETURN(TensorSpec const* kb,
                         slot(g.tensors, "self_attn.indexer.k_norm.bias", block.prefix));
  GCMOE_ASSIGN_OR_RETURN(ix.k_norm_bias, reader.tensor(*kb));
  return w;
}

StatusOr<MoeWeights> read_moe(WeightReader const& reader, LoadedWeights const& loaded,
                              MoeSpec const& spec) {
  MoeWeights w;
  GCMOE_ASSIGN_OR_RETURN(w.router, reader.tensor(spec.router.weight));
  GCMOE_CHECK_ARG(spec.router.bias.has_value(), "MoE block '{}' has no correction bias",
                  spec.prefix);
  GCMOE_ASSIGN_OR_RETURN(w.bias, reader.tensor(*spec.router.bias));
  LocalExpertBlock const* local = nullptr;
  for (LocalExpertBlock const& b : loaded.expert_blocks()) {
    if (b.prefix == spec.prefix) {
      local = &b;
    }
  }
  if (local == nullptr) {
    return data_loss_error(fmt::format("no routed experts of '{}' were loaded", spec.prefix));
  }
  GCMOE_CHECK_ARG(local->packed.empty(),
                  "the experts of '{}' were packed by a layout transform; the CPU step reads them "
                  "as stored (load with no transform)",
                  spec.prefix);
  for (std::int64_t const e : local->experts) {
    GCMOE_CHECK_INTERNAL(e >= 0 && e < static_cast<std::int64_t>(spec.experts.size()),
                         "expert {} of '{}' is out of range", e, spec.prefix);
    GCMOE_ASSIGN_OR_RETURN(SwigluWeights expert,
                           read_swiglu(reader, spec.experts[static_cast<std::size_t>(e)]));
    w.local_experts.push_back(static_cast<std::int32_t>(e));
    w.experts.push_back(std::move(expert));
  }
  if (spec.shared.has_value()) {
    GCMOE_ASSIGN_OR_RETURN(w.shared, read_swiglu(reader, *spec.shared));
  }
  return w;
}

}  // namespace

StatusOr<GlmWeights> read_glm_weights(LoadedWeights const& loaded, ModelSpec const& spec,
                                      GlmDims const& dims) {
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(spec.layers.size()) == dims.layers,
                  "the weight map has {} layers, the config {}", spec.layers.size(), dims.layers);
  WeightReader const reader(loaded);
  GlmWeights w;
  GCMOE_ASSIGN_OR_RETURN(w.embed, reader.tensor(spec.embed));
  GCMOE_ASSIGN_OR_RETURN(w.final_norm, reader.tensor(spec.final_norm));
  GCMOE_ASSIGN_OR_RETURN(w.lm_head.w, reader.tensor(spec.lm_head));
  w.lm_head.out = dims.vocab;
  w.lm_head.in = dims.hidden;
  for (std::int64_t layer = 0; layer < dims.layers; ++layer) {
    BlockSpec const& block = spec.layers[static_cast<std::size_t>(layer)];
    LayerWeights lw;
    GCMOE_ASSIGN_OR_RETURN(TensorSpec const* in_norm,
                           slot(block.norms, "input_layernorm.weight", block.prefix));
    GCMOE_ASSIGN_OR_RETURN(lw.input_norm, reader.tensor(*in_norm));
    GCMOE_ASSIGN_OR_RETURN(TensorSpec const* post_norm,
                           slot(block.norms, "post_attention_layernorm.weight", block.prefix));
    GCMOE_ASSIGN_OR_RETURN(lw.post_attention_norm, reader.tensor(*post_norm));
    GCMOE_ASSIGN_OR_RETURN(
        lw.attention,
        read_attention(reader, block, dims.indexer_full[static_cast<std::size_t>(layer)]));
    if (dims.is_moe(layer)) {
      GCMOE_CHECK_ARG(block.moe.has_value(), "layer {} should be MoE", layer);
      GCMOE_ASSIGN_OR_RETURN(lw.moe, read_moe(reader, loaded, *block.moe));
    } else {
      GCMOE_CHECK_ARG(block.dense_mlp.has_value(), "layer {} should have a dense MLP", layer);
      GCMOE_ASSIGN_OR_RETURN(lw.dense, read_swiglu(reader, *block.dense_mlp));
    }
    w.layers.push_back(std::move(lw));
  }
  return w;
}

}  // namespace gcmoe::model::glm
