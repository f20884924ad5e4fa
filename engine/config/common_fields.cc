#include "engine/config/common_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "engine/common/check.h"

namespace gcmoe::config {
namespace {

Status require_positive(JsonFields const& text, char const* key, std::int64_t value) {
  if (value <= 0) {
    return text.field_error(key, fmt::format("= {} must be positive", value));
  }
  return Status();
}

Status require_non_negative(JsonFields const& text, char const* key, std::int64_t value) {
  if (value < 0) {
    return text.field_error(key, fmt::format("= {} must not be negative", value));
  }
  return Status();
}

Status require_choice(JsonFields const& text, char const* key, std::string_view wanted) {
  GCMOE_ASSIGN_OR_RETURN(auto const value, text.get_optional_string(key));
  if (value && *value != wanted) {
    return text.field_error(key,
                            fmt::format("= '{}' is not supported (only '{}')", *value, wanted));
  }
  return Status();
}

}  // namespace

Status parse_common_fields(JsonFields const& text, ModelConfig& config) {
  GCMOE_ASSIGN_OR_RETURN(config.vocab_size, text.get_int("vocab_size"));
  GCMOE_ASSIGN_OR_RETURN(config.hidden_size, text.get_int("hidden_size"));
  GCMOE_ASSIGN_OR_RETURN(config.num_hidden_layers, text.get_int("num_hidden_layers"));
  GCMOE_ASSIGN_OR_RETURN(config.num_nextn_predict_layers,
                         text.get_int_or("num_nextn_predict_layers", 0));
  GCMOE_ASSIGN_OR_RETURN(config.num_attention_heads, text.get_int("num_attention_heads"));
  GCMOE_ASSIGN_OR_RETURN(config.rms_norm_eps, text.get_double("rms_norm_eps"));
  GCMOE_ASSIGN_OR_RETURN(config.tie_word_embeddings,
                         text.get_bool_or("tie_word_embeddings", false));

  MoeConfig& moe = config.moe;
  GCMOE_ASSIGN_OR_RETURN(moe.n_routed_experts, text.get_int("n_routed_experts"));
  GCMOE_ASSIGN_OR_RETURN(moe.num_experts_per_tok, text.get_int("num_experts_per_tok"));
  GCMOE_ASSIGN_OR_RETURN(moe.moe_intermediate_size, text.get_int("moe_intermediate_size"));
  GCMOE_ASSIGN_OR_RETURN(moe.n_shared_experts, text.get_int("n_shared_experts"));
  GCMOE_ASSIGN_OR_RETURN(moe.routed_scaling_factor, text.get_double("routed_scaling_factor"));
  GCMOE_ASSIGN_OR_RETURN(moe.norm_topk_prob, text.get_bool("norm_topk_prob"));
  GCMOE_ASSIGN_OR_RETURN(moe.n_group, text.get_int_or("n_group", 1));
  GCMOE_ASSIGN_OR_RETURN(moe.topk_group, text.get_int_or("topk_group", 1));
  if (text.has("swiglu_limit")) {
    GCMOE_ASSIGN_OR_RETURN(moe.swiglu_limit, text.get_double("swiglu_limit"));
  }
  GCMOE_ASSIGN_OR_RETURN(std::string const scoring, text.get_string("scoring_func"));
  if (scoring == "sqrtsoftplus") {
    moe.scoring_func = ScoringFunc::kSqrtSoftplus;
  } else if (scoring == "sigmoid") {
    moe.scoring_func = ScoringFunc::kSigmoid;
  } else {
    return text.field_error(
        "scoring_func", fmt::format("= '{}' is not supported (sqrtsoftplus, sigmoid)", scoring));
  }
  // The engine implements the aux-loss-free router (bias for selection only) and SwiGLU.
  GCMOE_RETURN_IF_ERROR(require_choice(text, "topk_method", "noaux_tc"));
  GCMOE_RETURN_IF_ERROR(require_choice(text, "hidden_act", "silu"));
  return Status();
}

Status validate_common_fields(JsonFields const& text, ModelConfig const& config) {
  MoeConfig const& moe = config.moe;
  GCMOE_RETURN_IF_ERROR(require_positive(text, "vocab_size", config.vocab_size));
  GCMOE_RETURN_IF_ERROR(require_positive(text, "hidden_size", config.hidden_size));
  GCMOE_RETURN_IF_ERROR(require_positive(text, "num_hidden_layers", config.num_hidden_layers));
  GCMOE_RETURN_IF_ERROR(require_positive(text, "num_attention_heads", config.num_attention_heads));
  GCMOE_RETURN_IF_ERROR(
      require_non_negative(text, "num_nextn_predict_layers", config.num_nextn_predict_layers));
  GCMOE_RETURN_IF_ERROR(require_positive(text, "n_routed_experts", moe.n_routed_experts));
  GCMOE_RETURN_IF_ERROR(require_positive(text, "num_experts_per_tok", moe.num_experts_per_tok));
  GCMOE_RETURN_IF_ERROR(require_positive(text, "moe_intermediate_size", moe.moe_intermediate_size));
  GCMOE_RETURN_IF_ERROR(require_non_negative(text, "n_shared_experts", moe.n_shared_experts));
  GCMOE_RETURN_IF_ERROR(require_positive(text, "n_group", moe.n_group));
  if (moe.num_experts_per_tok > moe.n_routed_experts) {
    return text.field_error("num_experts_per_tok",
                            fmt::format("= {} exceeds n_routed_experts = {}",
                                        moe.num_experts_per_tok, moe.n_routed_experts));
  }
  if (moe.n_routed_experts % moe.n_group != 0) {
    return text.field_error("n_group", fmt::format("= {} does not divide n_routed_experts = {}",
                                                   moe.n_group, moe.n_routed_experts));
  }
  if (moe.topk_group < 1 || moe.topk_group > moe.n_group ||
      moe.num_experts_per_tok > moe.topk_group * (moe.n_routed_experts / moe.n_group)) {
    return text.field_error(
        "topk_group", fmt::format("= {} must be in [1, n_group = {}] and leave room for top-{}",
                                  moe.topk_group, moe.n_group, moe.num_experts_per_tok));
  }
  if (!(moe.routed_scaling_factor > 0.0) || !std::isfinite(moe.routed_scaling_factor)) {
    return text.field_error("routed_scaling_factor",
                            fmt::format("= {} must be positive", moe.routed_scaling_factor));
  }
  if (!(config.rms_norm_eps > 0.0)) {
    return text.field_error("rms_norm_eps",
                            fmt::format("= {} must be positive", config.rms_norm_eps));
  }
  if (moe.swiglu_limit && !(*moe.swiglu_limit > 0.0)) {
    return text.field_error("swiglu_limit",
                            fmt::format("= {} must be positive", *moe.swiglu_limit));
  }
  if (config.first_dense_layers < 0 || config.first_dense_layers > config.num_hidden_layers) {
    return text.field_error("first_k_dense_replace",
                            fmt::format("= {} must be in [0, num_hidden_layers = {}]",
                                        config.first_dense_layers, config.num_hidden_layers));
  }
  if (config.first_dense_layers > 0 && config.dense_intermediate_size <= 0) {
    return text.field_error("intermediate_size",
                            "must be positive when first_k_dense_replace > 0 (dense MLP layers)");
  }
  if (config.expert_format.encoding == WeightEncoding::kMxfp4) {
    // MXFP4 packs two codes per byte and scales 32 K elements at once: both K dims of an expert
    // (hidden_size for w1/w3, moe_intermediate_size for w2) must divide into 32.
    if (config.hidden_size % 32 != 0) {
      return text.field_error("hidden_size", fmt::format("= {} is not a multiple of 32, as MXFP4 "
                                                         "experts need",
                                                         config.hidden_size));
    }
    if (moe.moe_intermediate_size % 32 != 0) {
      return text.field_error("moe_intermediate_size",
                              fmt::format("= {} is not a multiple of 32, as MXFP4 experts need",
                                          moe.moe_intermediate_size));
    }
  }
  return Status();
}

Status check_layer_ids(JsonFields const& fields, char const* key,
                       std::vector<std::int64_t> const& ids, std::int64_t layers) {
  for (std::int64_t const id : ids) {
    if (id < 0 || id >= layers) {
      return fields.field_error(key, fmt::format("holds layer {} outside [0, {})", id, layers));
    }
  }
  return Status();
}

}  // namespace gcmoe::config
