#pragma once
// The engine's map of a checkpoint: every tensor a family's executor reads, named as the release
// names it, with the dtype and shape the typed config implies. The family mappings
// (glm_moe_dsa_weights.h, deepseek_v4_weights.h, deepseek_v41_weights.h) build it from a
// ModelConfig; spec_check.h compares it with a checkpoint's headers and the weight loader streams
// the tensors it lists.
//
// Slots: inside a block, tensors are keyed by their official name with the block prefix
// stripped ("self_attn.q_a_proj", "attn.wq_a", "attn_norm.weight"), so an executor finds a
// family's weights by the names the reference code uses.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/checkpoint/dtype.h"
#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::model {

struct TensorSpec {
  std::string name;
  checkpoint::DType dtype = checkpoint::DType::kBf16;
  std::vector<std::int64_t> shape;

  std::int64_t bytes() const;
};

// Where a quantized weight's scale sits: `<prefix>.scale` (DeepSeek) or
// `<prefix>.weight_scale_inv` (GLM-5.2-FP8).
enum class ScaleNaming { kDotScale, kWeightScaleInv };

// A linear layer's weight, logically [out, in] (in = K), and its block-scale sibling.
struct LinearSpec {
  TensorSpec weight;
  std::optional<TensorSpec> scale;
  config::WeightFormat format;
  formats::MatrixDims dims;  // logical [out, in]; MXFP4 stores in / 2 bytes per row

  std::int64_t bytes() const;  // weight and scale
};

// `<prefix>.weight` of logical shape [out, in] stored in `format` (model-spec §3.1):
//   BF16   BF16 [out, in]
//   FP8    F8_E4M3 [out, in] + [ceil(out / Br), ceil(in / Bc)] F8_E8M0 or F32
//   MXFP4  I8 [out, in / 2] + F8_E8M0 [out, in / 32]
// INVALID_ARGUMENT naming the prefix for a non-positive shape, or K not a multiple of 32 (MXFP4).
StatusOr<LinearSpec> linear_spec(std::string const& prefix, std::int64_t out, std::int64_t in,
                                 config::WeightFormat const& format, ScaleNaming naming);

// gate [inter, hidden], up [inter, hidden], down [hidden, inter].
struct SwigluSpec {
  LinearSpec gate;
  LinearSpec up;
  LinearSpec down;

  std::int64_t bytes() const;
};

struct RouterSpec {
  TensorSpec weight;                  // BF16 [experts, hidden], computed in fp32
  std::optional<TensorSpec> bias;     // F32 [experts], selection only (kept fp32)
  std::optional<TensorSpec> bias_vl;  // V4.1: selection bias of image-span tokens
  std::optional<TensorSpec> tid2eid;  // V4 hash layers: I64 [vocab, top_k]
};

struct MoeSpec {
  std::string prefix;  // "model.layers.3.mlp", "layers.3.ffn" (as checkpoint inventory names it)
  RouterSpec router;
  std::vector<SwigluSpec> experts;  // routed, indexed by expert id
  std::optional<SwigluSpec> shared;
};

// A group of tensors keyed by slot (see the file comment).
struct TensorGroup {
  std::map<std::string, LinearSpec> linears;
  std::map<std::string, TensorSpec> tensors;
};

// One decoder block: a trunk layer or an MTP/DSpark stage.
struct BlockSpec {
  std::string prefix;      // "model.layers.3.", "layers.3.", "mtp.0."
  std::int64_t index = 0;  // layer index, or stage index for MTP/DSpark
  std::map<std::string, TensorSpec> norms;
  TensorGroup attention;  // projections, norms and sinks, compressor, indexer
  TensorGroup extra;      // hyper-connection mixers, Engram, MTP input projections and heads
  std::optional<SwigluSpec> dense_mlp;
  std::optional<MoeSpec> moe;
};

struct ModelSpec {
  config::ModelFamily family = config::ModelFamily::kGlmMoeDsa;
  TensorSpec embed;
  TensorSpec final_norm;
  TensorSpec lm_head;
  TensorGroup top_extra;  // V4: hc_head_{fn,base,scale}
  std::vector<BlockSpec> layers;
  std::vector<BlockSpec> mtp;  // listed for completeness; serving may skip them
};

// Calls `visit` for every tensor of `block` except the routed experts: the replicated part.
void for_each_replicated(BlockSpec const& block,
                         std::function<void(TensorSpec const&)> const& visit);
// Calls `visit` for the three weights and their scales.
void for_each_tensor(SwigluSpec const& mlp, std::function<void(TensorSpec const&)> const& visit);
// Every tensor of the model: top level, layers, and the MTP stages when `with_mtp`.
void for_each_tensor(ModelSpec const& spec, bool with_mtp,
                     std::function<void(TensorSpec const&)> const& visit);

// "F8_E4M3 [2048, 6144]".
std::string describe(TensorSpec const& tensor);

}  // namespace gcmoe::model
