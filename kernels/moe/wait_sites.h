#pragma once
// Which device-side wait of a GC-MoE layer or an expert-parallel step passed its deadline: the
// kernels OR one bit per kind of wait into the step's error word, and the host names them in the
// DEADLINE_EXCEEDED message (a rank that never arrives shows as "counts"; a dispatch that never
// lands as "rows"; an owner whose GEMM never finished as "done").

#include <string>

namespace gcmoe::kernels {

inline constexpr unsigned kWaitRows = 1u;      // the expert GEMM for its input rows' flags
inline constexpr unsigned kWaitLayout = 2u;    // a dispatch or count publication for the routing
inline constexpr unsigned kWaitCounts = 4u;    // the receive plan for every rank's counts
inline constexpr unsigned kWaitDone = 8u;      // the combine for every owner's "done" flag
inline constexpr unsigned kWaitBarrier = 16u;  // the baseline's end-of-step barrier (every rank)

// "rows, counts" for kWaitRows | kWaitCounts; unknown bits as "other (0x..)".
std::string wait_sites_to_string(unsigned bits);

}  // namespace gcmoe::kernels
