#include "engine/tiny/tiny_config.h"

namespace gcmoe::tiny {
namespace {

using nlohmann::json;

constexpr std::int64_t kVocab = 1024;
constexpr std::int64_t kHidden = 256;
constexpr std::int64_t kExperts = 16;
constexpr std::int64_t kTopK = 4;

bool is_prime(std::int64_t const n) {
  if (n < 2) {
    return false;
  }
  for (std::int64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) {
      return false;
    }
  }
  return true;
}

json yarn_rope_scaling(char const* type_key) {
  return {{type_key, "yarn"},
          {"factor", 16},
          {"original_max_position_embeddings", 65536},
          {"beta_fast", 32},
          {"beta_slow", 1}};
}

// GLM-5.2-FP8 (model-spec §1.3): layer 0 dense, 1-3 MoE, layer 4 MTP; IndexShare keeps the
// release's freq 4 / offset 3, so layers 0-2 (and the MTP layer) run the indexer, layer 3 reuses.
json glm_moe_dsa() {
  return {
      {"architectures", {"GlmMoeDsaForCausalLM"}},
      {"model_type", "glm_moe_dsa"},
      {"dtype", "bfloat16"},
      {"vocab_size", kVocab},
      {"hidden_size", kHidden},
      {"num_hidden_layers", 4},
      {"num_nextn_predict_layers", 1},
      {"num_attention_heads", 4},
      {"num_key_value_heads", 4},
      {"head_dim", 32},
      {"q_lora_rank", 128},
      {"kv_lora_rank", 64},
      {"qk_nope_head_dim", 32},
      {"qk_rope_head_dim", 16},
      {"qk_head_dim", 48},
      {"v_head_dim", 32},
      {"intermediate_size", 512},
      {"first_k_dense_replace", 1},
      {"moe_layer_freq", 1},
      {"mlp_layer_types", {"dense", "sparse", "sparse", "sparse"}},
      {"n_routed_experts", kExperts},
      {"n_shared_experts", 1},
      {"num_experts_per_tok", kTopK},
      {"moe_intermediate_size", 128},
      {"scoring_func", "sigmoid"},
      {"topk_method", "noaux_tc"},
      {"norm_topk_prob", true},
      {"routed_scaling_factor", 2.5},
      {"n_group", 1},
      {"topk_group", 1},
      {"moe_router_dtype", "float32"},
      {"index_n_heads", 4},
      {"index_head_dim", 32},
      {"index_topk", 64},
      {"index_topk_freq", 4},
      {"index_skip_topk_offset", 3},
      {"index_topk_pattern", nullptr},
      {"index_share_for_mtp_iteration", true},
      {"indexer_rope_interleave", true},
      {"rope_interleave", true},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 8000000.0}}},
      {"max_position_embeddings", 8192},
      {"rms_norm_eps", 1e-5},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"hidden_act", "silu"},
      {"initializer_range", 0.02},
      {"tie_word_embeddings", false},
      {"pretraining_tp", 1},
      {"use_cache", true},
      {"eos_token_id", {1000, 1007, 1009}},
      {"pad_token_id", 1000},
      {"quantization_config",
       {{"quant_method", "fp8"},
        {"fmt", "e4m3"},
        {"activation_scheme", "dynamic"},
        {"weight_block_size", {128, 128}},
        {"modules_to_not_convert", {"model.embed_tokens"}}}},
  };
}

// Keys V4 and V4.1 text models share (model-spec §1.1-1.2).
json deepseek_text_common() {
  return {
      {"vocab_size", kVocab},
      {"hidden_size", kHidden},
      {"num_attention_heads", 4},
      {"num_key_value_heads", 1},
      {"head_dim", 64},
      {"qk_rope_head_dim", 16},
      {"o_lora_rank", 64},
      {"o_groups", 2},
      {"n_routed_experts", kExperts},
      {"n_shared_experts", 1},
      {"num_experts_per_tok", kTopK},
      {"scoring_func", "sqrtsoftplus"},
      {"topk_method", "noaux_tc"},
      {"norm_topk_prob", true},
      {"routed_scaling_factor", 1.5},
      {"swiglu_limit", 10.0},
      {"hidden_act", "silu"},
      {"sliding_window", 128},
      {"index_n_heads", 4},
      {"index_head_dim", 32},
      {"index_topk", 16},
      {"rope_theta", 10000.0},
      {"compress_rope_theta", 160000.0},
      {"max_position_embeddings", 1048576},
      {"hc_mult", 4},
      {"hc_sinkhorn_iters", 20},
      {"hc_eps", 1e-6},
      {"tie_word_embeddings", false},
      {"initializer_range", 0.02},
  };
}

