#pragma once
// Hopper (sm_90a) PTX wrappers for the compute kernels: mbarriers, bulk copies (TMA without a
// tensor map), cp.async with mbarrier completion, and FP8 WGMMA (m64nNk32, e4m3 × e4m3 → f32,
// both operands K-major from shared memory with the 128-byte swizzle).
// PTX ISA: "Asynchronous warpgroup level matrix multiply-accumulate" and "mbarrier" sections.

#include <cstdint>

namespace gcmoe::kernels::hopper {

__device__ __forceinline__ std::uint32_t smem_address(void const* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarrier -------------------------------------------------------------------------------
__device__ __forceinline__ void mbarrier_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}

// Makes initialized barriers visible to the async proxy (bulk copies complete on them).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

// Adds `bytes` to the current phase's expected transaction count without arriving (the thread
// that issues a copy announces its bytes itself, whatever another thread's arrival carries).
__device__ __forceinline__ void mbarrier_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

// True once the phase of the given parity has completed.
__device__ __forceinline__ bool mbarrier_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// The same test without suspending the thread while the phase is incomplete (test_wait never
// blocks): a loop issues it for its next stage ahead of that stage's use, so the test's latency
// (~8% of the MXFP4 chunk loop's stall samples as the try_wait's branch) overlaps the current
// chunk's work. True has try_wait's acquire semantics.
__device__ __forceinline__ bool mbarrier_test_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait(std::uint32_t bar, std::uint32_t parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

// --- copies ---------------------------------------------------------------------------------
// TMA tensor copy of one 2D box (coordinates: c0 the innermost, in elements) into shared memory,
// completing its bytes of transaction count on `bar`. `map` is a __grid_constant__ kernel
// parameter's address (a CUtensorMap made on the host by cuTensorMapEncodeTiled).
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, void const* map, int c0, int c1,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// Bulk global → shared copy of `bytes` (multiple of 16, both addresses 16-byte aligned) that
// completes `bytes` of transaction count on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(std::uint32_t dst, void const* src,
                                              std::uint32_t bytes, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

// 16-byte cp.async; src_bytes 0 fills the destination with zeros (src is not read).
__device__ __forceinline__ void copy_16_zfill(std::uint32_t dst, void const* src,
                                              std::uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}

// Closes this thread's cp.async copies issued since the last commit into one group.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most kPending of this thread's committed cp.async groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// 4-byte cp.async (through L1); src_bytes 0 writes zeros.
__device__ __forceinline__ void copy_4_zfill(std::uint32_t dst, void const* src,
                                             std::uint32_t src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}

// 8-byte cp.async (through L1), both addresses 8-byte aligned.
__device__ __forceinline__ void copy_8(std::uint32_t dst, void const* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(dst), "l"(src) : "memory");
}

// One arrival on `bar` when all of this thread's earlier cp.async copies have landed (the
// barrier's expected count includes it: .noinc).
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

// Orders this thread's generic-proxy view of shared memory (cp.async writes it has observed)
// before later async-proxy reads (WGMMA operands).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// --- timers and flags ---------------------------------------------------------------------
__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t ns = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__device__ __forceinline__ int load_acquire_gpu(int const* p) {
  int v = 0;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release_gpu(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Adds v to *p after every write this thread (and, through a preceding barrier, its block) made;
// no value comes back, so the thread does not wait for the add.
__device__ __forceinline__ void red_release_add_gpu(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// System scope: flags written or read by a peer GPU (peer-mapped memory over NVLink).
__device__ __forceinline__ int load_acquire_sys(int const* p) {
  int v = 0;
  asm volatile("ld.acquire.sys.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release_sys(int* p, int v) {
  asm volatile("st.release.sys.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// A flag another thread publishes: gpu scope within one GPU, system scope across GPUs.
__device__ __forceinline__ int load_acquire(int const* p, bool system) {
  return system ? load_acquire_sys(p) : load_acquire_gpu(p);
}

// Publishes v after every write this thread (and, through a preceding barrier, its block) made.
__device__ __forceinline__ void publish(int* p, int v, bool system) {
  if (system) {
    __threadfence_system();
    store_release_sys(p, v);
  } else {
    __threadfence();
    store_release_gpu(p, v);
  }
}

// Polls *flag (acquire) until it reaches `target`; false once timeout_ns pass first (the caller
// raises its error flag and goes on, so a peer that never arrives ends in an error, not a hang).
// seen (optional): the flag's last value read, for the caller's diagnosis of a timeout.
__device__ __forceinline__ bool spin_until_at_least(int const* flag, int target,
                                                    std::uint64_t timeout_ns, bool system = false,
                                                    int* seen = nullptr) {
  std::uint64_t const start = global_timer_ns();
  int value = load_acquire(flag, system);
  while (value < target) {
    if (global_timer_ns() - start > timeout_ns) {
      if (seen != nullptr) {
        *seen = value;
      }
      return false;
    }
    __nanosleep(64);
    value = load_acquire(flag, system);
  }
  return true;
}

// --- programmatic dependent launch ---------------------------------------------------------
// Lets the next kernel in the stream, launched with the programmatic-serialization attribute,
// start once every CTA of this grid has issued this (or exited). A no-op without such a launch.
__device__ __forceinline__ void launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// Waits until the previous kernel in the stream has completed and its writes are visible; returns
// at once when this kernel was launched without the programmatic-serialization attribute.
__device__ __forceinline__ void wait_prior_grid() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

// The first step of a kernel in a launch chain (every kernel of the chain launched with the
// programmatic-serialization attribute, kernels/hopper/pdl_launch.h): lets the next kernel start
// launching, then waits for the previous grid before any memory access. The stream's order is
// kept; what overlaps is the next launch with this kernel's run. Nothing when not chained. The
// next kernel must not read anything before its own wait either: one that does (L2, which reads
// the slot lists before griddepcontrol.wait) needs a predecessor that waited before triggering
// (bench/NOTES.md, launch chains: with the trigger first it read stale lists).
__device__ __forceinline__ void enter_launch_chain(bool chained) {
  if (chained) {
    launch_dependents();
    wait_prior_grid();
  }
}

// --- register reallocation ---------------------------------------------------------------
// setmaxnreg: every thread of the executing warpgroup moves to kRegs registers (a multiple of 8,
// 24..256). dec hands registers back to the CTA's pool; inc blocks until the pool holds enough, so
// a kernel must give back at least what it takes (PTX ISA, setmaxnreg). ptxas then allocates each
// side's code within its count.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256);
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256);
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// --- WGMMA ----------------------------------------------------------------------------------
// Shared memory matrix descriptor, K-major with the 128-byte swizzle: rows of 128 bytes, 8-row
// atoms 1024 bytes apart (stride byte offset), atoms 1024-byte aligned; the leading byte offset
// is unused in this mode. Advancing K by 32 FP8 values adds 32 bytes to the start address.
__device__ __forceinline__ std::uint64_t smem_desc_sw128(std::uint32_t address) {
  std::uint64_t desc = 0;
  desc |= static_cast<std::uint64_t>((address & 0x3ffff) >> 4);
  desc |= static_cast<std::uint64_t>(1) << 16;          // leading byte offset (unused): 16 B
  desc |= static_cast<std::uint64_t>(1024 >> 4) << 32;  // stride byte offset
  desc |= static_cast<std::uint64_t>(1) << 62;          // layout: 128-byte swizzle
  return desc;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accumulator reads/writes across the asynchronous WGMMA.
template <int kN>
__device__ __forceinline__ void fence_accumulators(float (&d)[kN / 2]) {
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}

// d (+)= A·Bᵀ for one m64nNk32 step: A 64×32 and B N×32 e4m3, K-major in shared memory.
// accumulate = false overwrites d (scale-d 0).
template <int kN>
struct WgmmaFp8;

template <>
struct WgmmaFp8<8> {
  __device__ __forceinline__ static void run(float (&d)[4], std::uint64_t desc_a,
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3}, %4, %5, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8<16> {
  __device__ __forceinline__ static void run(float (&d)[8], std::uint64_t desc_a,
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7])
        : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8<32> {
  __device__ __forceinline__ static void run(float (&d)[16], std::uint64_t desc_a,
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, "
        "1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15])
        : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8<64> {
  __device__ __forceinline__ static void run(float (&d)[32], std::uint64_t desc_a,
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8<128> {
  __device__ __forceinline__ static void run(float (&d)[64], std::uint64_t desc_a,
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, "
        "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, "
        "%55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
  }
};

// m64n48k32: the FP8 expert GEMM's passes trimmed to 33–48 token rows (v2.6).
template <>
struct WgmmaFp8<48> {
  __device__ __forceinline__ static void run(float (&d)[24], std::uint64_t desc_a,
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %26, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n48k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19, %20, %21, %22, %23}, %24, %25, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
  }
};

}  // namespace gcmoe::kernels::hopper
