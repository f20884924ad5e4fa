// Runner for `gpu` tests: with no visible CUDA device it prints why and exits 77, which ctest
// reports as Skipped (never a silent pass).
#include <cuda_runtime.h>

#include <cstdio>

#include "tests/support/catch_runner.h"

int main(int argc, char** argv) {
  int count = 0;
  cudaError_t const error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device visible (%s)\n",
                error != cudaSuccess ? cudaGetErrorString(error) : "0 devices");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
