#pragma once
// Where an expert-parallel rank's peer-visible buffers (kernels/moe/ep_dispatch.h, EpRankBuffers)
// sit inside its one symmetric region: the same byte offsets on every rank of a group (all ranks
// run the same layer config, token limit and rank count), so a rank that knows a peer's region
// base — a plain pointer, a CUDA IPC mapping or an NCCL window's LSA pointer — knows every one of
// the peer's buffers. One region per rank keeps the exchange at one handle per rank.

#include <cstddef>
#include <cstdint>

#include "kernels/moe/moe_layer_ref.h"

namespace gcmoe::kernels {

// Every buffer starts on this boundary (bytes): 16-byte vector and bulk-copy accesses, and more.
inline constexpr std::size_t kEpSymmetricAlignment = 256;

struct EpSymmetricLayout {
  std::int64_t capacity = 0;  // rows one rank can receive in a step
  // Byte offsets from the region's start; [p] is the buffer set of replay parity p.
  std::size_t recv_xq[2] = {};       // [capacity, H] e4m3
  std::size_t recv_scales[2] = {};   // [capacity, H / 128] f32
  std::size_t recv_weights[2] = {};  // [capacity] f32
  std::size_t row_flags[2] = {};     // [capacity] i32
  std::size_t counts[2] = {};        // [R, E] i32
  std::size_t count_flags[2] = {};   // [R] i32
  std::size_t done_flags = 0;        // [R] i32
  std::size_t barrier_flags = 0;     // [R] i32, the clean-and-barrier baseline's only
  std::size_t y = 0;                 // [capacity, H] bf16
  std::size_t bytes = 0;             // the region's size, a multiple of the alignment
};

// Rows a rank can receive: each of R sources sends each local expert at most one row per token;
// plus one row per own token for the shared expert when it runs in the routed launch.
std::int64_t ep_receive_capacity(MoeLayerConfig const& config, int max_tokens, int ranks);

// The layout for R ranks of `config`, each bringing at most max_tokens tokens (checked by the
// caller: ranks ≥ 1, experts divisible by ranks, H a multiple of 128).
EpSymmetricLayout ep_symmetric_layout(MoeLayerConfig const& config, int max_tokens, int ranks);

// Device bytes of one rank's expert-parallel buffers for a layer (what the memory plan reserves):
// the symmetric region plus the SwiGLU output rows (e4m3) and their scales for every receivable
// row. Not counted: the rank's own routing and shared-expert buffers (a few hundred MB at 2048
// tokens; kernels/moe/moe_layer_sequential.h allocates them).
std::int64_t ep_rank_device_bytes(MoeLayerConfig const& config, int max_tokens, int ranks);

}  // namespace gcmoe::kernels
