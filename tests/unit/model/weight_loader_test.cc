// Loading the tiny checkpoints of every family on N = 1, 2, 4 host ranks: each rank holds its
// experts and every replicated tensor, byte-identical to the checkpoint; the ranks' expert bytes
// add up to the checkpoint's (counted independently by the inventory), no expert twice.
#include "engine/model/weight_loader.h"

#include <cstring>
#include <map>
#include <set>
#include <string>

#include "engine/checkpoint/checkpoint_inventory.h"
#include "engine/model/weights/model_weight_spec.h"
#include "tests/support/catch.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::model {
namespace {

using config::ModelFamily;

struct Opened {
  ModelDescription model;
  checkpoint::Checkpoint checkpoint;
};

Opened open_tiny(ModelFamily const family) {
  std::filesystem::path const dir = tiny::testing::written_model(family).dir->path();
  auto model = describe_model(dir);
  REQUIRE(model.ok());
  auto checkpoint = checkpoint::Checkpoint::open(dir);
  REQUIRE(checkpoint.ok());
  return {std::move(model).value(), std::move(checkpoint).value()};
}

LoadedWeights load(Opened const& opened, RankSelection const& selection, int workers = 3,
                   std::int64_t piece_bytes = kDefaultCopyPieceBytes) {
  LoadOptions options;
  options.selection = selection;
  options.workers = workers;
  options.copy_piece_bytes = piece_bytes;
  auto loaded = load_weights(opened.checkpoint, opened.model.spec, options,
                             std::make_unique<HostWeightStore>());
  INFO(loaded.status().to_string());
  REQUIRE(loaded.ok());
  return std::move(loaded).value();
}

// Every tensor placed as stored holds the checkpoint's bytes.
void check_bytes(Opened const& opened, LoadedWeights const& loaded, ModelSpec const& spec,
                 bool const with_mtp) {
  for_each_tensor(spec, with_mtp, [&](TensorSpec const& tensor) {
    auto const placement = loaded.find(tensor.name);
    if (!placement.ok()) {
      return;  // another rank's expert
    }
    auto const view = opened.checkpoint.tensor(tensor.name);
    REQUIRE(view.ok());
    auto const bytes = loaded.host_bytes(*placement);
    REQUIRE(bytes.ok());
    INFO(tensor.name);
    REQUIRE(bytes->size() == view->bytes.size());
    CHECK(std::memcmp(bytes->data(), view->bytes.data(), bytes->size()) == 0);
  });
}

TEST_CASE("every family loads on 1, 2 and 4 ranks with each rank holding its experts") {
  for (ModelFamily const family :
       {ModelFamily::kGlmMoeDsa, ModelFamily::kDeepseekV4, ModelFamily::kDeepseekV41}) {
    Opened const opened = open_tiny(family);
    auto const inventory = checkpoint::take_inventory(opened.checkpoint.layout());
    REQUIRE(inventory.ok());
    for (std::int64_t const ranks : {1, 2, 4}) {
      INFO(config::model_family_name(family) << " on " << ranks << " ranks");
      std::int64_t expert_bytes = 0;
      std::map<std::string, std::set<std::int64_t>> owned;  // block -> experts over all ranks
      std::size_t expert_count = 0;
      for (std::int64_t rank = 0; rank < ranks; ++rank) {
        RankSelection const selection{ranks, rank, /*with_mtp=*/true, nullptr, nullptr};
        LoadedWeights const loaded = load(opened, selection);
        LoadStats const& stats = loaded.stats();
        // Replicated weights: everything but routed experts, identical on every rank.
        CHECK(stats.replicated_bytes == inventory->replicated_bytes);
        auto const expected = inventory->rank_bytes(ranks, rank);
        REQUIRE(expected.ok());
        CHECK(stats.source_bytes == *expected);
        expert_bytes += stats.expert_bytes;
        for (LocalExpertBlock const& block : loaded.expert_blocks()) {
          CHECK(static_cast<std::int64_t>(block.experts.size()) * ranks == block.experts_in_block);
          for (std::int64_t const e : block.experts) {
            CHECK(owned[block.prefix].insert(e).second);  // no expert on two ranks
            ++expert_count;
          }
        }
        check_bytes(opened, loaded, opened.model.spec, true);
      }
      CHECK(expert_bytes == inventory->routed_expert_bytes);
      std::size_t in_checkpoint = 0;
      for (checkpoint::ExpertBlock const& block : inventory->blocks) {
        in_checkpoint += block.expert_bytes.size();
        CHECK(owned[block.prefix].size() == block.expert_bytes.size());
      }
      CHECK(expert_count == in_checkpoint);
    }
  }
}

TEST_CASE("contiguous placement gives rank r experts [r·E/N, (r+1)·E/N)") {
  Opened const opened = open_tiny(ModelFamily::kGlmMoeDsa);
  LoadedWeights const loaded = load(opened, {4, 2, false, nullptr, nullptr});
  REQUIRE(loaded.expert_blocks().size() == 3);  // trunk MoE layers 1..3, MTP skipped
  CHECK(loaded.expert_blocks()[0].experts == std::vector<std::int64_t>{8, 9, 10, 11});
  CHECK(loaded.find("model.layers.1.mlp.experts.8.up_proj.weight").ok());
  CHECK(loaded.find("model.layers.1.mlp.experts.12.up_proj.weight").status().code() ==
        StatusCode::kNotFound);
  CHECK(loaded.find("model.layers.4.input_layernorm.weight").status().code() ==
        StatusCode::kNotFound);  // the MTP layer
  CHECK(loaded.find("model.embed_tokens.weight").ok());
}

TEST_CASE("a plugged-in placement decides the experts") {
  Opened const opened = open_tiny(ModelFamily::kDeepseekV41);
  OwnerMapPlacement const round_robin = round_robin_placement();
  LoadedWeights const loaded = load(opened, {4, 1, true, &round_robin, nullptr});
  for (LocalExpertBlock const& block : loaded.expert_blocks()) {
    INFO(block.prefix);
    for (std::int64_t const e : block.experts) {
      CHECK(e % 4 == 1);
    }
    CHECK(static_cast<std::int64_t>(block.experts.size()) == block.experts_in_block / 4);
  }
  CHECK(loaded.find("layers.0.ffn.experts.5.w2.scale").ok());
  CHECK_FALSE(loaded.find("layers.0.ffn.experts.4.w2.scale").ok());
  check_bytes(opened, loaded, opened.model.spec, true);
}

TEST_CASE("a placement that does not divide the experts is an error naming the block") {
  Opened const opened = open_tiny(ModelFamily::kDeepseekV4);
  LoadOptions options;
  options.selection = {3, 0, false, nullptr, nullptr};
  auto const loaded = load_weights(opened.checkpoint, opened.model.spec, options,
                                   std::make_unique<HostWeightStore>());
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().message().find("layers.0.ffn") != std::string::npos);
  CHECK(loaded.status().message().find("16 experts do not split evenly over 3 ranks") !=
        std::string::npos);
}

