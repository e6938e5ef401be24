// One thread that reads every GPU (NVML) and RAPL zone on the host each `interval` and
// keeps the reads (bounded per device: the oldest go first, counted), so a capture window's
// power rows come from reads already taken: the supervisor never waits on the driver.
// dynolog's "one thread per monitor", as CounterMonitor is for CPU counters.
#ifndef OPMAP_AGENT_DAEMON_POWER_MONITOR_H_
#define OPMAP_AGENT_DAEMON_POWER_MONITOR_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "agent/power/gpu_power.h"
#include "agent/power/power_window.h"
#include "agent/power/rapl.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

struct PowerMonitorOptions {
  std::string nvml_library;   // the operator's flag, never a peer's
  std::string powercap_root;  // the operator's flag, never a peer's
  absl::Duration interval = absl::Milliseconds(500);  // zero: power is not read
  size_t max_reads_per_device = 8192;                 // ~68 min at 500 ms
};

// The GPUs a process uses, from its CUDA_VISIBLE_DEVICES (metadata "cuda_visible_devices";
// absent = unset, "none" = set but empty).
struct GpuSelection {
  bool unset = true;
  std::string cuda_visible_devices;
};

struct WindowPower {
  std::vector<opmap::v1::PowerSample> rows;
  std::vector<std::pair<std::string, std::string>> unavailable;  // (what, reason)
};

class PowerMonitor {
 public:
  explicit PowerMonitor(PowerMonitorOptions options);
  ~PowerMonitor();
  PowerMonitor(const PowerMonitor&) = delete;
  PowerMonitor& operator=(const PowerMonitor&) = delete;

  // Rows for the window [start_ns, end_ns] (CLOCK_REALTIME): the selected GPUs and every
  // RAPL zone; what could not be read as ("power gpu" / "power cpu", reason).
  WindowPower Window(int64_t start_ns, int64_t end_ns, const GpuSelection& gpus) const;
  // The selected GPUs as the Resource record describes them (name, UUID, enforced power
  // limit, clocks of the latest read), `device` numbered as the process sees them.
  std::vector<opmap::v1::Gpu> Gpus(const GpuSelection& gpus) const;
  int64_t dropped_reads() const { return dropped_reads_.load(); }

 private:
  struct Zone {
    RaplZone zone;
    std::deque<ZoneRead> reads;
  };
  void Loop();
  void ReadAll();
  std::vector<size_t> Selected(const GpuSelection& gpus) const;  // mu_ held

  const PowerMonitorOptions options_;
  std::unique_ptr<GpuPowerReader> nvml_;  // null: gpu_unavailable_ says why
  std::string gpu_unavailable_;
  std::unique_ptr<RaplReader> rapl_;      // null: cpu_unavailable_ says why
  std::string cpu_unavailable_;
  std::vector<std::string> uuids_;        // per NVML index

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<std::deque<GpuState>> gpu_reads_;  // per NVML index, time order
  std::vector<Zone> zones_;
  std::atomic<int64_t> dropped_reads_{0};
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_POWER_MONITOR_H_
