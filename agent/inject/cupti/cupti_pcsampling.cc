#include "agent/inject/cupti/cupti_pcsampling.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace opmap::inject {
namespace {

// Makes `ctx` current on the control thread for the PC-sampling calls and restores what
// was current before (the control thread normally has none).
class CtxScope {
 public:
  CtxScope(const DriverApi& d, CUcontext ctx) : d_(d) {
    pushed_ = d_.cuCtxPushCurrent != nullptr && d_.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
  }
  ~CtxScope() {
    CUcontext popped = nullptr;
    if (pushed_) d_.cuCtxPopCurrent(&popped);
  }

 private:
  const DriverApi& d_;
  bool pushed_ = false;
};

constexpr size_t kMaxStallReasons = 256;  // GH100 has 19; a larger count is not believed
constexpr int kMaxFetches = 256;          // GetData calls per context per Stop

}  // namespace

struct PcSampler::Context {
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  bool retained = false;
  bool enabled = false;
  bool started = false;
  std::vector<std::string> reason_names;                // by position
  std::unordered_map<uint32_t, size_t> reason_position;  // hardware index → position
  // Two sample buffers: one CUPTI keeps (filled at disable), one for GetData.
  std::vector<CUpti_PCSamplingPCData> config_pcs, fetch_pcs;
  std::vector<CUpti_PCSamplingStallReason> config_reasons, fetch_reasons;
  CUpti_PCSamplingData config_data{};
  CUpti_PCSamplingData fetch_data{};
  std::map<std::string, std::vector<uint64_t>> samples;  // function → count per position
  // CUPTI mallocs function names and may share one pointer between records: free each
  // once, after the session is disabled (cupti_pcsampling.h: "user's responsibility").
  std::unordered_set<char*> names_to_free;
  uint64_t dropped = 0;
  bool hardware_buffer_full = false;
};

namespace {

void InitData(CUpti_PCSamplingData* data, std::vector<CUpti_PCSamplingPCData>* pcs,
              std::vector<CUpti_PCSamplingStallReason>* reasons, size_t npcs, size_t nreasons) {
  pcs->assign(npcs, CUpti_PCSamplingPCData{});
  reasons->assign(npcs * nreasons, CUpti_PCSamplingStallReason{});
  for (size_t i = 0; i < npcs; ++i) (*pcs)[i].stallReason = reasons->data() + i * nreasons;
  *data = CUpti_PCSamplingData{};
  data->size = sizeof(CUpti_PCSamplingData);
  data->collectNumPcs = npcs;
  data->pPcData = pcs->data();
}

}  // namespace

PcSampler::~PcSampler() {
  // Stop normally ran; this only covers a capture destroyed mid-window.
  for (Context* c : contexts_) {
    Release(c);
    delete c;
  }
}

bool PcSampler::Start(const CuptiApi& api, const DriverApi& driver,
                      const PcSamplingOptions& options, std::string* reason) {
  if (!api.has_pc_sampling()) {
    *reason = api.path + " has no PC sampling API";
    return false;
  }
  api_ = &api;
  driver_ = &driver;
  options_ = options;
  notes_.clear();
  int count = 0;
  CUresult cr = driver.cuDeviceGetCount(&count);
  if (cr != CUDA_SUCCESS) {
    *reason = "cuDeviceGetCount: " + DriverResultString(driver, cr);
    return false;
  }
  std::string first_failure;
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    unsigned int flags = 0;
    int active = 0;
    if (driver.cuDeviceGet(&dev, i) != CUDA_SUCCESS ||
        driver.cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active) {
      continue;  // retaining an inactive primary context would create one: not ours to do
    }
    any_active = true;
    auto* c = new Context;
    c->ordinal = i;
    c->device = dev;
    std::string why;
    cr = driver.cuDevicePrimaryCtxRetain(&c->ctx, dev);
    if (cr != CUDA_SUCCESS) {
      why = "cuDevicePrimaryCtxRetain: " + DriverResultString(driver, cr);
    } else {
      c->retained = true;
      if (StartOne(c, &why)) {
        contexts_.push_back(c);
        continue;
      }
    }
    Release(c);
    delete c;
    if (first_failure.empty()) first_failure = "device " + std::to_string(i) + ": " + why;
  }
  if (contexts_.empty()) {
    *reason = !first_failure.empty() ? first_failure
              : any_active ? "no device could be sampled"
                           : "no CUDA context is active yet (PC sampling attaches to the "
                             "application's primary context)";
    return false;
  }
  if (!first_failure.empty()) notes_ = "not sampled: " + first_failure;
  return true;
}

