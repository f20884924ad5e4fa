#pragma once
// The hook for kernel-specific weight layouts: the loader hands each routed expert it loads (its
// gate, up and down weights and scales, as views into the checkpoint mapping) to a transform,
// which writes the bytes the expert GEMM wants; those land at the destination instead of the
// release tensors. Without a transform the expert's tensors load as stored.
//
// Concrete transforms: GLM-5.2 FP8 (glm_fp8_expert_transform.h). DeepSeek MXFP4 experts have no
// kernel yet and load raw (release layout) until the FP8×MXFP4 GEMM defines its layout.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "engine/checkpoint/checkpoint.h"
#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model {

// One routed expert as the checkpoint stores it; a scale view is empty for unscaled weights.
struct ExpertTensorViews {
  checkpoint::TensorView gate;
  checkpoint::TensorView gate_scale;
  checkpoint::TensorView up;
  checkpoint::TensorView up_scale;
  checkpoint::TensorView down;
  checkpoint::TensorView down_scale;
};

class ExpertLayoutTransform {
 public:
  virtual ~ExpertLayoutTransform() = default;

  // Short name for logs and benchmark JSON ("glm_fp8_wgmma").
  virtual std::string_view name() const = 0;

  // Bytes one packed expert of this shape takes; INVALID_ARGUMENT naming the tensor when the
  // kernel cannot take the shape or format. Called once per MoE block before loading.
  virtual StatusOr<std::int64_t> packed_bytes(SwigluSpec const& expert) const = 0;

  // Writes the packed expert into `out` (packed_bytes(spec) bytes). The loader calls it from
  // several threads at once, so it must not touch shared mutable state.
  virtual Status pack(SwigluSpec const& spec, ExpertTensorViews const& expert,
                      std::span<std::byte> out) const = 0;
};

// The transform the kernels of `config`'s expert format need, or nullptr where experts stay in
// the release layout (MXFP4 for now).
std::unique_ptr<ExpertLayoutTransform> default_expert_transform(config::ModelConfig const& config);

}  // namespace gcmoe::model
