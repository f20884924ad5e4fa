#pragma once
// GLM-5.2 (`glm_moe_dsa`) as a runtime::StepModel on the CPU backend, fp32 throughout: embedding,
// per layer [RMSNorm → MLA attention (DSA indexer on "full" layers, the previous selection on
// "shared" ones) → residual → RMSNorm → dense SwiGLU or expert-parallel MoE → residual], final
// RMSNorm, lm_head on the rows that sample. Prefill chunks and decodes of different sequences mix
// freely in one step; the KV cache (kv_cache.h) lives here, addressed through the batch's block
// tables. MTP layers are not run.

#include <memory>
#include <vector>

#include "engine/common/status.h"
#include "engine/model/glm/glm_dims.h"
#include "engine/model/glm/glm_weights.h"
#include "engine/model/glm/kv_cache.h"
#include "engine/model/glm/rope.h"
#include "engine/model/glm/token_batch.h"
#include "engine/runtime/communicator.h"
#include "engine/runtime/step_model.h"

namespace gcmoe::model::glm {

class GlmStepModel final : public runtime::StepModel {
 public:
  // `comm` must outlive the model; its rank's expert slice is what `weights` holds.
  GlmStepModel(GlmDims dims, GlmWeights weights, std::unique_ptr<KvCache> cache,
               std::int32_t max_batch_tokens, runtime::Communicator& comm);

  runtime::StepModelInfo const& info() const override { return info_; }

  // INVALID_ARGUMENT for a bad batch (token id ≥ vocab, position past max_context, a block table
  // too short or naming a block outside the cache, sizes that disagree); with several ranks the
  // rank still joins every MoE exchange with zero tokens first, so the group stays in lockstep.
  Status step(runtime::StepBatch const& batch, std::vector<float>& logits) override;

 private:
  Status forward(TokenBatch const& batch, std::vector<float>& logits);

  GlmDims dims_;
  GlmWeights weights_;
  std::unique_ptr<KvCache> cache_;
  BatchLimits limits_;
  Rope rope_;
  runtime::Communicator& comm_;
  runtime::StepModelInfo info_;
};

}  // namespace gcmoe::model::glm
