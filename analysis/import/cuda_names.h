// Names for GPU memory operations, spelled as Kineto spells them ("Memcpy HtoD (Pageable
// -> Device)", "Memset (Device)"), from CUPTI's enums (CUpti_ActivityMemcpyKind,
// CUpti_ActivityMemoryKind) — which Nsight Systems exports and libopmap_inject records
// unchanged. One spelling for every source, so the layer taxonomy types them all as memcpy.
#ifndef OPMAP_ANALYSIS_IMPORT_CUDA_NAMES_H_
#define OPMAP_ANALYSIS_IMPORT_CUDA_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace opmap::analysis {

std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind);
std::string MemsetName(int64_t memory_kind);

// CUPTI and Nsight name API functions with a version suffix ("cudaLaunchKernel_v7000");
// the function is the name without it ("_ptsz"/"_ptds" stay: they are different entry
// points).
std::string_view StripApiVersion(std::string_view name);

// CUPTI names kernels and PC-sampling functions by their mangled symbol
// ("_Z22triad_elementwise_kernelPKfS0_Pff"); Kineto and Nsight print the demangled form
// ("triad_elementwise_kernel(float const*, float const*, float*, float)"). Live captures
// demangle with this so every source spells a kernel the same way and stall samples join
// their kernels. A name that is not a mangled C++ symbol comes back unchanged.
std::string DemangleKernelName(std::string_view name);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_CUDA_NAMES_H_
