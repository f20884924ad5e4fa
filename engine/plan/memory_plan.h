#pragma once
// `gcmoe plan`: how one rank's GPU memory is spent when serving a model on N GPUs, and the serve
// limits that follow (the numbers `gcmoe serve` takes: --kv-blocks, --kv-block-size,
// --max-running, --max-batch-tokens, --max-waiting).
//
//   budget      = GPU memory × gpu_memory_utilization (vLLM's knob, default 0.90)
//   kv          = budget − weights − activations − runtime reserve
//   max_running = min(cap, max_batch_tokens, kv / (fixed state + blocks of context_tokens))
//   kv_blocks   = (kv − max_running × fixed state) / (block_size × KV bytes per token)
//
// Activations are sized for the worst step: max_batch_tokens tokens per rank. See
// activation_bytes() for the terms. Everything is per rank; ranks are symmetric.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/model/weights/weight_spec.h"
#include "engine/plan/gpu_catalog.h"
#include "engine/plan/kv_footprint.h"
#include "engine/plan/rank_weights.h"

namespace gcmoe::plan {

struct PlanOptions {
  std::int64_t ranks = 8;
  GpuSpec gpu;
  double gpu_memory_utilization = 0.90;
  // CUDA context, NCCL and cuBLAS workspaces, allocator slack: not visible to the planner.
  std::int64_t runtime_reserve_bytes = std::int64_t{3} << 30;
  std::int32_t kv_block_size = 16;       // token positions per block (the scheduler's)
  std::int32_t max_batch_tokens = 2048;  // tokens per step per rank
  std::int32_t max_running_cap = 256;    // never plan more running requests than this
  std::int64_t context_tokens = 8192;    // prompt + max_new_tokens a typical request reserves
  bool with_mtp = false;
};

struct ActivationTerms {
  std::int64_t hidden_bytes = 0;     // residual streams and per-layer hidden buffers (fp32)
  std::int64_t attention_bytes = 0;  // query/output heads of the batch (bf16)
  std::int64_t moe_bytes = 0;        // expert-parallel buffers (ep_symmetric_layout.h) + combine
  std::int64_t logits_bytes = 0;     // fp32 logits of the sampled positions

  std::int64_t total() const { return hidden_bytes + attention_bytes + moe_bytes + logits_bytes; }
};

ActivationTerms activation_bytes(config::ModelConfig const& config, PlanOptions const& options);

struct MemoryPlan {
  std::string model_type;
  PlanOptions options;
  RankWeights weights;  // rank 0 (every rank holds the same bytes: E/N experts each)
  KvFootprint kv;
  ActivationTerms activations;
  std::int64_t budget_bytes = 0;
  std::int64_t kv_budget_bytes = 0;
  std::int64_t kv_block_bytes = 0;
  std::int32_t kv_blocks = 0;
  std::int32_t max_running_requests = 0;
  std::int32_t max_waiting_requests = 0;  // 2 × max_running: a queue one batch deep
  std::int64_t kv_tokens() const { return std::int64_t{kv_blocks} * options.kv_block_size; }
};

// FAILED_PRECONDITION naming the shortfall when the weights and activations leave no room for
// one request of context_tokens; INVALID_ARGUMENT for bad options.
StatusOr<MemoryPlan> make_memory_plan(config::ModelConfig const& config,
                                      model::ModelSpec const& spec, PlanOptions const& options);

// The preset form (configs/serving/*.json): the inputs, the per-rank bytes and the serve flags.
nlohmann::json plan_json(MemoryPlan const& plan);

// `gcmoe serve` flags that apply the plan.
std::string serve_flags(MemoryPlan const& plan);

// A human-readable table.
std::string plan_text(MemoryPlan const& plan);

}  // namespace gcmoe::plan
