#pragma once
// A CTA's place in its ring of kStages shared-memory stages, shared by the FP8 and MXFP4 expert
// WGMMA kernels (with or without producer warps): the stage a stage use takes, and the parity of
// the phase its full barrier completes with.

#include <cstdint>

namespace gcmoe::kernels {

// A stage's place in the ring: its index and the phase parity its full barrier completes with
// for the current round. Advanced by increment per chunk (v2.13: `it % kStages` and
// `it / kStages` per chunk were ~10 uniform-datapath instructions of the loop).
// The member order (phase first) and stage_cursor's assignments (s first) keep the kernels' SASS
// what it was with separate stage and phase counters: with s first, or phase assigned first, the
// PTX's register numbering or instruction order changes and ptxas's output with it.
struct StageCursor {
  std::uint32_t phase = 0;
  int s = 0;
};

// The cursor of a CTA's stage use `use` (counted from 0 across its passes) in a ring of kStages:
// that use's stage, and the parity its full barrier completes with. Its previous use of the stage
// was released in the phase of parity `phase ^ 1` (a fresh barrier's parity 1 counts as complete,
// so the first round's waits pass at once).
template <int kStages>
__device__ __forceinline__ StageCursor stage_cursor(int use) {
  StageCursor cursor;
  cursor.s = use % kStages;
  cursor.phase = static_cast<std::uint32_t>(use / kStages) & 1u;
  return cursor;
}

// The next stage use's cursor: the next stage, or after the last one the first stage of the next
// round, whose phase has the other parity.
template <int kStages>
__device__ __forceinline__ void advance(StageCursor& cursor) {
  if (++cursor.s == kStages) {
    cursor.s = 0;
    cursor.phase ^= 1u;
  }
}

// The phase parities of a ring whose every pass starts at stage 0 (the MXFP4 kernel with feed
// warps, v5.14 and v5.15: its chunk loop is unrolled over the stages, so each chunk's stage is a
// constant). A pass whose chunks are not a multiple of the stages uses the
// first ones once more, so each stage keeps its own parity: bit s, that of stage s's next use.
struct PassRingPhases {
  std::uint32_t bits = 0;
};

// Stage s's next use, not taken (the consumers test the next chunk's stage ahead).
__device__ __forceinline__ StageCursor peek_stage(PassRingPhases const& ring, int s) {
  StageCursor use;
  use.s = s;
  use.phase = (ring.bits >> s) & 1u;
  return use;
}

// Stage s's next use, taken: its cursor; the stage's parity flips for the use after it.
__device__ __forceinline__ StageCursor take_stage(PassRingPhases& ring, int s) {
  StageCursor const use = peek_stage(ring, s);
  ring.bits ^= 1u << s;
  return use;
}

}  // namespace gcmoe::kernels
