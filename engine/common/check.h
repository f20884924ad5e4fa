#pragma once
// The check-macro family. Each returns a Status (with file:line) from the enclosing function,
// which must return Status or StatusOr<T>. CUDA and NCCL members live in cuda_check.h and
// nccl_check.h so CPU-only code does not include their headers.
//
// nvcc cannot compile fmt (nor spdlog, which includes it): .cu files get the CUDA macros and
// GCMOE_CHECK_ARG_MSG (a plain string); the fmt-formatting macros exist only in host .cc files.

#include <string>

#include "engine/common/status.h"

#ifndef __CUDACC__
#include <fmt/format.h>
#endif

namespace gcmoe::detail {
// "message [file:line]". Out of line so CUDA files that include this header instantiate no fmt.
std::string at_location(std::string const& message, char const* file, int line);
}  // namespace gcmoe::detail

#define GCMOE_CONCAT_INNER_(a, b) a##b
#define GCMOE_CONCAT_(a, b) GCMOE_CONCAT_INNER_(a, b)

// Returns the status of `expr` when it is not OK.
#define GCMOE_RETURN_IF_ERROR(expr)         \
  do {                                      \
    ::gcmoe::Status gcmoe_status_ = (expr); \
    if (!gcmoe_status_.ok())                \
      return gcmoe_status_;                 \
  } while (false)

// `GCMOE_ASSIGN_OR_RETURN(auto x, make_x());` unwraps a StatusOr or returns its status.
#define GCMOE_ASSIGN_OR_RETURN(lhs, expr) \
  GCMOE_ASSIGN_OR_RETURN_IMPL_(GCMOE_CONCAT_(gcmoe_status_or_, __LINE__), lhs, expr)
#define GCMOE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok())                                     \
    return tmp.status();                             \
  lhs = std::move(tmp).value()

// GCMOE_CHECK_ARG with a fixed message, usable in .cu files.
#define GCMOE_CHECK_ARG_MSG(cond, message)                            \
  do {                                                                \
    if (!(cond)) {                                                    \
      return ::gcmoe::invalid_argument_error(                         \
          ::gcmoe::detail::at_location(message, __FILE__, __LINE__)); \
    }                                                                 \
  } while (false)

#ifndef __CUDACC__
// INVALID_ARGUMENT with a fmt-formatted message when `cond` is false:
// GCMOE_CHECK_ARG(top_k <= experts, "top_k {} exceeds the {} experts", top_k, experts);
#define GCMOE_CHECK_ARG(cond, ...)                                                     \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      return ::gcmoe::invalid_argument_error(                                          \
          ::gcmoe::detail::at_location(fmt::format(__VA_ARGS__), __FILE__, __LINE__)); \
    }                                                                                  \
  } while (false)

// INTERNAL when an invariant the code itself maintains is broken.
#define GCMOE_CHECK_INTERNAL(cond, ...)                                                \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      return ::gcmoe::internal_error(                                                  \
          ::gcmoe::detail::at_location(fmt::format(__VA_ARGS__), __FILE__, __LINE__)); \
    }                                                                                  \
  } while (false)
#endif  // __CUDACC__
