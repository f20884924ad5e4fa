#include "engine/model/weight_store.h"

#include <cstring>
#include <new>

#include "engine/common/check.h"

namespace gcmoe::model {

std::string_view weight_location_name(WeightLocation const location) {
  switch (location) {
    case WeightLocation::kHost:
      return "host";
    case WeightLocation::kDevice:
      return "device";
  }
  return "?";
}

Status HostWeightStore::allocate(std::int64_t const bytes, int const workers) {
  GCMOE_CHECK_ARG(bytes >= 0 && workers > 0, "allocate {} bytes for {} workers", bytes, workers);
  GCMOE_CHECK_INTERNAL(memory_ == nullptr, "host weight store allocated twice");
  // Default-initialized: no pass over the memory before the loader's parallel writes.
  memory_.reset(new (std::nothrow) std::byte[static_cast<std::size_t>(bytes)]);
  if (memory_ == nullptr && bytes > 0) {
    return resource_exhausted_error(fmt::format("cannot allocate {} bytes of host memory", bytes));
  }
  size_ = bytes;
  return Status();
}

// Plain memcpy: any worker may write concurrently, so the lane is not needed.
Status HostWeightStore::write(int /*worker*/, std::int64_t const offset,
                              std::span<std::byte const> const bytes) {
  GCMOE_CHECK_ARG(offset >= 0 && offset + static_cast<std::int64_t>(bytes.size()) <= size_,
                  "write of {} bytes at {} past the {}-byte store", bytes.size(), offset, size_);
  std::memcpy(memory_.get() + offset, bytes.data(), bytes.size());
  return Status();
}

}  // namespace gcmoe::model
