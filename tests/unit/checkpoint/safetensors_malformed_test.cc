// Malformed safetensors files and indexes: each must give an error that names the file (and the
// tensor where one is at fault) and says what is wrong, never a crash or an out-of-bounds read.
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/safetensors_header.h"
#include "engine/checkpoint/safetensors_writer.h"
#include "tests/support/catch.h"
#include "tests/unit/checkpoint/temp_dir.h"

namespace gcmoe::checkpoint {
namespace {

bool contains(std::string const& text, std::string const& part) {
  return text.find(part) != std::string::npos;
}

// Writes `bytes` as model.safetensors in a fresh directory and opens it as a checkpoint.
Status open_single(std::string const& bytes) {
  testing::TempDir const dir;
  testing::write_bytes(dir.path() / kSingleFileName, bytes);
  auto const checkpoint = Checkpoint::open(dir.path());
  return checkpoint.status();
}

struct Case {
  char const* what;
  std::string bytes;
  StatusCode code;
  std::vector<char const*> message_parts;
};

constexpr char kGood[] = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";

TEST_CASE("malformed single files give specific errors") {
  std::vector<Case> const cases = {
      {"shorter than the length field",
       std::string("\x05\x00\x00", 3),
       StatusCode::kDataLoss,
       {"model.safetensors", "too short for the 8-byte header length"}},
      {"header length past the end of the file",
       testing::raw_safetensors(kGood, 16, 4096),
       StatusCode::kDataLoss,
       {"header length 4096 runs past the end"}},
      {"header length above the 100 MB limit",
       testing::raw_safetensors(kGood, 16, 200'000'000),
       StatusCode::kInvalidArgument,
       {"header length 200000000 exceeds"}},
      {"header that is not JSON",
       testing::raw_safetensors(R"({"w": {"dtype": )", 16),
       StatusCode::kInvalidArgument,
       {"not well-formed JSON"}},
      {"header that is a JSON array",
       testing::raw_safetensors("[1, 2]      ", 0),
       StatusCode::kInvalidArgument,
       {"not a JSON object"}},
      {"data offsets past the data section (truncated file)",
       testing::raw_safetensors(kGood, 10),
       StatusCode::kDataLoss,
       {"tensor 'w'", "run past the 10-byte data section"}},
      {"overlapping tensors",
       testing::raw_safetensors(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                                R"("b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})",
                                12),
       StatusCode::kInvalidArgument,
       {"'a' [", "'b' [", "overlap"}},
      {"shape times dtype size differs from the offsets",
       testing::raw_safetensors(R"({"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,16]}})",
                                16),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "8 bytes but data_offsets [0, 16] span 16"}},
      {"unknown dtype",
       testing::raw_safetensors(R"({"w":{"dtype":"Q4_K","shape":[2],"data_offsets":[0,2]}})", 2),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "unsupported dtype 'Q4_K'"}},
      {"negative dimension",
       testing::raw_safetensors(R"({"w":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})", 2),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "shape entry -2"}},
      {"non-integer dimension",
       testing::raw_safetensors(R"({"w":{"dtype":"U8","shape":[2.5],"data_offsets":[0,2]}})", 2),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "shape entry 2.5"}},
      {"dimension given as a string",
       testing::raw_safetensors(R"({"w":{"dtype":"U8","shape":["2"],"data_offsets":[0,2]}})", 2),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "not a non-negative integer"}},
      {"shape whose byte count overflows",
       testing::raw_safetensors(
           R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "overflows"}},
      {"begin after end",
       testing::raw_safetensors(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[4,2]}})", 4),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "begin <= end"}},
      {"missing dtype",
       testing::raw_safetensors(R"({"w":{"shape":[2],"data_offsets":[0,2]}})", 2),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "'dtype'"}},
      {"data_offsets with three entries",
       testing::raw_safetensors(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2,4]}})", 4),
       StatusCode::kInvalidArgument,
       {"tensor 'w'", "data_offsets"}},
      {"the same tensor twice in one header",
       testing::raw_safetensors(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                R"("w":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
                                4),
       StatusCode::kInvalidArgument,
       {"tensor 'w' appears twice"}},
      {"metadata value that is not a string",
       testing::raw_safetensors(R"({"__metadata__":{"format":7}})", 0),
       StatusCode::kInvalidArgument,
       {"__metadata__ entry 'format'"}},
      {"nesting deeper than a header needs",
       testing::raw_safetensors(std::string(5000, '[') + std::string(5000, ']'), 0),
       StatusCode::kInvalidArgument,
       {"nests deeper than 3"}},
  };
  for (Case const& c : cases) {
    INFO(c.what);
    Status const status = open_single(c.bytes);
    INFO(status.to_string());
    CHECK(status.code() == c.code);
    CHECK(contains(status.message(), "model.safetensors"));
    for (char const* part : c.message_parts) {
      CHECK(contains(status.message(), part));
    }
  }
}

