// A checkpoint that does not match its config fails before anything is loaded, with an error
// naming the tensor and the dtype and shape the config implies: a copy of the tiny GLM-5.2
// checkpoint with one tensor removed, renamed, reshaped, or stored in another dtype.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "engine/checkpoint/safetensors_writer.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weights/model_weight_spec.h"
#include "tests/support/catch.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::model {
namespace {

using checkpoint::DType;

struct Rewrite {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
};

// Copies the tiny GLM-5.2 checkpoint into `dir`, passing each tensor through `edit` (nullopt
// drops it).
void write_edited_copy(std::filesystem::path const& dir,
                       std::function<std::optional<Rewrite>(Rewrite)> const& edit) {
  std::filesystem::path const source =
      tiny::testing::written_model(config::ModelFamily::kGlmMoeDsa).dir->path();
  auto const opened = checkpoint::Checkpoint::open(source);
  REQUIRE(opened.ok());
  checkpoint::SafetensorsWriter writer;
  for (std::size_t shard = 0; shard < opened->layout().shards().size(); ++shard) {
    for (checkpoint::TensorView const& view : opened->shard_tensors(shard)) {
      std::optional<Rewrite> const out =
          edit({std::string(view.name), view.dtype, {view.shape.begin(), view.shape.end()}});
      if (out) {
        REQUIRE(writer.add(out->name, out->dtype, out->shape, view.bytes).ok());
      }
    }
  }
  REQUIRE(writer.write_sharded(dir, 1 << 20).ok());
  std::filesystem::copy_file(source / "config.json", dir / "config.json",
                             std::filesystem::copy_options::overwrite_existing);
}

// Loads `dir` as rank 0 of 2 and returns the error.
Status load_error(std::filesystem::path const& dir) {
  auto const model = describe_model(dir);
  REQUIRE(model.ok());
  auto const opened = checkpoint::Checkpoint::open(dir);
  REQUIRE(opened.ok());
  LoadOptions options;
  options.selection = {2, 0, false, nullptr, nullptr};
  auto const loaded =
      load_weights(*opened, model->spec, options, std::make_unique<HostWeightStore>());
  REQUIRE_FALSE(loaded.ok());
  return loaded.status();
}

bool contains(Status const& status, std::string const& text) {
  return status.message().find(text) != std::string::npos;
}

constexpr char kUp[] = "model.layers.2.mlp.experts.3.up_proj.weight";
constexpr char kUpScale[] = "model.layers.2.mlp.experts.3.up_proj.weight_scale_inv";
constexpr char kQa[] = "model.layers.1.self_attn.q_a_proj.weight";

TEST_CASE("an unedited copy loads") {
  tiny::testing::TempDir const dir("unedited");
  write_edited_copy(dir.path(), [](Rewrite r) { return r; });
  auto const model = describe_model(dir.path());
  REQUIRE(model.ok());
  auto const opened = checkpoint::Checkpoint::open(dir.path());
  REQUIRE(opened.ok());
  LoadOptions options;
  options.selection = {2, 0, false, nullptr, nullptr};
  CHECK(load_weights(*opened, model->spec, options, std::make_unique<HostWeightStore>()).ok());
}

TEST_CASE("a removed tensor is named with its expected dtype and shape") {
  tiny::testing::TempDir const dir("removed");
  write_edited_copy(dir.path(), [](Rewrite r) -> std::optional<Rewrite> {
    if (r.name == kUp) {
      return std::nullopt;
    }
    return r;
  });
  Status const error = load_error(dir.path());
  INFO(error.to_string());
  CHECK(error.code() == StatusCode::kInvalidArgument);
  CHECK(contains(error, fmt::format("missing tensor '{}' (expected F8_E4M3 [128, 256])", kUp)));
  CHECK(contains(error, "(1 mismatch)"));
}

TEST_CASE("a renamed tensor is missing under its official name") {
  tiny::testing::TempDir const dir("renamed");
  write_edited_copy(dir.path(), [](Rewrite r) {
    if (r.name == kUpScale) {
      r.name = "model.layers.2.mlp.experts.3.up_proj.scale";  // DeepSeek's spelling
    }
    return r;
  });
  Status const error = load_error(dir.path());
  INFO(error.to_string());
  CHECK(contains(error, fmt::format("missing tensor '{}' (expected F32 [1, 2])", kUpScale)));
}

TEST_CASE("a reshaped tensor names both shapes") {
  tiny::testing::TempDir const dir("reshaped");
  write_edited_copy(dir.path(), [](Rewrite r) {
    if (r.name == kQa) {
      r.shape = {r.shape[1], r.shape[0]};  // transposed: same bytes, wrong shape
    }
    return r;
  });
  Status const error = load_error(dir.path());
  INFO(error.to_string());
  CHECK(contains(error, fmt::format("tensor '{}' is F8_E4M3 [256, 128]", kQa)));
  CHECK(contains(error, "expected F8_E4M3 [128, 256]"));
}

TEST_CASE("a tensor in the wrong dtype names both dtypes") {
  tiny::testing::TempDir const dir("retyped");
  write_edited_copy(dir.path(), [](Rewrite r) {
    if (r.name == kQa) {
      r.dtype = DType::kU8;  // same bytes, e.g. a converter that lost the FP8 type
    }
    return r;
  });
  Status const error = load_error(dir.path());
  INFO(error.to_string());
  CHECK(contains(error, fmt::format("tensor '{}' is U8 [128, 256]", kQa)));
  CHECK(contains(error, "expected F8_E4M3 [128, 256]"));
}

TEST_CASE("several mismatches are counted and the first few quoted") {
  tiny::testing::TempDir const dir("many");
  write_edited_copy(dir.path(), [](Rewrite r) -> std::optional<Rewrite> {
    if (r.name.find(".experts.") != std::string::npos &&
        r.name.find(".down_proj.") != std::string::npos) {
      return std::nullopt;  // every routed expert's down projection (weight and scale)
    }
    return r;
  });
  Status const error = load_error(dir.path());
  INFO(error.to_string());
  // 3 trunk MoE layers × 16 experts × 2 tensors; the skipped MTP layer is not checked.
  CHECK(contains(error, "(96 mismatches)"));
  CHECK(contains(error, "; ..."));
}

}  // namespace
}  // namespace gcmoe::model