bool PcSampler::StartOne(Context* c, std::string* reason) {
  const CuptiApi& api = *api_;
  CtxScope scope(*driver_, c->ctx);

  CUpti_PCSamplingEnableParams enable{};
  enable.size = CUpti_PCSamplingEnableParamsSize;
  enable.ctx = c->ctx;
  CUptiResult r = api.cuptiPCSamplingEnable(&enable);
  if (r != CUPTI_SUCCESS) {
    *reason = CuptiFailure(api, "cuptiPCSamplingEnable", r);
    return false;
  }
  c->enabled = true;

  size_t n = 0;
  CUpti_PCSamplingGetNumStallReasonsParams num{};
  num.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  num.ctx = c->ctx;
  num.numStallReasons = &n;
  r = api.cuptiPCSamplingGetNumStallReasons(&num);
  if (r != CUPTI_SUCCESS) {
    *reason = CuptiFailure(api, "cuptiPCSamplingGetNumStallReasons", r);
    return false;
  }
  if (n == 0 || n > kMaxStallReasons) {
    *reason = "device reports " + std::to_string(n) + " stall reasons";
    return false;
  }

  std::vector<uint32_t> index(n, 0);
  std::vector<char> storage(n * CUPTI_STALL_REASON_STRING_SIZE, '\0');
  std::vector<char*> names(n);
  for (size_t i = 0; i < n; ++i) names[i] = storage.data() + i * CUPTI_STALL_REASON_STRING_SIZE;
  CUpti_PCSamplingGetStallReasonsParams get{};
  get.size = CUpti_PCSamplingGetStallReasonsParamsSize;
  get.ctx = c->ctx;
  get.numStallReasons = n;
  get.stallReasonIndex = index.data();
  get.stallReasons = names.data();
  r = api.cuptiPCSamplingGetStallReasons(&get);
  if (r != CUPTI_SUCCESS) {
    *reason = CuptiFailure(api, "cuptiPCSamplingGetStallReasons", r);
    return false;
  }
  c->reason_names.clear();
  for (size_t i = 0; i < n; ++i) {
    c->reason_names.emplace_back(names[i], strnlen(names[i], CUPTI_STALL_REASON_STRING_SIZE));
    c->reason_position[index[i]] = i;
  }

  const size_t npcs = options_.pcs_per_fetch > 0 ? options_.pcs_per_fetch : 2048;
  InitData(&c->config_data, &c->config_pcs, &c->config_reasons, npcs, n);
  InitData(&c->fetch_data, &c->fetch_pcs, &c->fetch_reasons, npcs, n);

  CUpti_PCSamplingConfigurationInfo attrs[7] = {};
  attrs[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  attrs[0].attributeData.stallReasonData.stallReasonCount = n;
  attrs[0].attributeData.stallReasonData.pStallReasonIndex = index.data();
  attrs[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  attrs[1].attributeData.samplingDataBufferData.samplingDataBuffer = &c->config_data;
  attrs[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  // Continuous: kernels keep running concurrently (serialized mode would change the very
  // timing we measure).
  attrs[2].attributeData.collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  attrs[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  attrs[3].attributeData.samplingPeriodData.samplingPeriod =
      options_.period_log2 < 5 ? 5 : (options_.period_log2 > 31 ? 31 : options_.period_log2);
  attrs[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
  // The default is 512 MiB of the application's GPU memory.
  attrs[4].attributeData.hardwareBufferSizeData.hardwareBufferSize =
      options_.hardware_buffer_bytes;
  attrs[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  attrs[5].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  attrs[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  attrs[6].attributeData.outputDataFormatData.outputDataFormat =
      CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  CUpti_PCSamplingConfigurationInfoParams config{};
  config.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  config.ctx = c->ctx;
  config.numAttributes = 7;
  config.pPCSamplingConfigurationInfo = attrs;
  r = api.cuptiPCSamplingSetConfigurationAttribute(&config);
  if (r != CUPTI_SUCCESS) {
    *reason = CuptiFailure(api, "cuptiPCSamplingSetConfigurationAttribute", r);
    return false;
  }

  CUpti_PCSamplingStartParams start{};
  start.size = CUpti_PCSamplingStartParamsSize;
  start.ctx = c->ctx;
  r = api.cuptiPCSamplingStart(&start);
  if (r != CUPTI_SUCCESS) {
    *reason = CuptiFailure(api, "cuptiPCSamplingStart", r);
    return false;
  }
  c->started = true;
  return true;
}

void PcSampler::Drain(Context* c, CUpti_PCSamplingData* data) {
  const size_t npcs = data->totalNumPcs < data->collectNumPcs ? data->totalNumPcs
                                                             : data->collectNumPcs;
  const size_t nreasons = c->reason_names.size();
  for (size_t i = 0; i < npcs; ++i) {
    CUpti_PCSamplingPCData& pc = data->pPcData[i];
    std::string function;
    if (pc.functionName != nullptr) {
      c->names_to_free.insert(pc.functionName);
      function.assign(pc.functionName, strnlen(pc.functionName, ring::kMaxInlineName));
      pc.functionName = nullptr;
    }
    std::vector<uint64_t>& counts = c->samples[function];
    counts.resize(nreasons, 0);
    const size_t k = pc.stallReasonCount < nreasons ? pc.stallReasonCount : nreasons;
    for (size_t j = 0; j < k; ++j) {
      auto it = c->reason_position.find(pc.stallReason[j].pcSamplingStallReasonIndex);
      if (it != c->reason_position.end()) counts[it->second] += pc.stallReason[j].samples;
    }
  }
  c->dropped += data->droppedSamples;
  c->hardware_buffer_full = c->hardware_buffer_full || data->hardwareBufferFull != 0;
  data->totalNumPcs = 0;
}

std::string PcSampler::Stop(ring::RingWriter* ring) {
  std::string notes = notes_;
  auto note = [&notes](const std::string& s) { notes += (notes.empty() ? "" : "; ") + s; };
  for (Context* c : contexts_) {
    const CuptiApi& api = *api_;
    {
      CtxScope scope(*driver_, c->ctx);
      if (c->started) {
        CUpti_PCSamplingStopParams stop{};
        stop.size = CUpti_PCSamplingStopParamsSize;
        stop.ctx = c->ctx;
        const CUptiResult r = api.cuptiPCSamplingStop(&stop);
        if (r != CUPTI_SUCCESS) note(CuptiFailure(api, "cuptiPCSamplingStop", r));
        c->started = false;
      }
      for (int i = 0; i < kMaxFetches; ++i) {
        CUpti_PCSamplingGetDataParams get{};
        get.size = CUpti_PCSamplingGetDataParamsSize;
        get.ctx = c->ctx;
        get.pcSamplingData = &c->fetch_data;
        const CUptiResult r = api.cuptiPCSamplingGetData(&get);
        if (r != CUPTI_SUCCESS) {
          // CUPTI_ERROR_OUT_OF_MEMORY here means the hardware buffer filled up.
          Drain(c, &c->fetch_data);
          note(CuptiFailure(api, "cuptiPCSamplingGetData", r));
          break;
        }
        const bool more = c->fetch_data.remainingNumPcs > 0;
        const bool got = c->fetch_data.totalNumPcs > 0;
        Drain(c, &c->fetch_data);
        if (!more && !got) break;
      }
    }
    // Disable flushes what the hardware still held into config_data.
    Release(c);
    Drain(c, &c->config_data);
    if (c->dropped > 0 || c->hardware_buffer_full) {
      note("device " + std::to_string(c->ordinal) + ": " + std::to_string(c->dropped) +
           " samples dropped" + (c->hardware_buffer_full ? " (hardware buffer full)" : ""));
    }
    if (ring != nullptr && ring->valid()) {
      for (const auto& [function, counts] : c->samples) {
        for (size_t pos = 0; pos < counts.size(); ++pos) {
          if (counts[pos] == 0) continue;
          const std::string& reason = c->reason_names[pos];
          const uint16_t rlen = static_cast<uint16_t>(reason.size());
          const uint32_t room = ring::kMaxInlineName - rlen;
          const bool cut = function.size() > room;
          const uint16_t flen = static_cast<uint16_t>(cut ? room : function.size());
          auto* rec = ring->Reserve<ring::StallRecord>(ring::kStall, flen + rlen);
          if (rec == nullptr) continue;  // counted as kRingFull by the writer
          rec->samples = counts[pos];
          rec->device_id = static_cast<uint32_t>(c->ordinal);
          rec->function_len = flen;
          rec->reason_len = rlen;
          ring::RingWriter::CopyAfter(rec, std::string_view(function).substr(0, flen));
          ring::RingWriter::CopyAfter(rec, reason, flen);
          if (cut) {
            rec->h.flags |= ring::kFlagNameTruncated;
            ring->CountTruncated();
          }
          ring->Commit(&rec->h, sizeof(*rec) + flen + rlen);
        }
      }
    }
    for (char* p : c->names_to_free) std::free(p);
    c->names_to_free.clear();
    delete c;
  }
  contexts_.clear();
  notes_.clear();
  return notes;
}

void PcSampler::Release(Context* c) {
  if (c->enabled) {
    CtxScope scope(*driver_, c->ctx);
    CUpti_PCSamplingDisableParams disable{};
    disable.size = CUpti_PCSamplingDisableParamsSize;
    disable.ctx = c->ctx;
    api_->cuptiPCSamplingDisable(&disable);  // nothing more to do if it fails
    c->enabled = false;
  }
  if (c->retained) {
    driver_->cuDevicePrimaryCtxRelease(c->device);
    c->retained = false;
  }
}

}  // namespace opmap::inject
