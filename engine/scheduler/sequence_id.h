#pragma once
// The rank-local handle of a sequence. The front-end maps client request ids (strings) to these.

#include <cstdint>

namespace gcmoe::scheduler {

using SequenceId = std::uint64_t;

}  // namespace gcmoe::scheduler
