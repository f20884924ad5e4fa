// The planners reproduce the releases: fed the real configs' dimensions they list the tensor
// counts and shapes of the real headers (model-spec §3), and the tiny configs parse and stay in
// sync with the committed embedded default.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/parse_model_config.h"
#include "engine/tiny/make_tiny.h"
#include "engine/tiny/tiny_config.h"
#include "tests/support/catch.h"

namespace gcmoe::tiny {
namespace {

using checkpoint::DType;
using config::ModelFamily;
using nlohmann::json;
using Shape = std::vector<std::int64_t>;

std::map<std::string, StoredTensor> stored(json const& config_json) {
  auto const plan = plan_from_config(config_json);
  INFO(plan.status().to_string());
  REQUIRE(plan.ok());
  std::map<std::string, StoredTensor> out;
  for (PlannedTensor const& tensor : plan->tensors()) {
    for (StoredTensor const& s : stored_tensors(tensor)) {
      REQUIRE(out.emplace(s.name, s).second);  // names are unique
    }
  }
  return out;
}

std::size_t count_suffix(std::map<std::string, StoredTensor> const& tensors,
                         std::string const& suffix) {
  std::size_t n = 0;
  for (auto const& [name, t] : tensors) {
    n += name.size() >= suffix.size() &&
                 name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0
             ? 1
             : 0;
  }
  return n;
}

void check(std::map<std::string, StoredTensor> const& tensors, std::string const& name,
           DType const dtype, Shape const& shape) {
  INFO(name);
  auto const it = tensors.find(name);
  REQUIRE(it != tensors.end());
  CHECK(it->second.dtype == dtype);
  CHECK(it->second.shape == shape);
}

TEST_CASE("GLM-5.2-FP8 dimensions plan the release's 118,629 tensors and 59,044 scales") {
  json config = tiny_config_json(ModelFamily::kGlmMoeDsa);
  std::vector<std::string> types(78, "sparse");
  std::fill(types.begin(), types.begin() + 3, "dense");
  config.update(json{{"vocab_size", 154880},
                     {"hidden_size", 6144},
                     {"num_hidden_layers", 78},
                     {"num_attention_heads", 64},
                     {"head_dim", 192},
                     {"q_lora_rank", 2048},
                     {"kv_lora_rank", 512},
                     {"qk_nope_head_dim", 192},
                     {"qk_rope_head_dim", 64},
                     {"v_head_dim", 256},
                     {"intermediate_size", 12288},
                     {"first_k_dense_replace", 3},
                     {"mlp_layer_types", types},
                     {"n_routed_experts", 256},
                     {"num_experts_per_tok", 8},
                     {"moe_intermediate_size", 2048},
                     {"index_n_heads", 32},
                     {"index_head_dim", 128},
                     {"index_topk", 2048}});
  auto const tensors = stored(config);
  CHECK(tensors.size() == 118629);
  CHECK(count_suffix(tensors, ".weight_scale_inv") == 59044);
  check(tensors, "model.layers.5.self_attn.kv_b_proj.weight", DType::kF8E4M3, {28672, 512});
  check(tensors, "model.layers.5.self_attn.kv_b_proj.weight_scale_inv", DType::kF32, {224, 4});
  check(tensors, "model.layers.5.self_attn.kv_a_proj_with_mqa.weight_scale_inv", DType::kF32,
        {5, 48});
  check(tensors, "model.layers.1.mlp.down_proj.weight_scale_inv", DType::kF32, {48, 96});
  check(tensors, "model.layers.77.mlp.experts.255.down_proj.weight_scale_inv", DType::kF32,
        {48, 16});
  check(tensors, "model.layers.78.eh_proj.weight", DType::kBf16, {6144, 12288});
}

TEST_CASE("DeepSeek-V4-Flash dimensions plan the release's 69,187 tensors") {
  json config = tiny_config_json(ModelFamily::kDeepseekV4);
  std::vector<std::int64_t> ratios = {0, 0};
  for (int i = 0; i < 20; ++i) {
    ratios.push_back(4);
    ratios.push_back(128);
  }
  ratios.push_back(4);
  ratios.push_back(0);
  config.update(json{{"vocab_size", 129280},
                     {"hidden_size", 4096},
                     {"num_hidden_layers", 43},
                     {"num_attention_heads", 64},
                     {"head_dim", 512},
                     {"qk_rope_head_dim", 64},
                     {"q_lora_rank", 1024},
                     {"o_lora_rank", 1024},
                     {"o_groups", 8},
                     {"n_routed_experts", 256},
                     {"num_experts_per_tok", 6},
                     {"moe_intermediate_size", 2048},
                     {"num_hash_layers", 3},
                     {"index_n_heads", 64},
                     {"index_head_dim", 128},
                     {"index_topk", 512},
                     {"compress_ratios", ratios}});
  auto const tensors = stored(config);
  CHECK(tensors.size() == 69187);
  CHECK(count_suffix(tensors, ".scale") == 34167);
  CHECK(count_suffix(tensors, ".ape") == 62);
  CHECK(count_suffix(tensors, ".tid2eid") == 3);
  CHECK(count_suffix(tensors, "ffn.gate.bias") == 41);
  check(tensors, "layers.0.ffn.gate.tid2eid", DType::kI64, {129280, 6});
  check(tensors, "layers.10.attn.wq_b.scale", DType::kF8E8M0, {256, 8});
  check(tensors, "layers.10.attn.wo_a.scale", DType::kF8E8M0, {64, 32});
  check(tensors, "layers.10.ffn.experts.7.w2.weight", DType::kI8, {4096, 1024});
  check(tensors, "layers.10.ffn.experts.7.w2.scale", DType::kF8E8M0, {4096, 64});
  check(tensors, "layers.42.attn.indexer.wq_b.scale", DType::kF8E8M0, {64, 8});
  check(tensors, "hc_head_fn", DType::kF32, {4, 16384});
  check(tensors, "layers.3.hc_attn_fn", DType::kF32, {24, 16384});
}

TEST_CASE("DeepSeek-V4.1-Flash dimensions plan the release's shapes") {
  json config = tiny_config_json(ModelFamily::kDeepseekV41);
  std::vector<std::int64_t> ratios = {0, 0};
  ratios.insert(ratios.end(), 18, 2);
  ratios.insert(ratios.end(), 20, 1);
  ratios.insert(ratios.end(), 3, 0);
  config["text_config"].update(json{{"vocab_size", 129280},
                                    {"hidden_size", 5120},
                                    {"num_hidden_layers", 40},
                                    {"num_attention_heads", 64},
                                    {"head_dim", 512},
                                    {"qk_rope_head_dim", 64},
                                    {"q_lora_rank", 1280},
                                    {"o_lora_rank", 1024},
                                    {"o_groups", 8},
                                    {"n_routed_experts", 384},
                                    {"num_experts_per_tok", 6},
                                    {"moe_intermediate_size", 2304},
                                    {"index_n_heads", 32},
                                    {"index_head_dim", 128},
                                    {"compress_ratios", ratios},
                                    {"kv_source_layer_ids", {2, 8, 14, 20}},
                                    {"index_source_layer_ids", {2, 8, 14, 20, 24, 28, 32, 36}},
                                    {"engram_layer_ids", {1, 14}},
                                    {"engram_num_embeddings", {384006168, 384016682}},
                                    {"engram_head_dim", 256},
                                    {"dspark_target_layer_ids", {37, 38, 39}},
                                    {"dspark_markov_rank", 256},
                                    {"dspark_n_routed_experts", 128},
                                    {"dspark_num_experts_per_tok", 3}});
  auto const tensors = stored(config);
  check(tensors, "layers.9.ffn.experts.383.w1.weight", DType::kI8, {2304, 2560});
  check(tensors, "layers.9.ffn.experts.383.w1.scale", DType::kF8E8M0, {2304, 160});
  check(tensors, "layers.9.ffn.experts.383.w2.weight", DType::kI8, {5120, 1152});
  check(tensors, "layers.9.ffn.experts.383.w2.scale", DType::kF8E8M0, {5120, 72});
  check(tensors, "mtp.0.main_proj.scale", DType::kF8E8M0, {160, 480});
  check(tensors, "layers.14.engram.embed.weight", DType::kF8E4M3, {384016682, 256});
  check(tensors, "layers.14.engram.embed.scale", DType::kF8E8M0, {384016682, 8});
  check(tensors, "layers.1.engram.wkv.weight", DType::kF8E4M3, {25600, 6144});
  check(tensors, "mtp.2.confidence_head.proj.weight", DType::kBf16, {1, 5376});
  CHECK(count_suffix(tensors, "attn.compressor.wgate.weight") == 3);  // 3 wgate, 4 compressors
  CHECK(count_suffix(tensors, "attn.compressor.wkv.weight") == 4);
  CHECK(count_suffix(tensors, "ffn.gate.bias_vl") == 40);
  CHECK(tensors.count("mtp.2.ffn.experts.127.w3.weight") == 1);
  // 18,800,640 bytes per routed expert (model-spec §7).
  std::int64_t expert_bytes = 0;
  for (auto const& [name, t] : tensors) {
    if (name.rfind("layers.9.ffn.experts.0.", 0) == 0) {
      expert_bytes += t.shape[0] * t.shape[1];  // I8 and F8_E8M0: one byte each
    }
  }
  CHECK(expert_bytes == 18800640);
}

TEST_CASE("Engram table rows follow the release's prime buckets") {
  CHECK(engram_table_rows(16000000, 24, 2) == std::vector<std::int64_t>{384006168, 384016682});
  CHECK(engram_table_rows(10, 3, 2) == std::vector<std::int64_t>{11 + 13 + 17, 19 + 23 + 29});
}

TEST_CASE("every tiny config parses, and the committed embedded default matches the GLM one") {
  for (ModelFamily const family :
       {ModelFamily::kGlmMoeDsa, ModelFamily::kDeepseekV4, ModelFamily::kDeepseekV41}) {
    auto const parsed = config::parse_model_config(tiny_config_json(family).dump());
    INFO(parsed.status().to_string());
    REQUIRE(parsed.ok());
    CHECK(parsed->family == family);
    CHECK(parsed->hidden_size == 256);
  }
  std::ifstream in(GCMOE_TINY_DEFAULT_CONFIG);
  REQUIRE(in.good());
  json const committed = json::parse(in, nullptr, /*allow_exceptions=*/false);
  CHECK(committed == tiny_config_json(ModelFamily::kGlmMoeDsa));
  CHECK(parse_family("glm_moe_dsa").ok());
  CHECK(parse_family("glm5").status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::tiny