TEST_CASE("a valid header with metadata, padding and an empty tensor parses") {
  std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("e":{"dtype":"BF16","shape":[0],"data_offsets":[16,16]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string const bytes = testing::raw_safetensors(header, 16);
  auto const parsed = parse_safetensors_header(
      std::as_bytes(std::span<char const>(bytes.data(), bytes.size())), bytes.size(), "buf");
  REQUIRE(parsed.ok());
  CHECK(parsed->tensors.size() == 2);
  CHECK(parsed->metadata.at("format") == "pt");
  REQUIRE(parsed->find("w") != nullptr);
  CHECK(parsed->find("w")->begin == 8 + header.size());
  CHECK(open_single(bytes).ok());
}

// A directory of two shards of tensors "a" (shard 1) and "b" (shard 2) with `index` as its index.
Status open_sharded(std::string const& index, bool duplicate_b_in_first = false) {
  testing::TempDir const dir;
  std::string const a =
      duplicate_b_in_first
          ? R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})"
          : R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
  testing::write_bytes(dir.path() / "model-00001-of-00002.safetensors",
                       testing::raw_safetensors(a, duplicate_b_in_first ? 8 : 4));
  testing::write_bytes(
      dir.path() / "model-00002-of-00002.safetensors",
      testing::raw_safetensors(R"({"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", 4));
  testing::write_bytes(dir.path() / kIndexFileName, index);
  return Checkpoint::open(dir.path()).status();
}

constexpr char kGoodIndex[] =
    R"({"metadata":{"total_size":8},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
    R"("b":"model-00002-of-00002.safetensors"}})";

TEST_CASE("malformed sharded checkpoints give specific errors") {
  REQUIRE(open_sharded(kGoodIndex).ok());

  struct IndexCase {
    char const* what;
    Status status;
    std::vector<char const*> message_parts;
  };
  std::vector<IndexCase> const cases = {
      {"index naming a missing shard",
       open_sharded(
           R"({"weight_map":{"a":"model-00001-of-00002.safetensors",)"
           R"("b":"model-00002-of-00002.safetensors","c":"model-00003-of-00003.safetensors"}})"),
       {"model-00003-of-00003.safetensors", "cannot open"}},
      {"index naming a tensor its shard lacks",
       open_sharded(
           R"({"weight_map":{"a":"model-00001-of-00002.safetensors",)"
           R"("b":"model-00002-of-00002.safetensors","z":"model-00002-of-00002.safetensors"}})"),
       {"tensor 'z'", "model-00002-of-00002.safetensors", "lacks it"}},
      {"the same tensor in two shards",
       open_sharded(kGoodIndex, true),
       {"tensor 'b' is in both model-00001-of-00002.safetensors and model-00002"}},
      {"shard tensor the index does not list",
       open_sharded(R"({"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                    R"("c":"model-00002-of-00002.safetensors"}})"),
       {"tensor 'b'", "does not list it"}},
      {"index mapping a tensor twice",
       open_sharded(R"({"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                    R"("a":"model-00002-of-00002.safetensors"}})"),
       {"names tensor 'a' twice"}},
      {"index without weight_map", open_sharded(R"({"metadata":{}})"), {"missing 'weight_map'"}},
      {"index that is not JSON", open_sharded("{\"weight_map\": "), {"not a well-formed JSON"}},
      {"shard path escaping the directory",
       open_sharded(R"({"weight_map":{"a":"../model-00001-of-00002.safetensors"}})"),
       {"weight_map['a']", "not a plain shard file name"}},
      {"negative total_size",
       open_sharded(R"({"metadata":{"total_size":-1},"weight_map":{}})"),
       {"total_size"}},
  };
  for (IndexCase const& c : cases) {
    INFO(c.what);
    INFO(c.status.to_string());
    CHECK_FALSE(c.status.ok());
    for (char const* part : c.message_parts) {
      CHECK(contains(c.status.message(), part));
    }
  }
}

TEST_CASE("an empty directory and an empty file are clean errors") {
  testing::TempDir const dir;
  CHECK(Checkpoint::open(dir.path()).status().code() == StatusCode::kNotFound);
  Status const empty = open_single("");
  CHECK(empty.code() == StatusCode::kDataLoss);
  CHECK(contains(empty.message(), "file is 0 bytes"));
}

}  // namespace
}  // namespace gcmoe::checkpoint
