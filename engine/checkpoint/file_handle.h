#pragma once
// RAII for the files the checkpoint code reads: a read-only file descriptor, and a read-only
// memory mapping of a whole file (tensor data is used in place, never copied to the heap).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>

#include "engine/common/status.h"

namespace gcmoe::checkpoint {

class ReadOnlyFile {
 public:
  static StatusOr<ReadOnlyFile> open(std::filesystem::path const& path);

  ReadOnlyFile(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile& operator=(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile(ReadOnlyFile const&) = delete;
  ReadOnlyFile& operator=(ReadOnlyFile const&) = delete;
  ~ReadOnlyFile();

  std::uint64_t size() const { return size_; }
  int fd() const { return fd_; }
  std::filesystem::path const& path() const { return path_; }

  // Fills `out` from byte `offset`; DATA_LOSS when the file ends first.
  Status read_at(std::uint64_t offset, std::span<std::byte> out) const;

 private:
  ReadOnlyFile(int fd, std::uint64_t size, std::filesystem::path path)
      : fd_(fd), size_(size), path_(std::move(path)) {}

  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::filesystem::path path_;
};

class MappedFile {
 public:
  // Maps the whole file read-only. An empty file gives an empty span (nothing is mapped).
  static StatusOr<MappedFile> open(std::filesystem::path const& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(MappedFile const&) = delete;
  MappedFile& operator=(MappedFile const&) = delete;
  ~MappedFile();

  std::span<std::byte const> bytes() const { return {data_, size_}; }
  std::filesystem::path const& path() const { return path_; }

 private:
  MappedFile(std::byte const* data, std::size_t size, std::filesystem::path path)
      : data_(data), size_(size), path_(std::move(path)) {}
  void unmap();

  std::byte const* data_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace gcmoe::checkpoint
