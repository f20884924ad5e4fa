#include "engine/plan/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

#include "engine/common/check.h"
#include "kernels/moe/ep_symmetric_layout.h"

namespace gcmoe::plan {
namespace {

// fp32 hidden buffers live per token besides the residual streams: attention norm output,
// attention output, MoE norm output, MoE output and two scratch buffers.
constexpr std::int64_t kHiddenWorkBuffers = 6;

std::int64_t residual_streams(config::ModelConfig const& c) {
  if (auto const* v4 = std::get_if<config::DeepseekV4Extras>(&c.extras)) {
    return std::max<std::int64_t>(v4->hc_mult, 1);
  }
  if (auto const* v41 = std::get_if<config::DeepseekV41Extras>(&c.extras)) {
    return std::max<std::int64_t>(v41->v4.hc_mult, 1);
  }
  return 1;
}

// Query (and output) values per head in the decode form: GLM's absorbed MQA works in the
// 512+64 latent; DeepSeek V4/V4.1 heads are head_dim wide.
std::int64_t query_head_values(config::ModelConfig const& c) {
  if (auto const* glm = std::get_if<config::GlmMoeDsaExtras>(&c.extras)) {
    return glm->kv_lora_rank + glm->qk_rope_head_dim;
  }
  if (auto const* v4 = std::get_if<config::DeepseekV4Extras>(&c.extras)) {
    return v4->head_dim;
  }
  return std::get<config::DeepseekV41Extras>(c.extras).v4.head_dim;
}

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / static_cast<double>(1LL << 30));
}

}  // namespace

ActivationTerms activation_bytes(config::ModelConfig const& c, PlanOptions const& options) {
  std::int64_t const tokens = options.max_batch_tokens;
  ActivationTerms terms;
  terms.hidden_bytes = tokens * c.hidden_size * 4 * (residual_streams(c) + kHiddenWorkBuffers);
  terms.attention_bytes = tokens * c.num_attention_heads * query_head_values(c) * 2 * 2;
  if (c.moe.n_routed_experts > 0 && c.moe_layer_count() > 0) {
    // The expert-parallel buffers as built (kernels/moe/ep_symmetric_layout.h): every rank may
    // send each of its tokens to min(top-k, local experts) experts here, receive rows double-
    // buffered by step parity with their scales and flags, the shared expert's rows, bf16 expert
    // outputs and the SwiGLU rows; one set serves every layer (layers run one after another).
    kernels::MoeLayerConfig moe;
    moe.hidden = static_cast<std::int32_t>(c.hidden_size);
    moe.intermediate = static_cast<std::int32_t>(c.moe.moe_intermediate_size);
    moe.num_experts = static_cast<std::int32_t>(c.moe.n_routed_experts);
    moe.top_k = static_cast<std::int32_t>(c.moe.num_experts_per_tok);
    std::int64_t const combine = tokens * c.moe.num_experts_per_tok * c.hidden_size * 2;
    terms.moe_bytes =
        kernels::ep_rank_device_bytes(moe, static_cast<int>(tokens),
                                      static_cast<int>(std::max<std::int64_t>(options.ranks, 1))) +
        combine;
  }
  terms.logits_bytes = std::int64_t{options.max_running_cap} * c.vocab_size * 4;
  return terms;
}

