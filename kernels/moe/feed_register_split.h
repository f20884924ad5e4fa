#pragma once
// The register split of an expert kernel CTA whose feed warps form a warpgroup of their own
// (kFeedWarps 4: two feed warps and two idle ones), for setmaxnreg (hopper::setmaxnreg_dec/inc).
// Plain constants, so the unit tests check them without a GPU.

namespace gcmoe::kernels {

// The launch gives every thread the cap of kMinBlocks CTAs per SM (65536 registers per SM, in
// 8-register steps); the consumer warpgroups take the most that leaves the feed warpgroup at least
// kMinFeed, and the feed warpgroup the rest (MXFP4 at 48 rows, mxfp4_expert_wgmma.cu: L1 launch
// 96, consumers 104, feed 64; L2 80, 96, 48). The MXFP4 48-row passes need it: at the 96-register
// cap of 16 consumer warps and two feed warps their loop's sums and fragments spilled
// (bench/NOTES.md, twenty-fifth session); with the feed warps at 32 the feed loop spilled instead.
template <int kWgs, int kFeedWarps, int kMinBlocks>
struct FeedRegisters {
  static constexpr bool kWarpgroup = kFeedWarps == 4;
  static constexpr int kThreads = (kWgs * 4 + kFeedWarps) * 32;
  static constexpr int kLaunch = 65536 / (kThreads * kMinBlocks) / 8 * 8;
  static constexpr int kMinFeed = 48;
  // setmaxnreg's largest count is 256.
  static constexpr int kConsumerFit = (kLaunch * kThreads - kMinFeed * 128) / (kWgs * 128) / 8 * 8;
  static constexpr int kConsumer = kConsumerFit < 256 ? kConsumerFit : 256;
  static constexpr int kFeed = (kLaunch * kThreads - kConsumer * kWgs * 128) / 128 / 8 * 8;
  static_assert(!kWarpgroup || (kConsumer >= kLaunch && kFeed >= kMinFeed && kFeed <= kLaunch));
};

}  // namespace gcmoe::kernels
