#pragma once
// The engine's view of a model's config.json: what every family shares (dimensions, MoE routing,
// weight storage formats) plus the fields only one family has. Produced and validated by
// parse_model_config (parse_model_config.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gcmoe::config {

enum class ModelFamily {
  kDeepseekV4,   // model_type deepseek_v4 (DeepSeek-V4-Flash)
  kDeepseekV41,  // model_type deepseek_v41 (DeepSeek-V4.1-Flash; text model under text_config)
  kGlmMoeDsa,    // model_type glm_moe_dsa (GLM-5.2)
};

enum class ScoringFunc {
  kSqrtSoftplus,  // DeepSeek V4/V4.1: sqrt(softplus(logit))
  kSigmoid,       // GLM-5.2
};

enum class WeightEncoding {
  kBf16,     // unquantized
  kFp8E4m3,  // one byte per weight, OCP e4m3fn
  kMxfp4,    // two e2m1 codes per byte (low nibble first along K), dtype I8 on disk
};

enum class ScaleKind {
  kNone,
  kE8m0,  // one byte per block, value 2^(byte-127): `<name>.scale` F8_E8M0
  kF32,   // float per block, multiplied in: `weight_scale_inv` (GLM) or `.scale` F32 (V4-Base)
};

// How one class of weights is stored. A block scale covers block_rows (output dim) ×
// block_cols (K) weights; MXFP4 is 1 × 32. Both are 0 without scales.
struct WeightFormat {
  WeightEncoding encoding = WeightEncoding::kBf16;
  ScaleKind scale = ScaleKind::kNone;
  std::int64_t block_rows = 0;
  std::int64_t block_cols = 0;
};

struct MoeConfig {
  std::int64_t n_routed_experts = 0;
  std::int64_t num_experts_per_tok = 0;  // top-k
  std::int64_t moe_intermediate_size = 0;
  std::int64_t n_shared_experts = 0;
  ScoringFunc scoring_func = ScoringFunc::kSigmoid;
  double routed_scaling_factor = 1.0;
  bool norm_topk_prob = true;
  std::optional<double> swiglu_limit;  // clamp of the SwiGLU inputs (V4/V4.1); GLM has none
  std::int64_t num_hash_layers = 0;    // leading MoE layers routed by token id (V4)
  std::int64_t n_group = 1;            // group-limited routing; 1 = no grouping
  std::int64_t topk_group = 1;
};

// Fields of DeepSeek V4 that V4.1 keeps.
struct DeepseekV4Extras {
  std::int64_t head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t q_lora_rank = 0;
  std::int64_t o_lora_rank = 0;
  std::int64_t o_groups = 0;
  std::int64_t sliding_window = 0;
  std::int64_t index_n_heads = 0;
  std::int64_t index_head_dim = 0;
  std::int64_t index_topk = 0;
  std::vector<std::int64_t> compress_ratios;  // per layer, then the MTP/DSpark entries
  std::int64_t hc_mult = 0;                   // hyper-connection streams
  std::int64_t hc_sinkhorn_iters = 0;
  double hc_eps = 0.0;
  double rope_theta = 0.0;
  double compress_rope_theta = 0.0;
};

struct DeepseekV41Extras {
  DeepseekV4Extras v4;
  std::vector<std::int64_t> kv_source_layer_ids;
  std::vector<std::int64_t> index_source_layer_ids;
  std::vector<std::int64_t> engram_layer_ids;
  std::vector<std::int64_t> dspark_target_layer_ids;
  std::int64_t dspark_n_routed_experts = 0;
  std::int64_t dspark_num_experts_per_tok = 0;
  double gate_temp = 1.0;
};

struct GlmMoeDsaExtras {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  std::int64_t index_n_heads = 0;
  std::int64_t index_head_dim = 0;
  std::int64_t index_topk = 0;
  std::int64_t index_topk_freq = 1;         // IndexShare: a fresh indexer top-k every k-th layer
  std::int64_t index_skip_topk_offset = 0;  // ...counted from this layer
  double rope_theta = 0.0;

  // Whether `layer` runs its own indexer ("full") rather than reusing the previous top-k.
  bool indexer_full(std::int64_t layer) const;
};

using FamilyExtras = std::variant<DeepseekV4Extras, DeepseekV41Extras, GlmMoeDsaExtras>;

struct ModelConfig {
  ModelFamily family = ModelFamily::kDeepseekV4;
  std::int64_t vocab_size = 0;
  std::int64_t hidden_size = 0;
  std::int64_t num_hidden_layers = 0;         // trunk layers, MTP/DSpark stages excluded
  std::int64_t num_nextn_predict_layers = 0;  // MTP (GLM, V4) or DSpark stages (V4.1)
  std::int64_t num_attention_heads = 0;
  std::int64_t first_dense_layers = 0;       // leading layers with a dense MLP instead of MoE
  std::int64_t dense_intermediate_size = 0;  // hidden dim of those dense MLPs (0 without any)
  double rms_norm_eps = 0.0;
  bool tie_word_embeddings = false;
  MoeConfig moe;
  WeightFormat dense_format;   // attention, shared experts, dense MLPs
  WeightFormat expert_format;  // routed experts
  FamilyExtras extras;

  bool is_moe_layer(std::int64_t layer) const { return layer >= first_dense_layers; }
  std::int64_t moe_layer_count() const { return num_hidden_layers - first_dense_layers; }
};

// "deepseek_v4", "deepseek_v41", "glm_moe_dsa": the config.json model_type.
std::string_view model_family_name(ModelFamily family);
std::string_view scoring_func_name(ScoringFunc scoring);
// "FP8 e4m3, 128x128 blocks, f32 scales" / "MXFP4 (e2m1), 1x32 blocks, e8m0 scales" / "BF16".
std::string describe(WeightFormat const& format);

}  // namespace gcmoe::config
