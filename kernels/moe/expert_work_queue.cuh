#pragma once
// Persistent expert WGMMA CTAs (Fp8ExpertGemmArgs::work_counters; the MXFP4 kernel with feed
// warps, mxfp4_expert_wgmma_kernel.cuh). A work item is what one CTA of a classic launch does: the
// CTA index `cta` (tile group × passes side by side, the grid's x) of active slot `slot` (its y),
// numbered ticket = slot × items_per_slot + cta. A persistent grid holds one CTA per place the SMs
// have for it; each takes tickets from work_counters[0] in turn (atomicAdd, so the SMs that finish
// first take more: the tail is at most one item), and its stage ring carries from one item to the
// next: no per-item barrier set-up or launch, and the next item's weights stream while the
// consumers run the last one's epilogue.
//
// Inside a CTA one warp (the weights feed warp) takes the tickets and publishes each in a small
// ring in shared memory, one mbarrier per slot (arrival count 1); the other feed warp and the
// consumers wait for slot k % kWorkRing's phase (k / kWorkRing) & 1 and read it. The ring cannot
// overrun: every pass starts its stage ring at stage 0, so the taker cannot start item k + 1
// before the consumers have released item k's first stage — it is at most one item ahead of the
// slowest reader. A ticket of -1 ends the CTA.
//
// The counters reset themselves: each CTA, once it has taken its last ticket, adds one to
// work_counters[1]; the last of the grid zeroes both, then lets the next kernel launch
// (griddepcontrol.launch_dependents, which a persistent CTA issues only then). So the next launch
// on the same counters, stream-ordered or chained by PDL through the kernels between, finds them
// zero.

#include <cstdint>

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/expert_cta_prologue.cuh"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

inline constexpr int kWorkRing = 4;

// A CTA's share of the ring: the published tickets and their barriers.
struct WorkRing {
  int ticket[kWorkRing];
  std::uint64_t full[kWorkRing];
};

// One item: its expert and rows, the tile group and the first row of its first pass.
struct WorkItem {
  ExpertSlot slot;
  int group = 0;
  int first_pass = 0;
};

// Ticket -> item; false when its first pass starts past the expert's rows (an expert with fewer
// rows than passes × kN leaves the later passes side by side empty, as a classic CTA exits).
template <int kN>
__device__ __forceinline__ bool work_item_of(Fp8ExpertGemmArgs const& args, int ticket,
                                             int items_per_slot, int passes, WorkItem& item) {
  int const slot = ticket / items_per_slot;
  item.slot.expert = args.active_experts[slot];
  item.slot.row_begin = args.expert_offsets[item.slot.expert];
  item.slot.row_end = args.expert_offsets[item.slot.expert + 1];
  return cta_first_pass_at<kN>(item.slot, passes, ticket % items_per_slot, item.group,
                               item.first_pass);
}

// Lane 0 of the taking warp: the next ticket of a non-empty item, or -1 once none is left.
template <int kN>
__device__ __forceinline__ int take_ticket(Fp8ExpertGemmArgs const& args, int items_per_slot,
                                           int passes) {
  int const total = *args.num_active * items_per_slot;
  for (;;) {
    int const ticket = atomicAdd(args.work_counters, 1);
    if (ticket >= total) {
      return -1;
    }
    WorkItem item;
    if (work_item_of<kN>(args, ticket, items_per_slot, passes, item)) {
      return ticket;
    }
  }
}

// Lane 0 of the taking warp, after its last ticket: counts the CTA out, and the last CTA of the
// grid zeroes the counters; then the CTA lets the next kernel launch where the launch allows it.
__device__ __forceinline__ void finish_work(Fp8ExpertGemmArgs const& args) {
  __threadfence();  // this CTA's ticket adds come before its count
  if (atomicAdd(args.work_counters + 1, 1) == static_cast<int>(gridDim.x) - 1) {
    atomicExch(args.work_counters, 0);
    atomicExch(args.work_counters + 1, 0);
    __threadfence();  // zeroed before the next kernel may launch
  }
  if (args.allow_overlap_next) {
    hopper::launch_dependents();
  }
}

// The taking warp publishes ticket k (all lanes pass the same value; lane 0 stores and arrives).
__device__ __forceinline__ void publish_ticket(WorkRing& ring, int k, int ticket, int lane) {
  if (lane == 0) {
    ring.ticket[k % kWorkRing] = ticket;
    hopper::mbarrier_arrive(hopper::smem_address(&ring.full[k % kWorkRing]));
  }
  __syncwarp();
}

// A reader's ticket k, once published.
__device__ __forceinline__ int read_ticket(WorkRing& ring, int k) {
  hopper::mbarrier_wait(hopper::smem_address(&ring.full[k % kWorkRing]),
                        static_cast<std::uint32_t>(k / kWorkRing) & 1u);
  return *static_cast<int volatile*>(&ring.ticket[k % kWorkRing]);
}

// The feed warps' walk over a persistent CTA's items: the taking warp (`taker`) takes each ticket
// and publishes it, the other feed warp reads it; feed(item) fills the item's stages. At the end
// the taker counts the CTA out (finish_work).
template <int kN, typename Feed>
__device__ __forceinline__ void feed_work_items(Fp8ExpertGemmArgs const& args, WorkRing& ring,
                                                bool taker, int lane, int items_per_slot,
                                                int passes, Feed const& feed) {
  for (int k = 0;; ++k) {
    int ticket = 0;
    if (taker) {
      ticket = __shfl_sync(0xffffffffu,
                           lane == 0 ? take_ticket<kN>(args, items_per_slot, passes) : 0, 0);
      publish_ticket(ring, k, ticket, lane);
    } else {
      ticket = read_ticket(ring, k);
    }
    if (ticket < 0) {
      break;
    }
    WorkItem item;
    work_item_of<kN>(args, ticket, items_per_slot, passes, item);
    feed(item);
  }
  if (taker && lane == 0) {
    finish_work(args);
  }
}

// The consumers' walk: consume(item, k) for each published item, k its place in the ring (the
// consumer reads ticket k again with read_ticket where it needs the item after its main loop).
template <int kN, typename Consume>
__device__ __forceinline__ void consume_work_items(Fp8ExpertGemmArgs const& args, WorkRing& ring,
                                                   int items_per_slot, int passes,
                                                   Consume const& consume) {
  for (int k = 0;; ++k) {
    int const ticket = read_ticket(ring, k);
    if (ticket < 0) {
      return;
    }
    WorkItem item;
    work_item_of<kN>(args, ticket, items_per_slot, passes, item);
    consume(item, k);
  }
}

}  // namespace gcmoe::kernels
