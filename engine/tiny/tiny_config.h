#pragma once
// The config.json of each family's tiny model: the release's config with its dimensions shrunk
// (hidden 256, 4-6 layers that still include the dense / hash / compressed / indexer / Engram /
// MTP kinds, 16 experts, vocab 1024) and every other key kept, so the same parser and tensor
// planner handle tiny and real checkpoints.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/config/model_config.h"

namespace gcmoe::tiny {

nlohmann::json tiny_config_json(config::ModelFamily family);

// Engram table rows per layer as V4.1 sizes them: each layer gathers `lookups` hashed rows, each
// from its own bucket whose size is the next prime after the previous one, starting above
// `vocab_size` (engram_vocab_size); a layer's table is the sum of its buckets. With the release's
// 16,000,000, 24 lookups and 2 layers this gives its [384006168, 384016682].
std::vector<std::int64_t> engram_table_rows(std::int64_t vocab_size, std::int64_t lookups,
                                            std::int64_t layers);

}  // namespace gcmoe::tiny
