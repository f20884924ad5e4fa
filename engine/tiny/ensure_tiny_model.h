#pragma once
// Weights of a tiny model generated on first use: the embedded default ships only its
// config.json (configs/models/tiny-glm-5.2/); whoever serves it calls ensure_tiny_model with a
// cache directory, and the checkpoint is written there once, then reused.

#include <cstdint>
#include <filesystem>

#include "engine/common/status.h"

namespace gcmoe::tiny {

// The seed of the embedded default model's weights.
inline constexpr std::uint64_t kEmbeddedDefaultSeed = 0;

// Returns `dir` once it holds the checkpoint of `config_path` at `seed`: reused when its
// config.json and seed marker match, otherwise (re)generated into a sibling temporary directory
// and renamed into place, so a reader never sees a half-written model.
StatusOr<std::filesystem::path> ensure_tiny_model(std::filesystem::path const& config_path,
                                                  std::filesystem::path const& dir,
                                                  std::uint64_t seed);

}  // namespace gcmoe::tiny
