// The weight mapping of each family against checkpoints it did not write: the tiny writer's
// checkpoints (every tensor mapped, none left over) and the real releases' configs (the tensor
// counts model-spec §3 records from the release headers).
#include <fstream>
#include <set>
#include <string>

#include "engine/config/parse_model_config.h"
#include "engine/model/weights/model_weight_spec.h"
#include "tests/support/catch.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::model {
namespace {

using config::ModelFamily;

std::set<std::string> spec_names(ModelSpec const& spec, bool const with_mtp) {
  std::set<std::string> names;
  std::size_t visits = 0;
  for_each_tensor(spec, with_mtp, [&](TensorSpec const& tensor) {
    names.insert(tensor.name);
    ++visits;
  });
  CHECK(visits == names.size());  // no tensor mapped twice
  return names;
}

nlohmann::json read_json(std::string const& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

ModelSpec release_spec(std::string const& dir) {
  nlohmann::json const json =
      read_json(std::string(GCMOE_SOURCE_DIR) + "/configs/models/" + dir + "/config.json");
  auto const config = config::parse_model_config(json.dump());
  REQUIRE(config.ok());
  auto spec = model_weight_spec(*config, json);
  INFO(spec.status().to_string());
  REQUIRE(spec.ok());
  return std::move(spec).value();
}

TEST_CASE("the mapping names exactly the tensors of each family's tiny checkpoint") {
  for (ModelFamily const family :
       {ModelFamily::kGlmMoeDsa, ModelFamily::kDeepseekV4, ModelFamily::kDeepseekV41}) {
    INFO(config::model_family_name(family));
    auto const& model = tiny::testing::written_model(family);
    auto const described = describe_model(model.dir->path());
    INFO(described.status().to_string());
    REQUIRE(described.ok());
    ModelSpec const& spec = described->spec;
    auto const layout = checkpoint::CheckpointLayout::read(model.dir->path());
    REQUIRE(layout.ok());
    CHECK(check_spec(*layout, spec, true).ok());

    std::set<std::string> on_disk;
    for (checkpoint::ShardHeader const& shard : layout->shards()) {
      for (checkpoint::TensorInfo const& tensor : shard.header.tensors) {
        on_disk.insert(tensor.name);
      }
    }
    CHECK(spec_names(spec, true) == on_disk);
    CHECK(spec.layers.size() == static_cast<std::size_t>(described->config.num_hidden_layers));
    CHECK(spec.mtp.size() == static_cast<std::size_t>(described->config.num_nextn_predict_layers));
    // Without MTP the trunk alone: strictly fewer names.
    CHECK(spec_names(spec, false).size() < on_disk.size());
  }
}

TEST_CASE("GLM-5.2 mapping: layer kinds, router, experts") {
  auto const described =
      describe_model(tiny::testing::written_model(ModelFamily::kGlmMoeDsa).dir->path());
  REQUIRE(described.ok());
  ModelSpec const& spec = described->spec;
  REQUIRE(spec.layers.size() == 4);
  CHECK(spec.layers[0].dense_mlp.has_value());
  CHECK_FALSE(spec.layers[0].moe.has_value());
  REQUIRE(spec.layers[1].moe.has_value());
  MoeSpec const& moe = *spec.layers[1].moe;
  CHECK(moe.prefix == "model.layers.1.mlp");
  CHECK(moe.experts.size() == 16);
  CHECK(moe.router.bias->name == "model.layers.1.mlp.gate.e_score_correction_bias");
  CHECK(moe.router.bias->dtype == checkpoint::DType::kF32);
  LinearSpec const& down = moe.experts[5].down;
  CHECK(down.weight.name == "model.layers.1.mlp.experts.5.down_proj.weight");
  CHECK(down.scale->name == "model.layers.1.mlp.experts.5.down_proj.weight_scale_inv");
  CHECK(down.scale->shape == std::vector<std::int64_t>{2, 1});  // [256, 128] in 128² blocks
  // IndexShare: layer 3 reuses the indexer top-k of layer 2.
  CHECK(spec.layers[2].attention.linears.count("self_attn.indexer.wk") == 1);
  CHECK(spec.layers[3].attention.linears.count("self_attn.indexer.wk") == 0);
  REQUIRE(spec.mtp.size() == 1);
  CHECK(spec.mtp[0].prefix == "model.layers.4.");
  CHECK(spec.mtp[0].extra.tensors.count("eh_proj.weight") == 1);
}

TEST_CASE("DeepSeek mappings: hash routing, vision bias, MXFP4 experts") {
  auto const v4 =
      describe_model(tiny::testing::written_model(ModelFamily::kDeepseekV4).dir->path());
  REQUIRE(v4.ok());
  // Hash layers carry tid2eid and no bias; the rest a bias.
  CHECK(v4->spec.layers[0].moe->router.tid2eid.has_value());
  CHECK_FALSE(v4->spec.layers[0].moe->router.bias.has_value());
  CHECK(v4->spec.layers[2].moe->router.bias.has_value());
  LinearSpec const& w1 = v4->spec.layers[2].moe->experts[0].gate;
  CHECK(w1.weight.name == "layers.2.ffn.experts.0.w1.weight");
  CHECK(w1.weight.dtype == checkpoint::DType::kI8);
  CHECK(w1.weight.shape == std::vector<std::int64_t>{128, 128});  // [inter, hidden / 2]
  CHECK(w1.scale->shape == std::vector<std::int64_t>{128, 8});    // [inter, hidden / 32]

  auto const v41 =
      describe_model(tiny::testing::written_model(ModelFamily::kDeepseekV41).dir->path());
  REQUIRE(v41.ok());
  CHECK(v41->spec.layers[3].moe->router.bias_vl.has_value());
  REQUIRE(v41->spec.mtp.size() == 3);
  CHECK(v41->spec.mtp[0].moe->experts.size() == 8);  // dspark_n_routed_experts
  CHECK_FALSE(v41->spec.mtp[0].moe->router.bias_vl.has_value());
  CHECK(v41->spec.layers[1].extra.linears.count("engram.embed") == 1);
}

TEST_CASE("release configs map to the release tensor counts") {
  // model-spec §3.4: GLM-5.2-FP8 holds 118,629 tensors; §3.2: V4-Flash 69,187.
  CHECK(spec_names(release_spec("glm-5.2"), true).size() == 118629);
  CHECK(spec_names(release_spec("deepseek-v4-flash"), true).size() == 69187);
  ModelSpec const v41 = release_spec("deepseek-v4.1-flash");
  CHECK(v41.layers.size() == 40);
  CHECK(v41.layers[0].moe->experts.size() == 384);
  // §7: 18,800,640 bytes per V4.1 expert, 37,757,952 per GLM-5.2 expert.
  CHECK(v41.layers[0].moe->experts[0].bytes() == 18800640);
  CHECK(release_spec("glm-5.2").layers[3].moe->experts[0].bytes() == 37757952);
}

}  // namespace
}  // namespace gcmoe::model
