#include "engine/checkpoint/checkpoint_inventory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include "engine/common/check.h"
#include "engine/config/expert_partition.h"

namespace gcmoe::checkpoint {
namespace {

struct ExpertName {
  std::string_view prefix;
  std::int64_t expert = 0;
};

// "<prefix>.experts.<digits>.<rest>" -> prefix and expert index; shared_experts do not match.
std::optional<ExpertName> parse_expert_name(std::string_view name) {
  constexpr std::string_view kMarker = ".experts.";
  std::size_t const at = name.find(kMarker);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  std::size_t pos = at + kMarker.size();
  std::int64_t expert = 0;
  std::size_t digits = 0;
  // Seven digits bound the index far above any real expert count and keep it from overflowing.
  while (pos < name.size() && std::isdigit(static_cast<unsigned char>(name[pos])) != 0 &&
         digits < 7) {
    expert = expert * 10 + (name[pos] - '0');
    ++pos;
    ++digits;
  }
  if (digits == 0 || pos >= name.size() || name[pos] != '.') {
    return std::nullopt;
  }
  return ExpertName{name.substr(0, at), expert};
}

// Orders "layers.2.ffn" before "layers.10.ffn": digit runs compare as numbers.
bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    bool const da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    bool const db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i;
      std::size_t ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])) != 0) {
        ++ei;
      }
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])) != 0) {
        ++ej;
      }
      std::string_view const na = a.substr(i, ei - i);
      std::string_view const nb = b.substr(j, ej - j);
      if (na.size() != nb.size()) {
        return na.size() < nb.size();
      }
      if (na != nb) {
        return na < nb;
      }
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) {
        return a[i] < b[j];
      }
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

StatusOr<std::int64_t> CheckpointInventory::rank_bytes(std::int64_t ranks,
                                                       std::int64_t rank) const {
  std::int64_t bytes = replicated_bytes;
  for (ExpertBlock const& block : blocks) {
    auto const range =
        config::experts_of_rank(static_cast<std::int64_t>(block.expert_bytes.size()), ranks, rank);
    if (!range.ok()) {
      return range.status().with_context(block.prefix);
    }
    for (std::int64_t e = range->begin; e < range->end; ++e) {
      bytes += block.expert_bytes[static_cast<std::size_t>(e)];
    }
  }
  return bytes;
}

StatusOr<CheckpointInventory> take_inventory(CheckpointLayout const& layout) {
  CheckpointInventory inventory;
  std::map<std::string, std::map<std::int64_t, std::int64_t>, std::less<>> experts;
  for (ShardHeader const& shard : layout.shards()) {
    for (TensorInfo const& tensor : shard.header.tensors) {
      auto const size = static_cast<std::int64_t>(tensor.size);
      std::string const dtype(dtype_name(tensor.dtype));
      ++inventory.tensor_count;
      inventory.bytes_by_dtype[dtype] += size;
      if (auto const expert = parse_expert_name(tensor.name)) {
        experts[std::string(expert->prefix)][expert->expert] += size;
        inventory.expert_bytes_by_dtype[dtype] += size;
        inventory.routed_expert_bytes += size;
      } else {
        inventory.replicated_bytes += size;
      }
    }
  }
  for (auto const& [prefix, by_expert] : experts) {
    ExpertBlock block{prefix, {}};
    for (auto const& [index, bytes] : by_expert) {
      if (index != static_cast<std::int64_t>(block.expert_bytes.size())) {
        return invalid_argument_error(
            fmt::format("{}: MoE block '{}' has expert {} but no expert {}", layout.dir().string(),
                        prefix, index, block.expert_bytes.size()));
      }
      block.expert_bytes.push_back(bytes);
    }
    inventory.blocks.push_back(std::move(block));
  }
  std::sort(
      inventory.blocks.begin(), inventory.blocks.end(),
      [](ExpertBlock const& a, ExpertBlock const& b) { return natural_less(a.prefix, b.prefix); });
  return inventory;
}

}  // namespace gcmoe::checkpoint
