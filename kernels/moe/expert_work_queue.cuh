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
// Inside a CTA one warp (the weights feed warp) takes the tickets and publishes each item (its
// expert, row end, tile group and first pass; version 6: the readers no longer derive it from the
// ticket, whose divisions' constants they held across their loops and spilled) in a small ring in
// shared memory, one mbarrier per slot (arrival count 1); the feed warps and the consumers wait
// for slot k % kWorkRing's phase (k / kWorkRing) & 1 and read it. The ring cannot
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

// The most consumer warps a persistent CTA has (the MXFP4 L1: four warpgroups).
inline constexpr int kWorkRingReaders = 16;

// A CTA's share of the ring: per slot the published ticket (-1: none left), its item and barrier;
// per consumer warp its place in the ring (the next item's k), kept here rather than in a register
// across the item: the consumers' item loop held it at the register caps only by spilling.
struct WorkRing {
  int ticket[kWorkRing];
  int expert[kWorkRing];
  int row_end[kWorkRing];
  int group[kWorkRing];
  int first_pass[kWorkRing];
  std::uint64_t full[kWorkRing];
  int place[kWorkRingReaders];
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

// Lane 0 of the taking warp: the next ticket of a non-empty item (its item into `item`), or -1
// once none is left.
template <int kN>
__device__ __forceinline__ int take_ticket(Fp8ExpertGemmArgs const& args, int items_per_slot,
                                           int passes, WorkItem& item) {
  int const total = *args.num_active * items_per_slot;
  for (;;) {
    int const ticket = atomicAdd(args.work_counters, 1);
    if (ticket >= total) {
      return -1;
    }
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

// Lane 0 of the taking warp publishes item k under its ticket (-1: none left).
__device__ __forceinline__ void publish_item(WorkRing& ring, int k, int ticket,
                                             WorkItem const& item) {
  int const at = k % kWorkRing;
  ring.ticket[at] = ticket;
  ring.expert[at] = item.slot.expert;
  ring.row_end[at] = item.slot.row_end;
  ring.group[at] = item.group;
  ring.first_pass[at] = item.first_pass;
  hopper::mbarrier_arrive(hopper::smem_address(&ring.full[at]));
}

// A feed warp's ticket k, once published: the feed warps derive the item from it (work_item_of;
// read from the ring they held more registers, and the 48-row L2's feed warps, at 48, spilled).
__device__ __forceinline__ int read_ticket(WorkRing& ring, int k) {
  hopper::mbarrier_wait(hopper::smem_address(&ring.full[k % kWorkRing]),
                        static_cast<std::uint32_t>(k / kWorkRing) & 1u);
  return *static_cast<int volatile*>(&ring.ticket[k % kWorkRing]);
}

// A consumer's item k once published (row_begin is not published: no consumer uses it); false
// when none is left.
__device__ __forceinline__ bool read_item(WorkRing& ring, int k, WorkItem& item) {
  int const at = k % kWorkRing;
  hopper::mbarrier_wait(hopper::smem_address(&ring.full[at]),
                        static_cast<std::uint32_t>(k / kWorkRing) & 1u);
  item.slot.expert = *static_cast<int volatile*>(&ring.expert[at]);
  item.slot.row_end = *static_cast<int volatile*>(&ring.row_end[at]);
  item.group = *static_cast<int volatile*>(&ring.group[at]);
  item.first_pass = *static_cast<int volatile*>(&ring.first_pass[at]);
  return *static_cast<int volatile*>(&ring.ticket[at]) >= 0;
}

// The feed warps' walk over a persistent CTA's items: the taking warp (`taker`) takes each item
// and publishes it, both read its ticket; feed(item) fills the item's stages. At the end the taker
// counts the CTA out (finish_work).
template <int kN, typename Feed>
__device__ __forceinline__ void feed_work_items(Fp8ExpertGemmArgs const& args, WorkRing& ring,
                                                bool taker, int lane, int items_per_slot,
                                                int passes, Feed const& feed) {
  for (int k = 0;; ++k) {
    int ticket = 0;
    if (taker) {
      WorkItem taken;
      ticket = __shfl_sync(0xffffffffu,
                           lane == 0 ? take_ticket<kN>(args, items_per_slot, passes, taken) : 0, 0);
      if (lane == 0) {
        publish_item(ring, k, ticket, taken);
      }
      __syncwarp();
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

// A consumer warp's place in the ring, volatile, the warp from a volatile %tid.x read: nothing of
// it is held in a register across an item.
__device__ __forceinline__ int volatile& ring_place(WorkRing& ring) {
  std::uint32_t tid;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
  return *static_cast<int volatile*>(&ring.place[tid / 32]);
}

// A consumer's current item's row end and tile group, read again from its ring slot (published:
// the consumer waited for it when the item began).
__device__ __forceinline__ int current_row_end(WorkRing& ring) {
  return *static_cast<int volatile*>(&ring.row_end[ring_place(ring) % kWorkRing]);
}
__device__ __forceinline__ int current_group(WorkRing& ring) {
  return *static_cast<int volatile*>(&ring.group[ring_place(ring) % kWorkRing]);
}

// The consumers' walk: consume(item) for each published item. A consumer reads the item's row end
// and group again (current_row_end, current_group) where it needs them after its main loop: the
// taker is at most one item ahead of the slowest reader, so slot k holds item k until every
// consumer is past it. Each lane of a warp writes the same place.
template <typename Consume>
__device__ __forceinline__ void consume_work_items(WorkRing& ring, Consume const& consume) {
  ring_place(ring) = 0;
  for (;;) {
    WorkItem item;
    if (!read_item(ring, ring_place(ring), item)) {
      return;
    }
    consume(item);
    // Every lane reads the place before any writes the next one.
    int const next = ring_place(ring) + 1;
    __syncwarp();
    ring_place(ring) = next;
  }
}

}  // namespace gcmoe::kernels
