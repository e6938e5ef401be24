#include "agent/daemon/power_monitor.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "agent/power/nvml_api.h"
#include "common/base/wall_clock.h"

namespace opmap::agent {
namespace {

using base::RealtimeNs;

// The reads of one device that a window uses, copied out under the lock.
template <typename Read>
std::vector<Read> InWindow(const std::deque<Read>& reads, int64_t start_ns, int64_t end_ns) {
  std::vector<int64_t> times;
  times.reserve(reads.size());
  for (const Read& r : reads) times.push_back(r.time_ns);
  const ReadSpan span = WindowReads(times, start_ns, end_ns);
  return std::vector<Read>(reads.begin() + static_cast<std::ptrdiff_t>(span.first),
                           reads.begin() + static_cast<std::ptrdiff_t>(span.last));
}

}  // namespace

PowerMonitor::PowerMonitor(PowerMonitorOptions options) : options_(std::move(options)) {
  if (options_.interval <= absl::ZeroDuration()) {
    gpu_unavailable_ = cpu_unavailable_ = "power reads are off (--power-interval 0)";
    return;
  }
  absl::StatusOr<NvmlApi> api = LoadNvmlApi(options_.nvml_library);
  if (!api.ok()) {
    gpu_unavailable_ = absl::StrCat("NVML: ", api.status().message());
  } else if (absl::StatusOr<std::unique_ptr<GpuPowerReader>> reader =
                 GpuPowerReader::Open(std::move(*api));
             !reader.ok()) {
    gpu_unavailable_ = absl::StrCat("NVML: ", reader.status().message());
  } else {
    nvml_ = std::move(*reader);
    gpu_reads_.resize(nvml_->gpu_count());
    for (size_t i = 0; i < nvml_->gpu_count(); ++i) uuids_.push_back(nvml_->uuid(i));
  }
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(options_.powercap_root);
  if (!rapl.ok()) {
    cpu_unavailable_ = absl::StrCat("RAPL: ", rapl.status().message());
  } else {
    rapl_ = std::make_unique<RaplReader>(std::move(*rapl));
    for (const RaplZone& z : rapl_->zones()) zones_.push_back(Zone{z, {}});
  }
  if (nvml_ != nullptr || rapl_ != nullptr) {
    ReadAll();  // a first read now: the first window's start has one before it
    thread_ = std::thread([this] { Loop(); });
  }
}

PowerMonitor::~PowerMonitor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PowerMonitor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, absl::ToChronoNanoseconds(options_.interval), [&] { return stop_; });
    if (stop_) break;
    lock.unlock();
    ReadAll();
    lock.lock();
  }
}

void PowerMonitor::ReadAll() {
  // Reads outside the lock (NVML may take milliseconds); appends under it.
  std::vector<GpuState> gpus;
  if (nvml_ != nullptr) {
    for (size_t i = 0; i < nvml_->gpu_count(); ++i) gpus.push_back(nvml_->Read(i, RealtimeNs()));
  }
  absl::StatusOr<std::vector<uint64_t>> energy;
  int64_t zone_time = 0;
  if (rapl_ != nullptr) {
    zone_time = RealtimeNs();
    energy = rapl_->ReadEnergyUj();
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto append = [&](auto& reads, auto read) {
    if (reads.size() >= options_.max_reads_per_device) {
      reads.pop_front();
      dropped_reads_.fetch_add(1);
    }
    reads.push_back(std::move(read));
  };
  for (size_t i = 0; i < gpus.size(); ++i) append(gpu_reads_[i], std::move(gpus[i]));
  if (rapl_ != nullptr && energy.ok() && energy->size() == zones_.size()) {
    for (size_t z = 0; z < zones_.size(); ++z) {
      append(zones_[z].reads, ZoneRead{zone_time, (*energy)[z]});
    }
  }
}

std::vector<size_t> PowerMonitor::Selected(const GpuSelection& gpus) const {
  return VisibleGpus(gpus.unset, gpus.cuda_visible_devices == "none" ? std::string()
                                                                     : gpus.cuda_visible_devices,
                     uuids_);
}

WindowPower PowerMonitor::Window(int64_t start_ns, int64_t end_ns,
                                 const GpuSelection& gpus) const {
  WindowPower out;
  std::lock_guard<std::mutex> lock(mu_);
  if (nvml_ == nullptr) {
    out.unavailable.emplace_back("power gpu", gpu_unavailable_);
  } else {
    const std::vector<size_t> selected = Selected(gpus);
    if (selected.empty() && gpus.cuda_visible_devices != "none") {
      out.unavailable.emplace_back(
          "power gpu", absl::StrCat("CUDA_VISIBLE_DEVICES=", gpus.cuda_visible_devices,
                                    " names none of the ", uuids_.size(),
                                    " GPUs NVML sees by ordinal or UUID"));
    }
    for (size_t i : selected) {
      std::vector<GpuState> reads = InWindow(gpu_reads_[i], start_ns, end_ns);
      if (reads.empty()) {
        out.unavailable.emplace_back(
            "power gpu", absl::StrCat("GPU ", i, ": no read within the window"));
        continue;
      }
      out.rows.push_back(GpuPowerRow(reads));
    }
  }
  if (rapl_ == nullptr) {
    out.unavailable.emplace_back("power cpu", cpu_unavailable_);
  } else {
    for (const Zone& z : zones_) {
      out.rows.push_back(ZonePowerRow(z.zone, InWindow(z.reads, start_ns, end_ns)));
    }
  }
  return out;
}

std::vector<opmap::v1::Gpu> PowerMonitor::Gpus(const GpuSelection& gpus) const {
  std::vector<opmap::v1::Gpu> out;
  std::lock_guard<std::mutex> lock(mu_);
  if (nvml_ == nullptr) return out;
  uint32_t device = 0;
  for (size_t i : Selected(gpus)) {
    if (gpu_reads_[i].empty()) continue;
    const GpuState& last = gpu_reads_[i].back();
    opmap::v1::Gpu& g = out.emplace_back();
    g.set_device(device++);
    g.set_name(last.name);
    g.set_uuid(last.uuid);
    if (last.power_limit_mw.value) g.set_power_limit_mw(*last.power_limit_mw.value);
  }
  return out;
}

}  // namespace opmap::agent
