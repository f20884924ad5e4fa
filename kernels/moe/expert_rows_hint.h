#pragma once
// How many rows per expert the expert GEMM is configured for (its pass width and the parallel
// pass CTAs) when the routing is not known on the host — a plain policy, testable without a GPU.
//
// T tokens routed top-k over E experts give each expert T·k/E rows on average; the models keep
// the load balanced (their selection bias is trained for it), so nearly every expert holds at most
// mean + 3·sqrt(mean) + 1 rows (Poisson tail). Configuring for that instead of T (the most an
// expert can hold) keeps decode batches on the narrow 8-row configuration, which streams weights
// at the HBM rate on fewer SMs. An expert with more rows stays correct: its CTAs loop over extra
// passes (slower for that expert only).

namespace gcmoe::kernels {

// 1 ≤ result ≤ tokens (0 for no tokens). tokens ≥ 0, top_k ≥ 1, experts ≥ 1.
int routed_rows_hint(int tokens, int top_k, int experts);

}  // namespace gcmoe::kernels
