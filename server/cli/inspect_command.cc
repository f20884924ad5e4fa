// `gcmoe inspect DIR [--ranks N]`: what a checkpoint directory holds and what each expert-parallel
// rank would load — model type, dense/MoE layers, experts, storage formats, bytes per expert,
// total bytes, bytes per rank (contiguous E/N experts + the replicated weights). Reads config.json
// and the safetensors headers only, never tensor data; with config.json alone the bytes are
// estimated from the config.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint_inventory.h"
#include "engine/checkpoint/checkpoint_layout.h"
#include "engine/checkpoint/safetensors_writer.h"
#include "engine/common/check.h"
#include "engine/config/expert_partition.h"
#include "engine/config/parse_model_config.h"
#include "engine/config/size_estimate.h"
#include "server/cli/command.h"

namespace gcmoe::cli {
namespace {

struct InspectOptions {
  std::string dir;
  std::int64_t ranks = 1;
};

// "37,757,952 B (36.01 MiB)".
std::string bytes_text(std::int64_t bytes) {
  std::string digits = std::to_string(bytes);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) {
    digits.insert(static_cast<std::size_t>(at), ",");
  }
  double value = static_cast<double>(bytes);
  char const* unit = "B";
  for (char const* next : {"KiB", "MiB", "GiB", "TiB"}) {
    if (value < 1024.0) {
      break;
    }
    value /= 1024.0;
    unit = next;
  }
  return fmt::format("{} B ({:.2f} {})", digits, value, unit);
}

void print_row(std::string_view key, std::string_view value) {
  fmt::print("{:<15} {}\n", key, value);
}

void print_config(config::ModelConfig const& c) {
  print_row("model_type", config::model_family_name(c.family));
  print_row("layers",
            fmt::format("{} = {} dense + {} MoE; {} MTP/DSpark stage(s)", c.num_hidden_layers,
                        c.first_dense_layers, c.moe_layer_count(), c.num_nextn_predict_layers));
  print_row(
      "experts",
      fmt::format("{} routed per MoE layer, top-{}, {} shared; {} scores, scale {}",
                  c.moe.n_routed_experts, c.moe.num_experts_per_tok, c.moe.n_shared_experts,
                  config::scoring_func_name(c.moe.scoring_func), c.moe.routed_scaling_factor));
  print_row("formats", fmt::format("dense: {}; experts: {}", config::describe(c.dense_format),
                                   config::describe(c.expert_format)));
}

// One line per rank: its contiguous share of each distinct expert count, and the bytes it loads.
Status print_ranks(std::int64_t ranks, std::vector<std::int64_t> const& expert_counts,
                   std::function<StatusOr<std::int64_t>(std::int64_t)> const& rank_bytes) {
  for (std::int64_t rank = 0; rank < ranks; ++rank) {
    std::vector<std::string> shares;
    for (std::int64_t const experts : expert_counts) {
      GCMOE_ASSIGN_OR_RETURN(config::ExpertRange const range,
                             config::experts_of_rank(experts, ranks, rank));
      shares.push_back(fmt::format("[{}, {}) of {}", range.begin, range.end, experts));
    }
    GCMOE_ASSIGN_OR_RETURN(std::int64_t const bytes, rank_bytes(rank));
    print_row(
        rank == 0 ? fmt::format("ranks ({})", ranks) : "",
        fmt::format("rank {}: experts {}; {}", rank, fmt::join(shares, ", "), bytes_text(bytes)));
  }
  return Status();
}

Status print_estimate(config::ModelConfig const& c, std::int64_t ranks) {
  config::SizeEstimate const estimate = config::estimate_sizes(c);
  print_row("source",
            "config.json only: bytes ESTIMATED from the config (replicated part is a lower bound: "
            "compressors, indexers, Engram and MTP/DSpark weights not counted)");
  print_row("bytes/expert", bytes_text(estimate.bytes_per_expert));
  print_row("routed experts",
            fmt::format("{} ({} layers x {} experts)", bytes_text(estimate.routed_expert_bytes),
                        estimate.moe_layers, estimate.experts_per_layer));
  print_row("replicated", bytes_text(estimate.replicated_bytes));
  print_row("total", bytes_text(estimate.total_bytes()));
  return print_ranks(ranks, {estimate.experts_per_layer},
                     [&](std::int64_t rank) { return estimate.rank_bytes(ranks, rank); });
}

// Blocks grouped by (experts, bytes of expert 0): "75 x 256 experts, 37,757,952 B each".
void print_blocks(checkpoint::CheckpointInventory const& inventory) {
  std::map<std::pair<std::size_t, std::int64_t>, std::vector<std::string>> groups;
  for (checkpoint::ExpertBlock const& block : inventory.blocks) {
    groups[{block.expert_bytes.size(), block.expert_bytes.front()}].push_back(block.prefix);
  }
  bool first = true;
  for (auto const& [key, prefixes] : groups) {
    std::string const span = prefixes.size() == 1
                                 ? prefixes.front()
                                 : fmt::format("{} .. {}", prefixes.front(), prefixes.back());
    print_row(first ? "expert blocks" : "",
              fmt::format("{} x {} experts, {} per expert ({})", prefixes.size(), key.first,
                          bytes_text(key.second), span));
    first = false;
  }
}

Status print_headers(checkpoint::CheckpointLayout const& layout, std::int64_t ranks) {
  GCMOE_ASSIGN_OR_RETURN(checkpoint::CheckpointInventory const inventory,
                         checkpoint::take_inventory(layout));
  print_row("source", fmt::format("safetensors headers of {} shard(s), {} tensors (no tensor "
                                  "data read)",
                                  layout.shards().size(), inventory.tensor_count));
  print_blocks(inventory);
  std::vector<std::string> dtypes;
  for (auto const& [dtype, bytes] : inventory.expert_bytes_by_dtype) {
    dtypes.push_back(fmt::format("{} {}", dtype, bytes_text(bytes)));
  }
  print_row("expert dtypes", fmt::format("{}", fmt::join(dtypes, "; ")));
  print_row("routed experts", bytes_text(inventory.routed_expert_bytes));
  print_row("replicated", bytes_text(inventory.replicated_bytes));
  print_row("total", bytes_text(inventory.total_bytes()));
  std::vector<std::int64_t> expert_counts;
  for (checkpoint::ExpertBlock const& block : inventory.blocks) {
    auto const count = static_cast<std::int64_t>(block.expert_bytes.size());
    if (std::find(expert_counts.begin(), expert_counts.end(), count) == expert_counts.end()) {
      expert_counts.push_back(count);
    }
  }
  return print_ranks(ranks, expert_counts,
                     [&](std::int64_t rank) { return inventory.rank_bytes(ranks, rank); });
}

Status run_inspect(InspectOptions const& options) {
  std::filesystem::path const dir(options.dir);
  std::filesystem::path const config_path = dir / "config.json";
  bool const has_config = std::filesystem::exists(config_path);
  bool const has_weights = std::filesystem::exists(dir / checkpoint::kIndexFileName) ||
                           std::filesystem::exists(dir / checkpoint::kSingleFileName);
  if (!has_config && !has_weights) {
    return not_found_error(fmt::format("{}: no config.json, {} or {}", dir.string(),
                                       checkpoint::kIndexFileName, checkpoint::kSingleFileName));
  }
  print_row("directory", dir.string());
  std::optional<config::ModelConfig> model;
  if (has_config) {
    GCMOE_ASSIGN_OR_RETURN(model, config::load_model_config(config_path));
    print_config(*model);
  }
  if (!has_weights) {
    return print_estimate(*model, options.ranks);
  }
  GCMOE_ASSIGN_OR_RETURN(checkpoint::CheckpointLayout const layout,
                         checkpoint::CheckpointLayout::read(dir));
  return print_headers(layout, options.ranks);
}

}  // namespace

CommandRunner add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand(
      "inspect", "Summarize a checkpoint directory (config.json + safetensors headers)");
  sub->add_option("dir", options->dir, "Checkpoint directory (or one holding only config.json)")
      ->required();
  sub->add_option("--ranks", options->ranks,
                  "Expert-parallel ranks to report bytes for (rank r: contiguous E/N experts)")
      ->check(CLI::PositiveNumber);
  return [options] { return run_inspect(*options); };
}

}  // namespace gcmoe::cli
