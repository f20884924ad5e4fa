#pragma once
// The config.json fields the three families spell alike (dimensions, MoE routing, norms) and the
// cross-field checks every family needs. Family parsers call these on the object holding the text
// model (the root, or V4.1's text_config).

#include "engine/common/status.h"
#include "engine/config/json_fields.h"
#include "engine/config/model_config.h"

namespace gcmoe::config {

// Fills the dimension and MoE fields of `config`; the family parser sets the rest.
Status parse_common_fields(JsonFields const& text, ModelConfig& config);

// Checks of a filled config: positive sizes, top-k within the experts, dense layers within the
// layers, MXFP4 experts with K dims divisible by 32. Errors name the field through `text`.
Status validate_common_fields(JsonFields const& text, ModelConfig const& config);

// Each of `ids` is a layer index in [0, layers); otherwise an error naming `key`.
Status check_layer_ids(JsonFields const& fields, char const* key,
                       std::vector<std::int64_t> const& ids, std::int64_t layers);

}  // namespace gcmoe::config
