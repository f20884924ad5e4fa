// The symmetric region layout of an expert-parallel rank (kernels/moe/ep_symmetric_layout.h):
// every buffer aligned, large enough for its worst case, disjoint from every other, inside the
// region — at the real models' shapes and at edge cases (one rank, one token).
#include "kernels/moe/ep_symmetric_layout.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

struct Span {
  std::size_t offset;
  std::size_t bytes;
};

std::vector<Span> spans_of(EpSymmetricLayout const& l, MoeLayerConfig const& c, int ranks) {
  std::size_t const cap = static_cast<std::size_t>(l.capacity);
  std::size_t const h = static_cast<std::size_t>(c.hidden);
  std::size_t const r = static_cast<std::size_t>(ranks);
  std::size_t const e = static_cast<std::size_t>(c.num_experts);
  std::vector<Span> spans;
  for (int p = 0; p < 2; ++p) {
    spans.push_back({l.recv_xq[p], cap * h});
    spans.push_back({l.recv_scales[p], cap * (h / 128) * 4});
    spans.push_back({l.recv_weights[p], cap * 4});
    spans.push_back({l.row_flags[p], cap * 4});
    spans.push_back({l.counts[p], r * e * 4});
    spans.push_back({l.count_flags[p], r * 4});
  }
  spans.push_back({l.done_flags, r * 4});
  spans.push_back({l.barrier_flags, r * 4});
  spans.push_back({l.y, cap * h * 2});
  return spans;
}

void check_layout(MoeLayerConfig const& c, int max_tokens, int ranks) {
  EpSymmetricLayout const l = ep_symmetric_layout(c, max_tokens, ranks);
  INFO("H " << c.hidden << " E " << c.num_experts << " k " << c.top_k << " T " << max_tokens
            << " R " << ranks);
  CHECK(l.capacity == ep_receive_capacity(c, max_tokens, ranks));
  CHECK(l.bytes % kEpSymmetricAlignment == 0);
  auto spans = spans_of(l, c, ranks);
  for (auto const& s : spans) {
    CHECK(s.offset % kEpSymmetricAlignment == 0);
    CHECK(s.offset + s.bytes <= l.bytes);
  }
  std::sort(spans.begin(), spans.end(),
            [](Span const& a, Span const& b) { return a.offset < b.offset; });
  for (std::size_t i = 1; i < spans.size(); ++i) {
    // Strictly increasing starts (no two buffers share an address, even empty ones) and no overlap.
    CHECK(spans[i].offset > spans[i - 1].offset);
    CHECK(spans[i - 1].offset + spans[i - 1].bytes <= spans[i].offset);
  }
  // The same inputs give the same layout (every rank derives it on its own).
  EpSymmetricLayout const again = ep_symmetric_layout(c, max_tokens, ranks);
  CHECK(again.bytes == l.bytes);
  CHECK(again.y == l.y);
}

TEST_CASE("EP symmetric layout: aligned, disjoint, in bounds") {
  MoeLayerConfig glm;
  glm.hidden = 6144;
  glm.intermediate = 2048;
  glm.num_experts = 256;
  glm.top_k = 8;
  MoeLayerConfig v41 = glm;
  v41.hidden = 5120;
  v41.num_experts = 384;
  v41.top_k = 6;
  MoeLayerConfig tiny = glm;
  tiny.hidden = 128;
  tiny.num_experts = 2;
  tiny.top_k = 1;
  for (int const ranks : {1, 2, 4, 8}) {
    for (int const tokens : {1, 7, 256}) {
      check_layout(glm, tokens, ranks);
      check_layout(v41, tokens, ranks);
    }
  }
  check_layout(tiny, 1, 1);
  check_layout(tiny, 1, 2);
}

TEST_CASE("EP rank device bytes: the region plus the SwiGLU rows and scales") {
  MoeLayerConfig glm;
  glm.hidden = 6144;
  glm.intermediate = 2048;
  glm.num_experts = 256;
  glm.top_k = 8;
  EpSymmetricLayout const l = ep_symmetric_layout(glm, 2048, 8);
  CHECK(ep_rank_device_bytes(glm, 2048, 8) ==
        static_cast<std::int64_t>(l.bytes) + l.capacity * 2048 + l.capacity * 16 * 4);
  // 8 ranks × 2048 tokens × 8 rows + 2048 shared rows, each ≥ 2 parities × (H + H/32) + 2H bytes.
  CHECK(l.capacity == 8 * 2048 * 8 + 2048);
  CHECK(static_cast<std::int64_t>(l.bytes) >= l.capacity * (2 * (6144 + 192 + 8) + 2 * 6144));
}

TEST_CASE("EP receive capacity: the smaller of top-k rows and one row per local expert") {
  MoeLayerConfig c;
  c.hidden = 256;
  c.num_experts = 16;
  c.top_k = 8;
  // Every case + one row per own token (the shared expert in the routed launch).
  // 4 ranks, 4 local experts: a source sends at most 4 rows per token to one owner, not 8.
  CHECK(ep_receive_capacity(c, 10, 4) == 4 * 10 * 4 + 10);
  // 1 rank: every pair stays home, k rows per token.
  CHECK(ep_receive_capacity(c, 10, 1) == 10 * 8 + 10);
  // GLM-5.2 over 8 ranks at 256 tokens: 8 · 256 · 8 rows (32 local experts > k).
  c.num_experts = 256;
  CHECK(ep_receive_capacity(c, 256, 8) == 8 * 256 * 8 + 256);
}

}  // namespace
}  // namespace gcmoe::kernels