TEST_CASE("worker count and copy piece size do not change what is loaded") {
  Opened const opened = open_tiny(ModelFamily::kGlmMoeDsa);
  LoadedWeights const one = load(opened, {2, 1, true, nullptr, nullptr}, 1);
  // 1000-byte pieces split most tensors, at offsets that are not element-aligned.
  LoadedWeights const many = load(opened, {2, 1, true, nullptr, nullptr}, 7, 1000);
  CHECK(one.stats().workers == 1);
  CHECK(many.stats().workers == 7);
  REQUIRE(one.store().size() == many.store().size());
  std::size_t compared = 0;
  for_each_tensor(opened.model.spec, true, [&](TensorSpec const& tensor) {
    auto const a = one.find(tensor.name);
    auto const b = many.find(tensor.name);
    REQUIRE(a.ok() == b.ok());
    if (a.ok()) {
      CHECK(a->offset == b->offset);
      CHECK(std::memcmp(one.host_bytes(*a)->data(), many.host_bytes(*b)->data(),
                        static_cast<std::size_t>(a->bytes)) == 0);
      ++compared;
    }
  });
  CHECK(compared == static_cast<std::size_t>(one.stats().tensors));
  CHECK(many.stats().tensors == one.stats().tensors);  // pieces count their tensor once
  CHECK(many.stats().source_bytes == one.stats().source_bytes);
}

}  // namespace
}  // namespace gcmoe::model
