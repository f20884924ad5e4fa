// The embedded default's weights are generated once from its committed config, then reused.
#include "engine/tiny/ensure_tiny_model.h"

#include <filesystem>
#include <fstream>

#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::tiny {
namespace {

TEST_CASE("ensure_tiny_model writes the embedded default once and regenerates on a new seed") {
  testing::TempDir const base("ensure");
  std::filesystem::create_directories(base.path());
  std::filesystem::path const dir = base.path() / "tiny-glm-5.2";
  auto const first = ensure_tiny_model(GCMOE_TINY_DEFAULT_CONFIG, dir, kEmbeddedDefaultSeed);
  INFO(first.status().to_string());
  REQUIRE(first.ok());
  CHECK(*first == dir);
  auto const headers = testing::read_headers(dir);
  CHECK(headers.count("model.layers.1.mlp.experts.0.gate_proj.weight_scale_inv") == 1);
  std::filesystem::path const shard = dir / "model-00001-of-00005.safetensors";
  REQUIRE(std::filesystem::exists(shard));

  // A second call reuses the files: mark one and see the mark survive.
  { std::ofstream(dir / "reuse-mark") << "x"; }
  REQUIRE(ensure_tiny_model(GCMOE_TINY_DEFAULT_CONFIG, dir, kEmbeddedDefaultSeed).ok());
  CHECK(std::filesystem::exists(dir / "reuse-mark"));

  // Another seed replaces the directory: the mark is gone, the checkpoint complete again.
  REQUIRE(ensure_tiny_model(GCMOE_TINY_DEFAULT_CONFIG, dir, kEmbeddedDefaultSeed + 1).ok());
  CHECK_FALSE(std::filesystem::exists(dir / "reuse-mark"));
  CHECK(testing::read_headers(dir).size() == headers.size());
  for (auto const& entry : std::filesystem::directory_iterator(base.path())) {
    CHECK(entry.path().filename() == "tiny-glm-5.2");  // no staging directory left behind
  }
  CHECK(ensure_tiny_model(base.path() / "missing.json", dir, 0).status().code() ==
        StatusCode::kNotFound);
}

}  // namespace
}  // namespace gcmoe::tiny
