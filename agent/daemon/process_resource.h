// What the agent tells the collector about a registered process (telemetry.proto
// Resource): the library's hello metadata (model, revision, precision, versions) plus
// what /proc says (start time, cgroup, container id). The start time tells a reused pid
// apart, so it is part of every session id.
#ifndef OPMAP_AGENT_DAEMON_PROCESS_RESOURCE_H_
#define OPMAP_AGENT_DAEMON_PROCESS_RESOURCE_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

struct ProcFacts {
  int64_t start_ns = 0;       // CLOCK_REALTIME ns the process started
  uint64_t start_ticks = 0;   // /proc/PID/stat field 22, the pid-reuse discriminator
  std::string cgroup;         // cgroup v2 path ("" when unknown)
  std::string container_id;   // 64-hex id found in the cgroup path, "" outside containers
  std::string cmdline;        // argv joined by spaces
};

// NotFound when the process is gone.
absl::StatusOr<ProcFacts> ReadProcFacts(pid_t pid);

// "fp16" → PRECISION_FP16, ... (case-insensitive); UNSPECIFIED for anything else.
opmap::v1::Precision ParsePrecision(const std::string& text);

opmap::v1::Resource BuildResource(const std::string& host, pid_t pid, const ProcFacts& facts,
                                  const std::map<std::string, std::string>& metadata);

// The process's OPMAP_LABELS ("key=value,key=value") into `labels`: at most 32, keys of
// [A-Za-z0-9_.-/] up to 63 bytes, values up to 255 (printable ASCII kept); a malformed or
// reserved item ("injection", "library_version": the agent's own) is skipped, not fatal.
void AddJobLabels(const std::string& text, google::protobuf::Map<std::string, std::string>* labels);

// The platform as labels a collector selects arms by (opmap report --arms gpu_name):
// gpu_name and power_limit_w (the process's GPUs' names and enforced limits in W,
// "+"-joined when they differ) and driver_version, each only when known. Known figures are
// the agent's own and replace a process's OPMAP_LABELS of the same key; unknown ones leave
// the process's label (a host without NVML can still be labelled by its operator).
void AddPlatformLabels(opmap::v1::Resource* resource);

// This host's name, for Resource.host.
std::string HostName();

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_PROCESS_RESOURCE_H_
