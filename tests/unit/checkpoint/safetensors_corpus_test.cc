// Replays the fuzzer's regression corpus (tests/fixtures/safetensors_corpus) through the header
// parser: every input must give OK or a clean error, and an OK header must describe tensors that
// lie inside the input.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/checkpoint/safetensors_header.h"
#include "tests/support/catch.h"

namespace gcmoe::checkpoint {
namespace {

TEST_CASE("every corpus input parses or fails cleanly") {
  std::filesystem::path const corpus =
      std::filesystem::path(GCMOE_SOURCE_DIR) / "tests/fixtures/safetensors_corpus";
  REQUIRE(std::filesystem::is_directory(corpus));
  int files = 0;
  int accepted = 0;
  for (auto const& entry : std::filesystem::directory_iterator(corpus)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<char> const bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    INFO(entry.path().string());
    auto const header =
        parse_safetensors_header(std::as_bytes(std::span<char const>(bytes.data(), bytes.size())),
                                 bytes.size(), entry.path().filename().string());
    ++files;
    if (!header.ok()) {
      CHECK_FALSE(header.status().message().empty());
      continue;
    }
    ++accepted;
    for (TensorInfo const& tensor : header->tensors) {
      CHECK(tensor.begin >= header->data_offset);
      CHECK(tensor.begin + tensor.size <= bytes.size());
    }
  }
  // The corpus holds valid seeds as well as broken inputs; both kinds must be present.
  CHECK(files >= 10);
  CHECK(accepted >= 1);
  CHECK(accepted < files);
}

}  // namespace
}  // namespace gcmoe::checkpoint
