#include "engine/model/glm/glm_model_loader.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "engine/checkpoint/checkpoint.h"
#include "engine/common/check.h"
#include "engine/model/glm/glm_dims.h"
#include "engine/model/glm/glm_step_model.h"
#include "engine/model/glm/glm_weights.h"
#include "engine/model/glm/kv_cache.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weight_store.h"
#include "engine/model/weights/model_weight_spec.h"

namespace gcmoe::model::glm {
namespace {

StatusOr<nlohmann::json> read_config_json(std::filesystem::path const& path) {
  std::ifstream in(path);
  if (!in) {
    return not_found_error(fmt::format("cannot read {}", path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, false);
  GCMOE_CHECK_ARG(!json.is_discarded() && json.is_object(), "{} is not a JSON object",
                  path.string());
  return json;
}

std::int64_t elements(TensorSpec const& tensor) {
  std::int64_t n = 1;
  for (std::int64_t const d : tensor.shape) {
    n *= d;
  }
  return n;
}

// fp32 bytes this rank will hold: every replicated tensor, its share of the routed experts
// (rounded up), and the KV cache.
std::int64_t fp32_bytes(ModelSpec const& spec, GlmDims const& dims, std::int64_t const ranks,
                        StepModelOptions const& options) {
  std::int64_t floats = elements(spec.embed) + elements(spec.final_norm) + elements(spec.lm_head);
  for (BlockSpec const& block : spec.layers) {
    for_each_replicated(block, [&floats](TensorSpec const& t) { floats += elements(t); });
    if (block.moe.has_value() && !block.moe->experts.empty()) {
      std::int64_t per_expert = 0;
      for_each_tensor(block.moe->experts.front(),
                      [&per_expert](TensorSpec const& t) { per_expert += elements(t); });
      auto const experts = static_cast<std::int64_t>(block.moe->experts.size());
      floats += per_expert * ((experts + ranks - 1) / ranks);
    }
  }
  std::int64_t const kv_floats_per_token =
      dims.layers * dims.latent_width() + dims.full_indexer_layers() * dims.index_head_dim;
  floats += kv_floats_per_token * options.kv_blocks * options.kv_block_size;
  return floats * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t host_memory_bytes() {
  long const pages = ::sysconf(_SC_PHYS_PAGES);
  long const page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : 0;
}

}  // namespace

StatusOr<std::unique_ptr<runtime::StepModel>> load_glm_step_model(StepModelOptions const& options,
                                                                  runtime::Communicator& comm) {
  GCMOE_CHECK_ARG(
      options.kv_blocks > 0 && options.kv_block_size > 0 && options.max_batch_tokens > 0,
      "kv_blocks {}, kv_block_size {} and max_batch_tokens {} must be positive", options.kv_blocks,
      options.kv_block_size, options.max_batch_tokens);
  auto const started = std::chrono::steady_clock::now();
  GCMOE_ASSIGN_OR_RETURN(ModelDescription const model, describe_model(options.model_dir));
  GCMOE_ASSIGN_OR_RETURN(nlohmann::json const json,
                         read_config_json(options.model_dir / "config.json"));
  GCMOE_ASSIGN_OR_RETURN(GlmDims dims, glm_dims(model.config, json));
  // The CPU step holds fp32 copies: a real-size checkpoint does not fit; say so before loading.
  std::int64_t const needed = fp32_bytes(model.spec, dims, comm.world_size(), options);
  std::int64_t const memory = host_memory_bytes();
  if (memory > 0 && needed > memory) {
    return resource_exhausted_error(fmt::format(
        "{}: the CPU step of rank {}/{} needs {:.1f} GB of host memory for fp32 weights and the "
        "KV cache; this machine has {:.1f} GB (use more ranks, fewer KV blocks or the CUDA "
        "backend)",
        options.model_dir.string(), comm.rank(), comm.world_size(), needed / 1e9, memory / 1e9));
  }
  GCMOE_ASSIGN_OR_RETURN(checkpoint::Checkpoint const checkpoint,
                         checkpoint::Checkpoint::open(options.model_dir));
  Status const matches = check_spec(checkpoint.layout(), model.spec, false);
  if (!matches.ok()) {
    return data_loss_error(fmt::format("{}: {}", options.model_dir.string(), matches.message()));
  }
  LoadOptions load;
  // Experts stay in the release layout (no transform): the CPU step dequantizes them by name.
  load.selection = {comm.world_size(), comm.rank(), false, nullptr, nullptr};
  GCMOE_ASSIGN_OR_RETURN(
      LoadedWeights const loaded,
      load_weights(checkpoint, model.spec, load, std::make_unique<HostWeightStore>()));
  GCMOE_ASSIGN_OR_RETURN(GlmWeights weights, read_glm_weights(loaded, model.spec, dims));

  std::unique_ptr<KvCache> cache;
  try {
    cache = std::make_unique<KvCache>(dims, options.kv_blocks, options.kv_block_size);
  } catch (std::bad_alloc const&) {
    return resource_exhausted_error(
        fmt::format("the KV cache of {} blocks × {} positions does not fit in host memory",
                    options.kv_blocks, options.kv_block_size));
  }
  double const seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spdlog::info(
      "glm_moe_dsa CPU model: rank {}/{}, {} layers ({} full indexer), {} local experts per MoE "
      "layer, KV cache {} blocks × {} ({:.1f} MB, {} B/token), loaded in {:.2f} s",
      comm.rank(), comm.world_size(), dims.layers, dims.full_indexer_layers(),
      weights.layers.empty() || !weights.layers.back().moe
          ? 0
          : weights.layers.back().moe->local_experts.size(),
      options.kv_blocks, options.kv_block_size,
      static_cast<double>(cache->floats_per_token()) * 4.0 * options.kv_blocks *
          options.kv_block_size / 1e6,
      cache->floats_per_token() * 4, seconds);
  return std::unique_ptr<runtime::StepModel>(std::make_unique<GlmStepModel>(
      std::move(dims), std::move(weights), std::move(cache), options.max_batch_tokens, comm));
}

}  // namespace gcmoe::model::glm
