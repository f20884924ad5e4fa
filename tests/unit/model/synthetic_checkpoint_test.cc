// The load benchmark's inputs: release configs cut to a layer stack stay valid configs of their
// family, and synthetic checkpoints match the weight mapping, load, and hold plausible values.
#include "engine/model/synthetic_checkpoint.h"

#include <cstring>
#include <fstream>
#include <set>

#include "engine/checkpoint/checkpoint_inventory.h"
#include "engine/config/parse_model_config.h"
#include "engine/model/layer_stack_config.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weights/model_weight_spec.h"
#include "engine/tiny/tiny_config.h"
#include "tests/support/catch.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::model {
namespace {

nlohmann::json release(std::string const& dir) {
  std::ifstream in(std::string(GCMOE_SOURCE_DIR) + "/configs/models/" + dir + "/config.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

ModelDescription describe(nlohmann::json const& json) {
  auto const config = config::parse_model_config(json.dump());
  REQUIRE(config.ok());
  auto spec = model_weight_spec(*config, json);
  REQUIRE(spec.ok());
  return {*config, std::move(spec).value()};
}

TEST_CASE("a GLM-5.2 layer stack keeps one dense layer and full width, drops MTP") {
  auto const stack = layer_stack_config(release("glm-5.2"), 3);
  INFO(stack.status().to_string());
  REQUIRE(stack.ok());
  ModelDescription const m = describe(*stack);
  CHECK(m.config.num_hidden_layers == 3);
  CHECK(m.config.first_dense_layers == 1);
  CHECK(m.config.hidden_size == 6144);
  CHECK(m.spec.mtp.empty());
  CHECK(m.spec.layers[0].dense_mlp.has_value());
  CHECK(m.spec.layers[2].moe->experts.size() == 256);
}

TEST_CASE("a V4.1 layer stack drops Engram, DSpark and out-of-range source layers") {
  auto const stack = layer_stack_config(release("deepseek-v4.1-flash"), 3);
  INFO(stack.status().to_string());
  REQUIRE(stack.ok());
  ModelDescription const m = describe(*stack);
  auto const& v41 = std::get<config::DeepseekV41Extras>(m.config.extras);
  CHECK(v41.engram_layer_ids.empty());
  CHECK(v41.kv_source_layer_ids == std::vector<std::int64_t>{2});
  CHECK(m.spec.mtp.empty());
  CHECK(m.spec.layers[1].extra.linears.count("engram.embed") == 0);
  CHECK(m.spec.layers[2].attention.tensors.count("attn.compressor.wkv.weight") == 1);
  CHECK_FALSE(layer_stack_config(release("deepseek-v4.1-flash"), 41).ok());
}

TEST_CASE("synthetic checkpoints match the mapping, load, and hold plausible values") {
  for (config::ModelFamily const family :
       {config::ModelFamily::kGlmMoeDsa, config::ModelFamily::kDeepseekV4,
        config::ModelFamily::kDeepseekV41}) {
    INFO(config::model_family_name(family));
    tiny::testing::TempDir const dir(
        fmt::format("synthetic_{}", config::model_family_name(family)));
    // Small shards so the tiny model spreads over several files.
    auto const written =
        write_synthetic_checkpoint(tiny::tiny_config_json(family), dir.path(), 7, 3, 1 << 20);
    INFO(written.status().to_string());
    REQUIRE(written.ok());
    CHECK(written->shards > 1);
    auto const model = describe_model(dir.path());
    REQUIRE(model.ok());
    auto const opened = checkpoint::Checkpoint::open(dir.path());
    REQUIRE(opened.ok());
    CHECK(check_spec(opened->layout(), model->spec, true).ok());
    auto const inventory = checkpoint::take_inventory(opened->layout());
    REQUIRE(inventory.ok());
    CHECK(inventory->total_bytes() == written->bytes);

    std::set<std::uint8_t> e4m3_codes;
    std::int64_t nan_codes = 0;
    for (std::size_t shard = 0; shard < opened->layout().shards().size(); ++shard) {
      for (checkpoint::TensorView const& view : opened->shard_tensors(shard)) {
        if (view.dtype == checkpoint::DType::kF8E4M3) {
          for (std::byte const b : view.bytes) {
            auto const code = static_cast<std::uint8_t>(b);
            nan_codes += (code & 0x7F) == 0x7F ? 1 : 0;
            e4m3_codes.insert(code);
          }
        }
      }
    }
    CHECK(nan_codes == 0);
    CHECK(e4m3_codes.size() > 100);  // random, not constant

    std::unique_ptr<ExpertLayoutTransform> const transform =
        default_expert_transform(model->config);
    LoadOptions options;
    options.selection = {2, 1, true, nullptr, transform.get()};
    auto const loaded =
        load_weights(*opened, model->spec, options, std::make_unique<HostWeightStore>());
    INFO(loaded.status().to_string());
    CHECK(loaded.ok());
  }
}

TEST_CASE("the synthetic writer is deterministic in its seed") {
  nlohmann::json const config = tiny::tiny_config_json(config::ModelFamily::kGlmMoeDsa);
  tiny::testing::TempDir const a("synthetic_seed_a");
  tiny::testing::TempDir const b("synthetic_seed_b");
  REQUIRE(write_synthetic_checkpoint(config, a.path(), 11, 1).ok());
  REQUIRE(write_synthetic_checkpoint(config, b.path(), 11, 4).ok());
  auto const ca = checkpoint::Checkpoint::open(a.path());
  auto const cb = checkpoint::Checkpoint::open(b.path());
  REQUIRE(ca.ok());
  REQUIRE(cb.ok());
  auto const va = ca->tensor("model.layers.2.mlp.experts.5.gate_proj.weight");
  auto const vb = cb->tensor("model.layers.2.mlp.experts.5.gate_proj.weight");
  REQUIRE(va.ok());
  REQUIRE(vb.ok());
  REQUIRE(va->bytes.size() == vb->bytes.size());
  CHECK(std::memcmp(va->bytes.data(), vb->bytes.data(), va->bytes.size()) == 0);
}

}  // namespace
}  // namespace gcmoe::model
