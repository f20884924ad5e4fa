#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <variant>

#include "engine/config/parse_model_config.h"
#include "engine/config/size_estimate.h"
#include "tests/support/catch.h"

namespace gcmoe::config {
namespace {

std::string const kConfigs = std::string(GCMOE_SOURCE_DIR) + "/configs/models/";

nlohmann::json load_json(std::string const& model) {
  std::ifstream in(kConfigs + model + "/config.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

ModelConfig load(std::string const& model) {
  auto const config = load_model_config(kConfigs + model + "/config.json");
  INFO(config.status().to_string());
  REQUIRE(config.ok());
  return *config;
}

// Parses `json` and expects INVALID_ARGUMENT whose message holds every part.
void expect_error(nlohmann::json const& json, std::vector<std::string> const& parts) {
  auto const config = parse_model_config(json.dump(), "config.json");
  INFO("expecting: " << parts.front());
  INFO(config.status().to_string());
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().code() == StatusCode::kInvalidArgument);
  for (std::string const& part : parts) {
    CHECK(config.status().message().find(part) != std::string::npos);
  }
}

TEST_CASE("DeepSeek-V4-Flash config") {
  ModelConfig const c = load("deepseek-v4-flash");
  CHECK(c.family == ModelFamily::kDeepseekV4);
  CHECK(c.hidden_size == 4096);
  CHECK(c.num_hidden_layers == 43);
  CHECK(c.first_dense_layers == 0);
  CHECK(c.moe_layer_count() == 43);
  CHECK(c.moe.n_routed_experts == 256);
  CHECK(c.moe.num_experts_per_tok == 6);
  CHECK(c.moe.scoring_func == ScoringFunc::kSqrtSoftplus);
  CHECK(c.moe.routed_scaling_factor == 1.5);
  CHECK(c.moe.num_hash_layers == 3);
  REQUIRE(c.moe.swiglu_limit.has_value());
  CHECK(*c.moe.swiglu_limit == 10.0);
  CHECK(describe(c.dense_format) == "FP8 e4m3, 128x128 blocks, e8m0 scales");
  CHECK(describe(c.expert_format) == "MXFP4 (e2m1), 1x32 blocks, e8m0 scales");
  auto const& v4 = std::get<DeepseekV4Extras>(c.extras);
  CHECK(v4.compress_ratios.size() == 44);
  CHECK(v4.hc_mult == 4);
  // model-spec §7: 13,369,344 bytes per MXFP4 expert.
  CHECK(estimate_sizes(c).bytes_per_expert == 13'369'344);
}

TEST_CASE("DeepSeek-V4.1-Flash config nests the text model") {
  ModelConfig const c = load("deepseek-v4.1-flash");
  CHECK(c.family == ModelFamily::kDeepseekV41);
  CHECK(c.hidden_size == 5120);
  CHECK(c.num_hidden_layers == 40);
  CHECK(c.num_nextn_predict_layers == 3);
  CHECK(c.moe.n_routed_experts == 384);
  CHECK(c.moe.num_hash_layers == 0);
  CHECK(c.rms_norm_eps == 1e-20);
  CHECK(describe(c.dense_format) == "FP8 e4m3, 32x32 blocks, e8m0 scales");
  CHECK(c.expert_format.encoding == WeightEncoding::kMxfp4);
  auto const& v41 = std::get<DeepseekV41Extras>(c.extras);
  CHECK(v41.v4.compress_ratios.size() == 43);
  CHECK(v41.dspark_n_routed_experts == 128);
  CHECK(v41.dspark_num_experts_per_tok == 3);
  CHECK(v41.engram_layer_ids == std::vector<std::int64_t>{1, 14});
  CHECK(v41.gate_temp == 1.0);
  // model-spec §3.3 / §7: 18,800,640 bytes per expert, 7,219,445,760 per layer of 384.
  SizeEstimate const estimate = estimate_sizes(c);
  CHECK(estimate.bytes_per_expert == 18'800'640);
  CHECK(estimate.routed_expert_bytes == 40 * 7'219'445'760LL);
}

TEST_CASE("GLM-5.2 config") {
  ModelConfig const c = load("glm-5.2");
  CHECK(c.family == ModelFamily::kGlmMoeDsa);
  CHECK(c.num_hidden_layers == 78);
  CHECK(c.first_dense_layers == 3);
  CHECK(c.dense_intermediate_size == 12288);
  CHECK_FALSE(c.is_moe_layer(2));
  CHECK(c.is_moe_layer(3));
  CHECK(c.moe.num_experts_per_tok == 8);
  CHECK(c.moe.scoring_func == ScoringFunc::kSigmoid);
  CHECK(c.moe.routed_scaling_factor == 2.5);
  CHECK_FALSE(c.moe.swiglu_limit.has_value());
  CHECK(describe(c.dense_format) == "FP8 e4m3, 128x128 blocks, f32 scales");
  CHECK(describe(c.expert_format) == describe(c.dense_format));
  auto const& glm = std::get<GlmMoeDsaExtras>(c.extras);
  CHECK(glm.rope_theta == 8'000'000.0);
  // model-spec §1.3: full indexer at 0, 1, 2, 6, 10, ..., 74 — 21 layers.
  int full = 0;
  for (std::int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
    full += glm.indexer_full(layer) ? 1 : 0;
  }
  CHECK(full == 21);
  CHECK(glm.indexer_full(6));
  CHECK_FALSE(glm.indexer_full(7));
  // model-spec §7: 37,757,952 bytes per FP8 expert (f32 128×128 scales).
  SizeEstimate const estimate = estimate_sizes(c);
  CHECK(estimate.bytes_per_expert == 37'757'952);
  CHECK(estimate.moe_layers == 75);
  auto const rank0 = estimate.rank_bytes(8, 0);
  REQUIRE(rank0.ok());
  CHECK(*rank0 == estimate.replicated_bytes + 75 * 32 * 37'757'952LL);
  CHECK_FALSE(estimate.rank_bytes(3, 0).ok());
}

TEST_CASE("broken configs name the field at fault") {
  nlohmann::json const v4 = load_json("deepseek-v4-flash");
  nlohmann::json const v41 = load_json("deepseek-v4.1-flash");
  nlohmann::json const glm = load_json("glm-5.2");
  nlohmann::json j;

  j = v4, j["model_type"] = "llama";
  expect_error(j, {"'model_type'", "'llama'"});
  j = v4, j.erase("model_type");
  expect_error(j, {"'model_type' is missing"});
  j = v4, j.erase("num_experts_per_tok");
  expect_error(j, {"'num_experts_per_tok' is missing"});
  j = v4, j["num_experts_per_tok"] = 300;
  expect_error(j, {"'num_experts_per_tok' = 300 exceeds n_routed_experts = 256"});
  j = v4, j["hidden_size"] = "4096";
  expect_error(j, {"'hidden_size' must be an integer"});
  j = v4, j["hidden_size"] = 4100;
  expect_error(j, {"'hidden_size' = 4100 is not a multiple of 32"});
  j = v4, j["quantization_config"]["weight_block_size"] = {100, 128};
  expect_error(j, {"'quantization_config.weight_block_size' = [100, 128]"});
  j = v4, j["quantization_config"]["weight_block_size"] = {128};
  expect_error(j, {"'quantization_config.weight_block_size'"});
  j = v4, j["quantization_config"]["quant_method"] = "awq";
  expect_error(j, {"'quantization_config.quant_method' = 'awq'"});
  j = v4, j["quantization_config"]["scale_fmt"] = "fp32";
  expect_error(j, {"'quantization_config.scale_fmt' = 'fp32'"});
  j = v4, j["expert_dtype"] = "int4";
  expect_error(j, {"'expert_dtype' = 'int4'"});
  j = v4, j["scoring_func"] = "softmax";
  expect_error(j, {"'scoring_func' = 'softmax'"});
  j = v4, j["compress_ratios"] = {0, 0, 4};
  expect_error(j, {"'compress_ratios' has 3 entries"});
  j = v4, j["num_hash_layers"] = 50;
  expect_error(j, {"'num_hash_layers' = 50"});
  j = v4, j["o_groups"] = 7;
  expect_error(j, {"'o_groups' = 7"});
  j = v4, j["routed_scaling_factor"] = -1.0;
  expect_error(j, {"'routed_scaling_factor'"});
  j = v4, j["topk_method"] = "greedy";
  expect_error(j, {"'topk_method' = 'greedy'"});

  j = v41, j.erase("text_config");
  expect_error(j, {"'text_config' is missing"});
  j = v41, j["text_config"]["num_experts_per_tok"] = 400;
  expect_error(j, {"'text_config.num_experts_per_tok' = 400 exceeds n_routed_experts = 384"});
  j = v41, j["text_config"]["moe_intermediate_size"] = 2300;
  expect_error(j, {"'text_config.moe_intermediate_size' = 2300 is not a multiple of 32"});
  j = v41, j["text_config"]["engram_layer_ids"] = {1, 40};
  expect_error(j, {"'text_config.engram_layer_ids' holds layer 40"});
  j = v41, j["text_config"]["engram_num_embeddings"] = {384006168};
  expect_error(j, {"'text_config.engram_num_embeddings' has 1 entries"});
  j = v41, j["text_config"]["dspark_num_experts_per_tok"] = 129;
  expect_error(j, {"'text_config.dspark_num_experts_per_tok' = 129"});
  j = v41, j["quantization_config"]["expert_dtype"] = "fp2";
  expect_error(j, {"'quantization_config.expert_dtype' = 'fp2'"});

  j = glm, j["first_k_dense_replace"] = 4;
  expect_error(j, {"'mlp_layer_types' says layer 3 is 'sparse'"});
  j = glm, j["first_k_dense_replace"] = 90;
  expect_error(j, {"'first_k_dense_replace' = 90"});
  j = glm, j.erase("intermediate_size");
  expect_error(j, {"'intermediate_size' must be positive"});
  j = glm, j["n_group"] = 3;
  expect_error(j, {"'n_group' = 3 does not divide n_routed_experts = 256"});
  j = glm, j["moe_layer_freq"] = 2;
  expect_error(j, {"'moe_layer_freq' = 2"});
  j = glm, j["index_topk_freq"] = 0;
  expect_error(j, {"'index_topk_freq' = 0"});
  j = glm, j["rope_parameters"].erase("rope_theta");
  expect_error(j, {"'rope_parameters.rope_theta' is missing"});

  auto const not_json = parse_model_config("{\"model_type\": ", "bad.json");
  CHECK(not_json.status().code() == StatusCode::kInvalidArgument);
  CHECK(not_json.status().message().find("bad.json") != std::string::npos);
}

TEST_CASE("a release without quantization_config is all BF16") {
  nlohmann::json j = load_json("glm-5.2");
  j.erase("quantization_config");
  auto const config = parse_model_config(j.dump());
  REQUIRE(config.ok());
  CHECK(describe(config->dense_format) == "BF16");
  CHECK(estimate_sizes(*config).bytes_per_expert == 3 * 2048 * 6144 * 2);
}

TEST_CASE("V4-Flash-Base experts are FP8 with f32 block scales") {
  nlohmann::json j = load_json("deepseek-v4-flash");
  j["expert_dtype"] = "fp8";
  auto const config = parse_model_config(j.dump());
  REQUIRE(config.ok());
  CHECK(describe(config->expert_format) == "FP8 e4m3, 128x128 blocks, f32 scales");
}

}  // namespace
}  // namespace gcmoe::config
