#pragma once
// A release config.json cut down to a few trunk layers at full width, for load benchmarks: the
// layer count changes and everything that refers to layers past it follows, and the parts that
// are not a layer stack are dropped — MTP/DSpark stages, and V4.1's Engram tables (~98 GB per
// layer). GLM-5.2 keeps one dense layer ahead of its MoE layers when layers >= 2.

#include <cstdint>
#include <nlohmann/json.hpp>

#include "engine/common/status.h"

namespace gcmoe::model {

StatusOr<nlohmann::json> layer_stack_config(nlohmann::json const& release_config,
                                            std::int64_t layers);

}  // namespace gcmoe::model
