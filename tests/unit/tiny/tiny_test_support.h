#pragma once
// Shared by the tiny-model tests: each family's tiny checkpoint written once per test binary into
// a temporary directory (removed at exit), and its header set read back through the checkpoint
// reader.

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/tiny/make_tiny.h"
#include "engine/tiny/tiny_config.h"
#include "tests/support/catch.h"

namespace gcmoe::tiny::testing {

inline constexpr std::uint64_t kTestSeed = 1234;

class TempDir {
 public:
  explicit TempDir(std::string const& tag)
      : path_(std::filesystem::temp_directory_path() /
              fmt::format("gcmoe_tiny_test_{}_{}", ::getpid(), tag)) {
    std::filesystem::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(TempDir const&) = delete;
  TempDir& operator=(TempDir const&) = delete;

  std::filesystem::path const& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct WrittenModel {
  std::unique_ptr<TempDir> dir;
  TinyModelSummary summary;
};

// The family's tiny model at kTestSeed, written on first use.
inline WrittenModel const& written_model(config::ModelFamily const family) {
  static std::map<config::ModelFamily, WrittenModel> models;
  auto it = models.find(family);
  if (it == models.end()) {
    WrittenModel model{std::make_unique<TempDir>(std::string(config::model_family_name(family))),
                       {}};
    auto const summary = write_tiny_model(tiny_config_json(family), model.dir->path(), kTestSeed);
    INFO(summary.status().to_string());
    REQUIRE(summary.ok());
    model.summary = *summary;
    it = models.emplace(family, std::move(model)).first;
  }
  return it->second;
}

struct HeaderEntry {
  checkpoint::DType dtype;
  std::vector<std::int64_t> shape;
};

// name -> (dtype, shape) over every shard of a checkpoint directory.
inline std::map<std::string, HeaderEntry> read_headers(std::filesystem::path const& dir) {
  auto layout = checkpoint::CheckpointLayout::read(dir);
  INFO(layout.status().to_string());
  REQUIRE(layout.ok());
  std::map<std::string, HeaderEntry> headers;
  for (checkpoint::ShardHeader const& shard : layout->shards()) {
    for (checkpoint::TensorInfo const& tensor : shard.header.tensors) {
      headers[tensor.name] = {tensor.dtype, tensor.shape};
    }
  }
  return headers;
}

inline bool ends_with(std::string const& s, std::string const& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

inline bool starts_with(std::string const& s, std::string const& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace gcmoe::tiny::testing
