// Runner for `gpu` tests: with no visible CUDA device it prints why and exits 77, which ctest
// reports as Skipped (never a silent pass).
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "tests/support/catch_runner.h"

// Devices a test binary needs (multi-GPU tests build this runner with 2).
#ifndef GCMOE_TEST_MIN_GPUS
#define GCMOE_TEST_MIN_GPUS 1
#endif

int main(int argc, char** argv) {
  int count = 0;
  cudaError_t const error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count < GCMOE_TEST_MIN_GPUS) {
    std::printf("SKIPPED: needs %d CUDA device(s), %s\n", GCMOE_TEST_MIN_GPUS,
                error != cudaSuccess ? cudaGetErrorString(error)
                                     : (std::to_string(count) + " visible").c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
