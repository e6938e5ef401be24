// Which opmap this is: the version from the source tree (git describe at configure time,
// or the release number of a tarball), the build type and the CUDA/CUPTI it was built
// against. Every binary answers --version with VersionText(); reports and the
// collector's resource records carry Version() (a reproducibility input).
#ifndef OPMAP_COMMON_VERSION_VERSION_H_
#define OPMAP_COMMON_VERSION_VERSION_H_

#include <string>
#include <string_view>

namespace opmap {

// "0.1.0+git98.a473437" (a dirty tree adds ".dirty"), or "0.1.0" from a tarball.
std::string_view Version();
// "RelWithDebInfo", "Release", ...
std::string_view BuildType();
// "CUDA 12.4 (CUPTI)" or "none (built without the CUDA toolkit: no CUPTI capture)".
std::string_view CudaBuild();

// The --version text: "<program> <version>\nbuild: <type>\nCUDA/CUPTI: <cuda>\n".
std::string VersionText(std::string_view program);

}  // namespace opmap

#endif  // OPMAP_COMMON_VERSION_VERSION_H_
