// libFuzzer target for the safetensors header parser: any byte string, taken as a whole file,
// must give OK or a clean error. An OK header must only describe tensors inside the input and in
// offset order without overlap; otherwise the fuzzer aborts and keeps the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "engine/checkpoint/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::span<std::byte const> const input(reinterpret_cast<std::byte const*>(data), size);
  auto const header = gcmoe::checkpoint::parse_safetensors_header(input, size, "fuzz");
  if (!header.ok()) {
    if (header.status().message().empty()) {
      std::abort();
    }
    return 0;
  }
  std::uint64_t previous_end = header->data_offset;
  for (gcmoe::checkpoint::TensorInfo const& tensor : header->tensors) {
    if (tensor.begin < header->data_offset || tensor.begin + tensor.size > size ||
        (tensor.size > 0 && tensor.begin < previous_end)) {
      std::abort();
    }
    if (tensor.size > 0) {
      previous_end = tensor.begin + tensor.size;
    }
  }
  return 0;
}
