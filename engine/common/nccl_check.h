#pragma once
// The NCCL member of the check-macro family: a failed ncclResult_t becomes a Status naming the
// call, NCCL's error string and the communicator's last error, with file:line. UNAVAILABLE for
// remote and system errors (a peer or the network went away), INTERNAL otherwise.

#include <nccl.h>

#include "engine/common/check.h"

namespace gcmoe {
Status nccl_status(ncclResult_t result, ncclComm_t comm, char const* call, char const* file,
                   int line);
}  // namespace gcmoe

// `comm` may be nullptr (calls made before a communicator exists).
#define GCMOE_CHECK_NCCL(comm, expr)                                                      \
  do {                                                                                    \
    ncclResult_t gcmoe_nccl_result_ = (expr);                                             \
    if (gcmoe_nccl_result_ != ncclSuccess) {                                              \
      return ::gcmoe::nccl_status(gcmoe_nccl_result_, (comm), #expr, __FILE__, __LINE__); \
    }                                                                                     \
  } while (false)
