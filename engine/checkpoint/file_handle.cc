#include "engine/checkpoint/file_handle.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "engine/common/check.h"

namespace gcmoe::checkpoint {
namespace {

Status os_error(std::string_view what, std::filesystem::path const& path) {
  int const code = errno;
  std::string message = fmt::format("{} {}: {}", what, path.string(), std::strerror(code));
  if (code == ENOENT) {
    return not_found_error(std::move(message));
  }
  return unavailable_error(std::move(message));
}

}  // namespace

StatusOr<ReadOnlyFile> ReadOnlyFile::open(std::filesystem::path const& path) {
  int const fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return os_error("cannot open", path);
  }
  ReadOnlyFile file(fd, 0, path);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return os_error("cannot stat", path);
  }
  if (!S_ISREG(info.st_mode)) {
    return invalid_argument_error(fmt::format("{} is not a regular file", path.string()));
  }
  file.size_ = static_cast<std::uint64_t>(info.st_size);
  return file;
}

ReadOnlyFile::ReadOnlyFile(ReadOnlyFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), path_(std::move(other.path_)) {}

ReadOnlyFile& ReadOnlyFile::operator=(ReadOnlyFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    path_ = std::move(other.path_);
  }
  return *this;
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Status ReadOnlyFile::read_at(std::uint64_t offset, std::span<std::byte> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t const got =
        ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return os_error("cannot read", path_);
    }
    if (got == 0) {
      return data_loss_error(fmt::format("{}: file ends at byte {}, wanted {} bytes from {}",
                                         path_.string(), offset + done, out.size(), offset));
    }
    done += static_cast<std::size_t>(got);
  }
  return Status();
}

StatusOr<MappedFile> MappedFile::open(std::filesystem::path const& path) {
  GCMOE_ASSIGN_OR_RETURN(ReadOnlyFile const file, ReadOnlyFile::open(path));
  if (file.size() == 0) {
    return MappedFile(nullptr, 0, path);
  }
  // The mapping outlives the descriptor, which closes when `file` goes out of scope.
  void* const data = ::mmap(nullptr, file.size(), PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (data == MAP_FAILED) {
    return os_error("cannot mmap", path);
  }
  return MappedFile(static_cast<std::byte const*>(data), file.size(), path);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  unmap();
}

void MappedFile::unmap() {
  if (data_ != nullptr) {
    ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
  }
}

}  // namespace gcmoe::checkpoint
