#pragma once
// Test helpers: a scratch directory removed on scope exit, and raw safetensors files written byte
// by byte so tests can corrupt any part of them.

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace gcmoe::testing {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("gcmoe_checkpoint_test_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter.fetch_add(1)));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(TempDir const&) = delete;
  TempDir& operator=(TempDir const&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  std::filesystem::path const& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(std::filesystem::path const& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// [8-byte LE length of `header`][header][data_bytes zero bytes]; `declared_length` overrides
// the length field when non-negative.
inline std::string raw_safetensors(std::string_view header, std::size_t data_bytes,
                                   std::int64_t declared_length = -1) {
  auto const length = declared_length >= 0 ? static_cast<std::uint64_t>(declared_length)
                                           : static_cast<std::uint64_t>(header.size());
  std::string out;
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xffU));
  }
  out.append(header);
  out.append(data_bytes, '\0');
  return out;
}

}  // namespace gcmoe::testing
