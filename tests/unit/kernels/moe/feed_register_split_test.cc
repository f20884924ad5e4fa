// The register split of a CTA with a feed warpgroup (kernels/moe/feed_register_split.h): the MXFP4
// 48-row kernels' numbers, and that no split hands out more registers than the launch gave.
#include "kernels/moe/feed_register_split.h"

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

struct Split {
  int launch, consumer, feed, threads, wgs;
};

template <int kWgs, int kMinBlocks>
Split split() {
  using R = FeedRegisters<kWgs, 4, kMinBlocks>;
  return {R::kLaunch, R::kConsumer, R::kFeed, R::kThreads, kWgs};
}

TEST_CASE("Feed register split: the MXFP4 48-row kernels' launch, consumer and feed registers") {
  // L1: 4 consumer warpgroups, one CTA per SM (640 threads).
  Split const l1 = split<4, 1>();
  CHECK(l1.threads == 640);
  CHECK(l1.launch == 96);
  CHECK(l1.consumer == 104);
  CHECK(l1.feed == 64);
  // L2: 2 consumer warpgroups, two CTAs per SM (384 threads each).
  Split const l2 = split<2, 2>();
  CHECK(l2.threads == 384);
  CHECK(l2.launch == 80);
  CHECK(l2.consumer == 96);
  CHECK(l2.feed == 48);
  // Two feed warps (no warpgroup): no reallocation.
  CHECK_FALSE((FeedRegisters<4, 2, 1>::kWarpgroup));
}

TEST_CASE("Feed register split: within the launch's registers, in setmaxnreg's steps and range") {
  for (Split const s :
       {split<1, 1>(), split<1, 2>(), split<2, 1>(), split<2, 2>(), split<4, 1>()}) {
    INFO("consumer warpgroups " << s.wgs << ", launch " << s.launch);
    CHECK(s.consumer * s.wgs * 128 + s.feed * 128 <= s.launch * s.threads);
    CHECK(s.consumer % 8 == 0);
    CHECK(s.feed % 8 == 0);
    CHECK(s.consumer >= s.launch);
    CHECK(s.consumer <= 256);
    CHECK(s.feed >= 48);
    CHECK(s.feed <= s.launch);
  }
}

}  // namespace
}  // namespace gcmoe::kernels
