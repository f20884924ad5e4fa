#pragma once
// The embedded default model end to end, as far as the engine goes today: its weights are made on
// first use from configs/models/tiny-glm-5.2/config.json (a tiny model in the real GLM-5.2-FP8
// checkpoint layout), checked against the family's weight mapping, and loaded through the rank
// loader as rank r of N for N = 1 and 2 (host memory; the GLM FP8 expert layout transform on),
// checking that the ranks' experts add up to the whole. Part of `gcmoe smoke`.

#include <filesystem>

#include "engine/common/status.h"

namespace gcmoe::cli {

struct EmbeddedModelCheck {
  std::filesystem::path config = "configs/models/tiny-glm-5.2/config.json";
  std::filesystem::path cache_dir = ".cache/gcmoe/tiny-glm-5.2";  // GCMOE_CACHE_DIR overrides
  int workers = 2;
};

Status check_embedded_model(EmbeddedModelCheck const& check);

}  // namespace gcmoe::cli
