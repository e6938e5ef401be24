// The hello's metadata text: "key=value\n" lines describing the process, which the agent
// attaches to everything it captures. Values are single lines (newlines become spaces).
// Versions are reported only when the library is already loaded in the process: looking
// them up never loads the driver, the runtime or CUPTI.
#ifndef OPMAP_AGENT_INJECT_METADATA_H_
#define OPMAP_AGENT_INJECT_METADATA_H_

#include <cstdint>
#include <string>

#include "agent/inject/inject_config.h"

namespace opmap::inject {

// How the library came in (a bit each; several are possible in one process).
enum LoadedBy : uint32_t { kLoadedByPreload = 1, kLoadedByNvtx = 2, kLoadedByCuda = 4 };

std::string BuildMetadata(const InjectConfig& config, uint32_t loaded_by);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_METADATA_H_
