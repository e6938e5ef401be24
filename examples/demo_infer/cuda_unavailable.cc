// MakeCudaBackend for builds without OPMAP_DEMO_CUDA: --device cuda says why it can't run
// instead of the flag being unknown.
#include <memory>
#include <string>

#include "examples/demo_infer/backend.h"

namespace opmap::demo {

std::unique_ptr<Backend> MakeCudaBackend(std::string* reason) {
  *reason = "built without CUDA (configure with -DOPMAP_DEMO_CUDA=ON)";
  return nullptr;
}

}  // namespace opmap::demo
