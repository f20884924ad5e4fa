#pragma once
// Reads an NCCL symmetric window's load/store-accessible (LSA) pointers on the device, where
// NCCL's accessor lives (ncclGetLsaPointer, NCCL 2.28 device API).

#include <nccl.h>

#include <span>

#include "engine/common/status.h"

namespace gcmoe::cuda {

inline constexpr int kMaxNcclLsaRanks = 32;

// pointers[i]: the window's offset 0 at LSA peer i (pointers.size() peers, at most
// kMaxNcclLsaRanks); own_lsa_rank: this rank's index in its LSA team. Synchronizes.
Status nccl_lsa_pointers(ncclWindow_t window, std::span<void*> pointers, int& own_lsa_rank);

}  // namespace gcmoe::cuda
