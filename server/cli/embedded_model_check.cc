#include "server/cli/embedded_model_check.h"

#include <fmt/format.h>

#include <memory>

#include "engine/checkpoint/checkpoint.h"
#include "engine/common/check.h"
#include "engine/model/expert_layout_transform.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weight_store.h"
#include "engine/model/weights/model_weight_spec.h"
#include "engine/tiny/ensure_tiny_model.h"

namespace gcmoe::cli {

Status check_embedded_model(EmbeddedModelCheck const& check) {
  GCMOE_CHECK_ARG(std::filesystem::exists(check.config),
                  "embedded default config {} not found (run from the repository root)",
                  check.config.string());
  GCMOE_ASSIGN_OR_RETURN(
      std::filesystem::path const dir,
      tiny::ensure_tiny_model(check.config, check.cache_dir, tiny::kEmbeddedDefaultSeed));
  GCMOE_ASSIGN_OR_RETURN(model::ModelDescription const model, model::describe_model(dir));
  GCMOE_ASSIGN_OR_RETURN(checkpoint::Checkpoint const checkpoint,
                         checkpoint::Checkpoint::open(dir));
  GCMOE_RETURN_IF_ERROR(model::check_spec(checkpoint.layout(), model.spec, false));
  fmt::print("model: embedded default {} at {} ({} layers, {} routed experts, top-{})\n",
             config::model_family_name(model.config.family), dir.string(),
             model.config.num_hidden_layers, model.config.moe.n_routed_experts,
             model.config.moe.num_experts_per_tok);

  std::unique_ptr<model::ExpertLayoutTransform> const transform =
      model::default_expert_transform(model.config);
  std::int64_t whole_experts = 0;
  std::int64_t whole_expert_bytes = 0;
  for (std::int64_t const ranks : {1, 2}) {
    std::int64_t experts = 0;
    std::int64_t expert_bytes = 0;
    for (std::int64_t rank = 0; rank < ranks; ++rank) {
      model::LoadOptions load;
      load.selection = {ranks, rank, false, nullptr, transform.get()};
      load.workers = check.workers;
      GCMOE_ASSIGN_OR_RETURN(model::LoadedWeights const loaded,
                             model::load_weights(checkpoint, model.spec, load,
                                                 std::make_unique<model::HostWeightStore>()));
      model::LoadStats const& s = loaded.stats();
      fmt::print(
          "model: rank {}/{} loaded {} tensors, {} experts, {:.2f} MB ({:.2f} MB experts, "
          "{} layout) in {:.3f} s\n",
          s.rank, s.ranks, s.tensors, s.experts, s.source_bytes / 1e6, s.expert_bytes / 1e6,
          transform ? transform->name() : std::string_view("release"), s.seconds);
      experts += s.experts;
      expert_bytes += s.expert_bytes;
    }
    if (ranks == 1) {
      whole_experts = experts;
      whole_expert_bytes = expert_bytes;
    }
    GCMOE_CHECK_INTERNAL(experts == whole_experts && expert_bytes == whole_expert_bytes,
                         "{} ranks loaded {} experts ({} B) in all, one rank loads {} ({} B)",
                         ranks, experts, expert_bytes, whole_experts, whole_expert_bytes);
  }
  return Status();
}

}  // namespace gcmoe::cli
