// FP8 expert FFN on the GPU (L1 gate/up + SwiGLU + requantization, then L2 down) against the CPU
// reference kernels/moe/expert_ffn_ref.h on random routed batches, at small shapes and at
// GLM-5.2's real expert shape (H 6144, I 2048); both kernel versions (mma.sync and WGMMA).
#include "kernels/moe/fp8_expert_gemm.h"

#include "tests/gpu/kernels/moe/fp8_expert_ffn_case.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using fp8_ffn_test::Case;
using fp8_ffn_test::kBound;
using fp8_ffn_test::Kernel;
using fp8_ffn_test::run_case;

TEST_CASE("fp8 expert FFN matches the CPU reference at small shapes") {
  Case c;
  c.kernel = GENERATE(Kernel::kMmaSync, Kernel::kWgmma);
  c.hidden = 256;
  c.inter = 128;
  c.experts = 6;
  c.tokens = GENERATE(1, 5, 24);
  c.top_k = 2;
  c.tma_x = GENERATE(true, false);  // x rows by TMA or by cp.async (WGMMA; mma.sync ignores it)
  c.seed = 100 + static_cast<std::uint64_t>(c.tokens);
  CHECK(run_case(c) < kBound);
}

TEST_CASE("fp8 expert FFN: more than 32 rows for one expert takes several passes") {
  Case c;
  c.kernel = GENERATE(Kernel::kMmaSync, Kernel::kWgmma);
  c.hidden = 512;
  c.inter = 256;
  c.experts = 4;
  c.tokens = 70;
  c.top_k = 2;
  c.all_to_expert_zero = true;
  c.seed = 7;
  CHECK(run_case(c) < kBound);
}

TEST_CASE("fp8 expert FFN: a decode hint below the real rows per expert stays correct") {
  Case c;
  c.kernel = GENERATE(Kernel::kMmaSync, Kernel::kWgmma);
  c.hidden = 256;
  c.inter = 128;
  c.experts = 3;
  c.tokens = 20;
  c.top_k = 2;
  c.rows_hint = 1;  // one 8-row group per pass: 20 rows of an expert take 3 passes
  c.all_to_expert_zero = true;
  c.seed = 9;
  CHECK(run_case(c) < kBound);
}

TEST_CASE("fp8 expert FFN: 32-row passes over a skewed expert") {
  Case c;
  c.kernel = GENERATE(Kernel::kMmaSync, Kernel::kWgmma);
  c.hidden = 512;
  c.inter = 256;
  c.experts = 4;
  c.tokens = 45;
  c.top_k = 2;
  c.rows_hint = 20;
  c.all_to_expert_zero = true;
  c.seed = 13;
  CHECK(run_case(c) < kBound);
}

TEST_CASE("fp8 expert FFN at DeepSeek's expert shapes (V4.1: H 5120, I 2304; V4: H 4096, I 2048)") {
  Case c;
  c.kernel = GENERATE(Kernel::kMmaSync, Kernel::kWgmma);
  bool const v41 = GENERATE(true, false);
  c.hidden = v41 ? 5120 : 4096;
  c.inter = v41 ? 2304 : 2048;
  c.experts = 3;
  c.tokens = 5;
  c.top_k = 2;
  c.deepseek_semantics = true;
  c.seed = v41 ? 29 : 31;
  CHECK(run_case(c) < kBound);
}

TEST_CASE("fp8 expert FFN with DeepSeek's clamp, weight-before-down and pow2 scales") {
  Case c;
  c.kernel = GENERATE(Kernel::kMmaSync, Kernel::kWgmma);
  c.hidden = 512;
  c.inter = 256;
  c.experts = 5;
  c.tokens = 9;
  c.top_k = 3;
  c.deepseek_semantics = true;
  c.seed = 11;
  CHECK(run_case(c) < kBound);
}

TEST_CASE("fp8 expert FFN at GLM-5.2's expert shape (H 6144, I 2048)") {
  Case c;
  c.kernel = GENERATE(Kernel::kMmaSync, Kernel::kWgmma);
  c.hidden = 6144;
  c.inter = 2048;
  c.experts = 3;
  c.tokens = 6;
  c.top_k = 2;
  c.seed = 5;
  CHECK(run_case(c) < kBound);
}

}  // namespace
}  // namespace gcmoe::kernels