StatusOr<MemoryPlan> make_memory_plan(config::ModelConfig const& config,
                                      model::ModelSpec const& spec, PlanOptions const& options) {
  GCMOE_CHECK_ARG(options.ranks >= 1, "--ranks must be >= 1");
  GCMOE_CHECK_ARG(options.gpu.memory_bytes > 0, "GPU memory must be > 0");
  GCMOE_CHECK_ARG(options.gpu_memory_utilization > 0.0 && options.gpu_memory_utilization <= 1.0,
                  "--gpu-memory-utilization must be in (0, 1], got {}",
                  options.gpu_memory_utilization);
  GCMOE_CHECK_ARG(options.kv_block_size >= 1, "--kv-block-size must be >= 1");
  GCMOE_CHECK_ARG(options.max_running_cap >= 1, "--max-running-cap must be >= 1");
  GCMOE_CHECK_ARG(options.max_batch_tokens >= 1, "--max-batch-tokens must be >= 1");
  GCMOE_CHECK_ARG(options.context_tokens >= 1, "--context-tokens must be >= 1");

  MemoryPlan plan;
  plan.model_type = std::string(config::model_family_name(config.family));
  plan.options = options;
  GCMOE_ASSIGN_OR_RETURN(plan.weights, rank_weights(spec, options.ranks, 0, options.with_mtp));
  plan.kv = kv_footprint(config);
  plan.activations = activation_bytes(config, options);
  plan.budget_bytes = static_cast<std::int64_t>(
      std::floor(static_cast<double>(options.gpu.memory_bytes) * options.gpu_memory_utilization));
  std::int64_t const used =
      plan.weights.device_bytes() + plan.activations.total() + options.runtime_reserve_bytes;
  plan.kv_budget_bytes = plan.budget_bytes - used;
  plan.kv_block_bytes = plan.kv.bytes_per_token() * options.kv_block_size;

  std::int64_t const blocks_per_request =
      (options.context_tokens + options.kv_block_size - 1) / options.kv_block_size;
  std::int64_t const per_request =
      plan.kv.fixed_bytes_per_sequence + blocks_per_request * plan.kv_block_bytes;
  if (plan.kv_budget_bytes < per_request) {
    return failed_precondition_error(fmt::format(
        "{} on {} x {}: weights {} + activations {} + runtime reserve {} leave {} of the {} "
        "budget ({:.0f}% of {}), less than one request of {} tokens needs ({}); use more ranks, "
        "fewer --max-batch-tokens or a larger --gpu-memory-utilization",
        plan.model_type, options.ranks, options.gpu.name, gib(plan.weights.device_bytes()),
        gib(plan.activations.total()), gib(options.runtime_reserve_bytes),
        gib(plan.kv_budget_bytes), gib(plan.budget_bytes), options.gpu_memory_utilization * 100.0,
        gib(options.gpu.memory_bytes), options.context_tokens, gib(per_request)));
  }
  std::int64_t const fits = plan.kv_budget_bytes / per_request;
  plan.max_running_requests = static_cast<std::int32_t>(
      std::min<std::int64_t>({fits, options.max_running_cap, options.max_batch_tokens}));
  std::int64_t const blocks =
      (plan.kv_budget_bytes - plan.max_running_requests * plan.kv.fixed_bytes_per_sequence) /
      plan.kv_block_bytes;
  plan.kv_blocks = static_cast<std::int32_t>(
      std::min<std::int64_t>(blocks, std::numeric_limits<std::int32_t>::max()));
  plan.max_waiting_requests = 2 * plan.max_running_requests;
  return plan;
}

std::string serve_flags(MemoryPlan const& plan) {
  return fmt::format(
      "--ranks {} --kv-blocks {} --kv-block-size {} --max-running {} --max-batch-tokens {} "
      "--max-waiting {}",
      plan.options.ranks, plan.kv_blocks, plan.options.kv_block_size, plan.max_running_requests,
      plan.options.max_batch_tokens, plan.max_waiting_requests);
}