// DeepSeek-V4-Flash: 5 layers: 0-1 window-only and hash-routed, 2 and 4 CSA (ratio 4, indexer),
// 3 HCA (ratio 128); one MTP stage (ratio 0). Block scales 128×128 e8m0, MXFP4 experts.
json deepseek_v4() {
  json config = deepseek_text_common();
  config.update(json{
      {"architectures", {"DeepseekV4ForCausalLM"}},
      {"model_type", "deepseek_v4"},
      {"torch_dtype", "bfloat16"},
      {"num_hidden_layers", 5},
      {"num_nextn_predict_layers", 1},
      {"q_lora_rank", 128},
      {"moe_intermediate_size", 128},
      {"num_hash_layers", 2},
      {"expert_dtype", "fp4"},
      {"compress_ratios", {0, 0, 4, 128, 4, 0}},
      {"rope_scaling", yarn_rope_scaling("type")},
      {"rms_norm_eps", 1e-6},
      {"attention_bias", false},
      {"bos_token_id", 0},
      {"eos_token_id", 1},
      {"quantization_config",
       {{"quant_method", "fp8"},
        {"fmt", "e4m3"},
        {"activation_scheme", "dynamic"},
        {"scale_fmt", "ue8m0"},
        {"weight_block_size", {128, 128}}}},
  });
  return config;
}

// DeepSeek-V4.1-Flash: 6 layers: 0-1 window-only, 2-3 encoder (ratio 2, kv source 2), 4-5
// decoder (ratio 1, kv source 4); index sources 2, 4, 5; Engram on layer 1; 3 DSpark stages.
// 32×32 e8m0 block scales; moe_intermediate_size 96 exercises partial 128-wide tiles.
json deepseek_v41() {
  std::int64_t const engram_vocab = 128;
  std::int64_t const engram_heads = 8;
  std::int64_t const engram_max_ngram = 4;
  json text = deepseek_text_common();
  text.update(json{
      {"model_type", "deepseek_v41_text"},
      {"num_hidden_layers", 6},
      {"num_nextn_predict_layers", 3},
      {"q_lora_rank", 160},
      {"moe_intermediate_size", 96},
      {"rms_norm_eps", 1e-20},
      {"rope_scaling", yarn_rope_scaling("rope_type")},
      {"compress_ratios", {0, 0, 2, 2, 1, 1, 0, 0, 0}},
      {"kv_source_layer_ids", {2, 4}},
      {"index_source_layer_ids", {2, 4, 5}},
      {"candidate_source_layer_id", 4},
      {"candidate_topk_blocks", 16},
      {"candidate_block_size", 8},
      {"engram_layer_ids", {1}},
      {"engram_num_embeddings",
       engram_table_rows(engram_vocab, (engram_max_ngram - 1) * engram_heads, 1)},
      {"engram_max_ngram_size", engram_max_ngram},
      {"engram_vocab_size", engram_vocab},
      {"engram_n_heads", engram_heads},
      {"engram_head_dim", 32},
      {"engram_pad_token_id", 2},
      {"engram_compressed_vocab_size", 1000},
      {"dspark_block_size", 5},
      {"dspark_noise_token_id", 1020},
      {"dspark_target_layer_ids", {3, 4, 5}},
      {"dspark_markov_rank", 32},
      {"dspark_n_routed_experts", 8},
      {"dspark_num_experts_per_tok", 2},
  });
  return {
      {"architectures", {"DeepseekV41ForCausalLM"}},
      {"model_type", "deepseek_v41"},
      {"dtype", "bfloat16"},
      {"bos_token_id", 0},
      {"eos_token_id", 1},
      {"pad_token_id", 2},
      {"image_token_id", 1016},
      {"quantization_config",
       {{"quant_method", "fp8"},
        {"activation_scheme", "dynamic"},
        {"weight_block_size", {32, 32}},
        {"scale_fmt", "ue8m0"},
        {"expert_dtype", "fp4"}}},
      {"text_config", text},
      // Kept for the config's shape; the tiny checkpoint holds no vision tensors.
      {"vision_config",
       {{"model_type", "deepseek_v41_vision"},
        {"num_hidden_layers", 2},
        {"hidden_size", 64},
        {"num_attention_heads", 4},
        {"intermediate_size", 128},
        {"patch_size", 14},
        {"rope_theta", 10000.0},
        {"downsample_ratio", 3},
        {"max_image_tokens", 64},
        {"min_pixels", 295936}}},
  };
}

}  // namespace

nlohmann::json tiny_config_json(config::ModelFamily const family) {
  switch (family) {
    case config::ModelFamily::kGlmMoeDsa:
      return glm_moe_dsa();
    case config::ModelFamily::kDeepseekV4:
      return deepseek_v4();
    case config::ModelFamily::kDeepseekV41:
      return deepseek_v41();
  }
  return {};
}

std::vector<std::int64_t> engram_table_rows(std::int64_t const vocab_size,
                                            std::int64_t const lookups, std::int64_t const layers) {
  std::vector<std::int64_t> rows;
  std::int64_t prime = vocab_size;
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    std::int64_t total = 0;
    for (std::int64_t k = 0; k < lookups; ++k) {
      do {
        ++prime;
      } while (!is_prime(prime));
      total += prime;
    }
    rows.push_back(total);
  }
  return rows;
}

}  // namespace gcmoe::tiny
