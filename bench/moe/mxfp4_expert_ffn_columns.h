#pragma once
// bench_mxfp4_expert_ffn's columns: each a configuration of the MXFP4 expert FFN (L1 then L2,
// kernels/moe/mxfp4_expert_wgmma.h) — the default, forced pass widths, the probes and the PDL
// launches; the benchmark's header comment says what each measures.

#include <cuda_runtime.h>

#include "bench/moe/mxfp4_expert_ffn_data.h"
#include "engine/common/status.h"
#include "kernels/moe/expert_rows_handshake.h"

namespace gcmoe::bench::mxfp4_ffn {

enum class Kernel {
  kMxfp4,
  kOnePass,
  kNarrow16,
  kNarrow32,
  kNarrow48,
  kDownNarrow16,
  kDownNarrow32,
  kDownNarrow48,
  kStreamOnly,
  kPdl,
  kPdlUntriggered,
  kPdlPacked,
  kPdlRows,
  kPersistent,
  kPersistentPdl,
  kStreamOnlyPersistent,
  kPdlL1Persistent,
  kPdlL2Persistent,
  kAgain
};

// The column's name in the printed table and the JSON.
char const* kernel_name(Kernel kernel);

// Launches L1 then L2 of `kernel`'s configuration for batch `b` on `stream`; `rows`: the L1 -> L2
// handshake of the kPdlRows column (the others ignore it); `work_counters`: four zeroed ints, L1's
// and L2's work counters of the persistent columns (Fp8ExpertGemmArgs::work_counters).
Status launch_ffn(Kernel kernel, Weights const& w, Batch const& b,
                  kernels::ExpertRowsHandshake const& rows, int* work_counters,
                  cudaStream_t stream);

}  // namespace gcmoe::bench::mxfp4_ffn
