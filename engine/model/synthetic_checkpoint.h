#pragma once
// Full-size synthetic checkpoints for load benchmarks: the tensor list the tiny planner makes of
// any config (so real dimensions give the release's names, dtypes and shapes), written without
// holding tensors in memory — shard files are sized up front and filled in parallel, 16 MiB at
// a time, with cheap pseudo-random values in each dtype's range (e4m3 codes without NaN, e8m0
// scales near 1, f32 scale_inv near 2e-4, BF16/F32 around the planner's init). Tens of GB in
// well under a minute on 16 cores with a fast disk. Values are not a quantization of anything:
// for correctness tests use tiny::write_tiny_model.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/common/status.h"

namespace gcmoe::model {

// Shards of at most this many data bytes (the releases use ~4-5 GB).
inline constexpr std::int64_t kSyntheticShardBytes = 4LL << 30;

struct SyntheticSummary {
  std::int64_t tensors = 0;
  std::int64_t bytes = 0;  // tensor data, as index.json's total_size
  std::int64_t shards = 0;
  double seconds = 0.0;
};

// Writes config.json, shards and model.safetensors.index.json into `dir` (created if needed).
// `threads` 0: one per hardware thread.
StatusOr<SyntheticSummary> write_synthetic_checkpoint(
    nlohmann::json const& config_json, std::filesystem::path const& dir, std::uint64_t seed,
    int threads, std::int64_t max_shard_bytes = kSyntheticShardBytes);

// Flushes every file of `dir` to disk and drops it from the page cache (fdatasync +
// POSIX_FADV_DONTNEED; no privileges needed), so the next read comes from the disk.
Status drop_page_cache(std::filesystem::path const& dir);

}  // namespace gcmoe::model