nlohmann::json plan_json(MemoryPlan const& plan) {
  PlanOptions const& o = plan.options;
  nlohmann::json j;
  j["model_type"] = plan.model_type;
  j["inputs"] = {{"ranks", o.ranks},
                 {"gpu", o.gpu.name},
                 {"gpu_memory_bytes", o.gpu.memory_bytes},
                 {"gpu_memory_utilization", o.gpu_memory_utilization},
                 {"runtime_reserve_bytes", o.runtime_reserve_bytes},
                 {"context_tokens", o.context_tokens},
                 {"max_running_cap", o.max_running_cap},
                 {"with_mtp", o.with_mtp},
                 {"kv_dtype", "bf16"}};
  nlohmann::json kv_terms = nlohmann::json::array();
  for (KvComponent const& component : plan.kv.per_token) {
    kv_terms.push_back({{"what", component.what}, {"bytes_per_token", component.bytes_per_token}});
  }
  j["per_rank_bytes"] = {{"budget", plan.budget_bytes},
                         {"weights_replicated", plan.weights.replicated_bytes},
                         {"weights_routed_experts", plan.weights.routed_expert_bytes},
                         {"weights_total", plan.weights.device_bytes()},
                         {"activations", plan.activations.total()},
                         {"runtime_reserve", o.runtime_reserve_bytes},
                         {"kv_cache", plan.kv_budget_bytes}};
  j["host_bytes_per_node"] = plan.weights.host_bytes;
  j["experts_per_rank_per_layer"] = plan.weights.experts_per_layer;
  j["kv"] = {{"bytes_per_token", plan.kv.bytes_per_token()},
             {"terms", kv_terms},
             {"fixed_bytes_per_sequence", plan.kv.fixed_bytes_per_sequence},
             {"block_bytes", plan.kv_block_bytes},
             {"tokens_per_rank", plan.kv_tokens()}};
  j["serve"] = {{"ranks", o.ranks},
                {"kv_blocks", plan.kv_blocks},
                {"kv_block_size", o.kv_block_size},
                {"max_running", plan.max_running_requests},
                {"max_batch_tokens", o.max_batch_tokens},
                {"max_waiting", plan.max_waiting_requests}};
  j["serve_flags"] = serve_flags(plan);
  return j;
}

std::string plan_text(MemoryPlan const& plan) {
  PlanOptions const& o = plan.options;
  std::string out = fmt::format("memory plan: {} on {} x {} ({}), per rank\n", plan.model_type,
                                o.ranks, o.gpu.name, o.gpu.description);
  auto const line = [&](std::string const& name, std::string const& value) {
    out += fmt::format("  {:<40} {}\n", name, value);
  };
  line("GPU memory", gib(o.gpu.memory_bytes));
  line(fmt::format("budget ({:.0f}%)", o.gpu_memory_utilization * 100.0), gib(plan.budget_bytes));
  line("weights, replicated", gib(plan.weights.replicated_bytes));
  line(fmt::format("weights, routed experts ({}/layer)", plan.weights.experts_per_layer),
       gib(plan.weights.routed_expert_bytes));
  line(fmt::format("activations ({} tokens/step)", o.max_batch_tokens),
       gib(plan.activations.total()));
  line("runtime reserve", gib(o.runtime_reserve_bytes));
  line("KV cache", gib(plan.kv_budget_bytes));
  if (plan.weights.host_bytes > 0) {
    line("host memory (Engram tables, per node)", gib(plan.weights.host_bytes));
  }
  line("KV bytes per token (bf16)", fmt::format("{}", plan.kv.bytes_per_token()));
  for (KvComponent const& component : plan.kv.per_token) {
    line(fmt::format("  {}", component.what), fmt::format("{:.0f} B", component.bytes_per_token));
  }
  if (plan.kv.fixed_bytes_per_sequence > 0) {
    line(fmt::format("  fixed: {}", plan.kv.fixed_what),
         fmt::format("{:.1f} MiB/request",
                     static_cast<double>(plan.kv.fixed_bytes_per_sequence) / (1 << 20)));
  }
  line(fmt::format("KV blocks ({} tokens each)", o.kv_block_size),
       fmt::format("{} ({} tokens)", plan.kv_blocks, plan.kv_tokens()));
  line(fmt::format("max running ({} ctx tokens each)", o.context_tokens),
       fmt::format("{}", plan.max_running_requests));
  line("max batch tokens", fmt::format("{}", o.max_batch_tokens));
  line("max waiting", fmt::format("{}", plan.max_waiting_requests));
  out += fmt::format("serve flags: {}\n", serve_flags(plan));
  return out;
}

}  // namespace gcmoe::plan
