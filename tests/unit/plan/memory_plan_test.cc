// The memory plan of the real releases' configs (configs/models/*): KV bytes per token worked
// out by hand from model-spec §4.4, weights per rank from the weight spec, and the committed
// serving presets (configs/serving/*.json) equal to what `gcmoe plan` computes today.
#include "engine/plan/memory_plan.h"

#include <filesystem>
#include <fstream>

#include "engine/model/weights/model_weight_spec.h"
#include "tests/support/catch.h"

namespace gcmoe::plan {
namespace {

std::filesystem::path source_dir() {
  return GCMOE_SOURCE_DIR;
}

model::ModelDescription describe(char const* name) {
  StatusOr<model::ModelDescription> d =
      model::describe_model(source_dir() / "configs" / "models" / name);
  INFO(d.status().to_string());
  REQUIRE(d.ok());
  return std::move(d).value();
}

PlanOptions h200_x8() {
  PlanOptions o;
  o.ranks = 8;
  o.gpu = find_gpu("H200").value();
  return o;
}

TEST_CASE("GLM-5.2 KV: 78 layers x (512 + 64) bf16 plus 21 indexer keys of 128") {
  model::ModelDescription const glm = describe("glm-5.2");
  KvFootprint const kv = kv_footprint(glm.config);
  CHECK(kv.bytes_per_token() == 78 * 576 * 2 + 21 * 128 * 2);  // 95,232 B
  CHECK(kv.fixed_bytes_per_sequence == 0);
}

TEST_CASE("DeepSeek-V4.1 KV: 2.5 compressed entries and their index keys per token") {
  model::ModelDescription const v41 = describe("deepseek-v4.1-flash");
  KvFootprint const kv = kv_footprint(v41.config);
  // Sources 2, 8, 14 (ratio 2) and 20 (ratio 1): 0.5 × 3 + 1 = 2.5 entries of 512 values; all
  // four are index sources too: 2.5 keys of 128 values.
  CHECK(kv.bytes_per_token() == 2560 + 640);
  CHECK(kv.fixed_bytes_per_sequence == 40 * 128 * 512 * 2);  // window ring, every layer
}

TEST_CASE("Weights per rank: replicated part plus E/N experts per MoE layer") {
  model::ModelDescription const glm = describe("glm-5.2");
  RankWeights const r0 = rank_weights(glm.spec, 8, 0, false).value();
  RankWeights const r7 = rank_weights(glm.spec, 8, 7, false).value();
  CHECK(r0.experts_per_layer == 32);
  // 75 MoE layers × 32 experts × 37,757,952 B (model-spec §6).
  CHECK(r0.routed_expert_bytes == 75LL * 32 * 37757952);
  CHECK(r0.device_bytes() == r7.device_bytes());
  CHECK(r0.replicated_bytes > 15'000'000'000LL);  // attention 12.9 GB + head/embed 3.8 GB + …
  CHECK(r0.replicated_bytes < 25'000'000'000LL);
  CHECK(r0.host_bytes == 0);
  RankWeights const one = rank_weights(glm.spec, 1, 0, false).value();
  CHECK(one.routed_expert_bytes == 8 * r0.routed_expert_bytes);
  CHECK(rank_weights(glm.spec, 3, 0, false).status().code() == StatusCode::kInvalidArgument);
  CHECK(rank_weights(glm.spec, 8, 8, false).status().code() == StatusCode::kInvalidArgument);

  model::ModelDescription const v41 = describe("deepseek-v4.1-flash");
  RankWeights const v = rank_weights(v41.spec, 8, 0, false).value();
  CHECK(v.experts_per_layer == 48);
  CHECK(v.host_bytes > 150'000'000'000LL);  // Engram tables stay on the host
}

TEST_CASE("Plan: the KV budget is what the weights, activations and reserve leave") {
  model::ModelDescription const glm = describe("glm-5.2");
  MemoryPlan const p = make_memory_plan(glm.config, glm.spec, h200_x8()).value();
  CHECK(p.budget_bytes == static_cast<std::int64_t>(143771LL * 1024 * 1024 * 0.9));
  CHECK(p.kv_budget_bytes == p.budget_bytes - p.weights.device_bytes() - p.activations.total() -
                                 p.options.runtime_reserve_bytes);
  CHECK(p.kv_block_bytes == 95232 * 16);
  CHECK(std::int64_t{p.kv_blocks} * p.kv_block_bytes <= p.kv_budget_bytes);
  CHECK(std::int64_t{p.kv_blocks + 1} * p.kv_block_bytes > p.kv_budget_bytes);
  CHECK(p.max_running_requests >= 1);
  CHECK(std::int64_t{p.max_running_requests} * (8192 / 16) <= p.kv_blocks);
  CHECK(p.max_waiting_requests == 2 * p.max_running_requests);
  CHECK(serve_flags(p).find("--kv-blocks " + std::to_string(p.kv_blocks)) != std::string::npos);

  // One H100 cannot hold GLM-5.2 on one rank: a clear FAILED_PRECONDITION, not a negative plan.
  PlanOptions small = h200_x8();
  small.ranks = 1;
  StatusOr<MemoryPlan> const too_big = make_memory_plan(glm.config, glm.spec, small);
  CHECK(too_big.status().code() == StatusCode::kFailedPrecondition);
  CHECK(too_big.status().message().find("leave") != std::string::npos);

  PlanOptions bad = h200_x8();
  bad.gpu_memory_utilization = 1.5;
  CHECK(make_memory_plan(glm.config, glm.spec, bad).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(find_gpu("tpu").status().code() == StatusCode::kNotFound);
}

TEST_CASE("The committed 8xH200 serving presets match today's plan") {
  for (auto const& [model_dir, preset] :
       {std::pair{"glm-5.2", "glm-5.2-8xh200.json"},
        std::pair{"deepseek-v4.1-flash", "deepseek-v4.1-flash-8xh200.json"}}) {
    INFO(preset << " (regenerate with: gcmoe plan --model configs/models/" << model_dir
                << " --ranks 8 --gpu h200 --out configs/serving/" << preset << ")");
    model::ModelDescription const d = describe(model_dir);
    MemoryPlan const p = make_memory_plan(d.config, d.spec, h200_x8()).value();
    std::ifstream in(source_dir() / "configs" / "serving" / preset);
    REQUIRE(in.good());
    nlohmann::json const committed = nlohmann::json::parse(in);
    nlohmann::json const now = plan_json(p);
    CHECK(committed["serve"] == now["serve"]);
    CHECK(committed["per_rank_bytes"] == now["per_rank_bytes"]);
    CHECK(committed["kv"]["bytes_per_token"] == now["kv"]["bytes_per_token"]);
    CHECK(committed["model_dir"] == model_dir);
  }
}

}  // namespace
}  // namespace gcmoe::plan
