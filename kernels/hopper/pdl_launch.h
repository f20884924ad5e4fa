#pragma once
// One kernel launch that may start while the previous kernel in its stream still runs
// (programmatic dependent launch, when overlap_previous) or an ordinary one. A kernel launched to
// overlap must wait for the previous grid (hopper::wait_prior_grid, griddepcontrol.wait) before it
// reads that grid's outputs; the previous one lets it start early with hopper::launch_dependents.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace gcmoe::kernels::hopper {

template <typename... Params, typename... Args>
cudaError_t launch_with_pdl(void (*kernel)(Params...), dim3 grid, dim3 block,
                            std::size_t dynamic_smem_bytes, cudaStream_t stream,
                            bool overlap_previous, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = dynamic_smem_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = overlap_previous ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace gcmoe::kernels::hopper
