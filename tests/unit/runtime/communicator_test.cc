// all_gather_each (engine/runtime/communicator.h): one fixed-size record per rank in rank order,
// and a clear error when a rank sent a record of another size.
#include "engine/runtime/communicator.h"

#include <utility>

#include "tests/support/catch.h"

namespace gcmoe::runtime {
namespace {

struct Record {
  std::int32_t rank;
  double value;
};

// A group whose all_gather returns what it was given to return.
class CannedCommunicator final : public Communicator {
 public:
  CannedCommunicator(std::vector<std::byte> all, std::vector<std::size_t> sizes)
      : all_(std::move(all)), sizes_(std::move(sizes)) {}
  std::int32_t rank() const override { return 0; }
  std::int32_t world_size() const override { return static_cast<std::int32_t>(sizes_.size()); }
  Status all_gather(std::span<std::byte const>, std::vector<std::byte>& all,
                    std::vector<std::size_t>& sizes) override {
    all = all_;
    sizes = sizes_;
    return Status();
  }
  Status all_reduce_sum(std::span<float>) override { return Status(); }
  Status barrier() override { return Status(); }

 private:
  std::vector<std::byte> all_;
  std::vector<std::size_t> sizes_;
};

std::vector<std::byte> bytes_of(std::vector<Record> const& records) {
  auto const b = std::as_bytes(std::span(records));
  return {b.begin(), b.end()};
}

TEST_CASE("all_gather_each: one record per rank, in rank order") {
  std::vector<Record> const sent = {{0, 1.5}, {1, -2.0}, {2, 7.25}};
  CannedCommunicator group(bytes_of(sent), {sizeof(Record), sizeof(Record), sizeof(Record)});
  auto got = all_gather_each(group, Record{0, 1.5});
  REQUIRE(got.ok());
  REQUIRE(got->size() == 3);
  for (std::size_t r = 0; r < 3; ++r) {
    CHECK((*got)[r].rank == sent[r].rank);
    CHECK((*got)[r].value == sent[r].value);
  }
}

TEST_CASE("all_gather_each: a record of another size is refused") {
  std::vector<Record> const sent = {{0, 1.5}, {1, -2.0}};
  std::vector<std::byte> all = bytes_of(sent);
  all.resize(all.size() - 4);
  CannedCommunicator group(all, {sizeof(Record), sizeof(Record) - 4});
  auto got = all_gather_each(group, Record{0, 1.5});
  CHECK(got.status().code() == StatusCode::kInvalidArgument);
  CHECK(got.status().message().find("rank 1") != std::string::npos);
}

}  // namespace
}  // namespace gcmoe::runtime
