#include "examples/demo_infer/nvtx_marks.h"

#include <cstdint>
#include <map>
#include <string>

#ifdef OPMAP_DEMO_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace opmap::demo {
namespace {

#ifdef OPMAP_DEMO_HAVE_NVTX
constexpr char kDomain[] = "opmap.demo";

nvtxEventAttributes_t Attributes(void* string_handle, const uint64_t* payload) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = static_cast<nvtxStringHandle_t>(string_handle);
  if (payload != nullptr) {
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = *payload;
  }
  return a;
}
#endif

}  // namespace

NvtxMarks::NvtxMarks() {
#ifdef OPMAP_DEMO_HAVE_NVTX
  // The first NVTX call is where a tool named by NVTX_INJECTION64_PATH gets loaded.
  domain_ = nvtxDomainCreateA(kDomain);
#endif
}

MarkId NvtxMarks::Register(const std::string& count_key, const std::string& message) {
  for (size_t i = 0; i < marks_.size(); ++i) {
    if (marks_[i].message == message) return static_cast<MarkId>(i);
  }
  Mark& m = marks_.emplace_back();
  m.count_key = count_key;
  m.message = message;
#ifdef OPMAP_DEMO_HAVE_NVTX
  m.handle = nvtxDomainRegisterStringA(static_cast<nvtxDomainHandle_t>(domain_), message.c_str());
#endif
  return static_cast<MarkId>(marks_.size() - 1);
}

void NvtxMarks::Push(MarkId mark, const uint64_t* payload) {
  Mark& m = marks_[mark];
  m.count.fetch_add(1, std::memory_order_relaxed);
#ifdef OPMAP_DEMO_HAVE_NVTX
  nvtxEventAttributes_t a = Attributes(m.handle, payload);
  nvtxDomainRangePushEx(static_cast<nvtxDomainHandle_t>(domain_), &a);
#endif
}

void NvtxMarks::Instant(MarkId mark, uint64_t payload) {
  Mark& m = marks_[mark];
  m.count.fetch_add(1, std::memory_order_relaxed);
#ifdef OPMAP_DEMO_HAVE_NVTX
  nvtxEventAttributes_t a = Attributes(m.handle, &payload);
  nvtxDomainMarkEx(static_cast<nvtxDomainHandle_t>(domain_), &a);
#endif
}

void NvtxMarks::Pop() {
#ifdef OPMAP_DEMO_HAVE_NVTX
  nvtxDomainRangePop(static_cast<nvtxDomainHandle_t>(domain_));
#endif
}

RangeId NvtxMarks::Start(MarkId mark, uint64_t payload) {
  Mark& m = marks_[mark];
  m.count.fetch_add(1, std::memory_order_relaxed);
#ifdef OPMAP_DEMO_HAVE_NVTX
  nvtxEventAttributes_t a = Attributes(m.handle, &payload);
  return nvtxDomainRangeStartEx(static_cast<nvtxDomainHandle_t>(domain_), &a);
#else
  return 0;
#endif
}

void NvtxMarks::End(RangeId range) {
#ifdef OPMAP_DEMO_HAVE_NVTX
  nvtxDomainRangeEnd(static_cast<nvtxDomainHandle_t>(domain_), range);
#endif
}

std::string NvtxMarks::Status() {
#ifdef OPMAP_DEMO_HAVE_NVTX
  return "enabled";
#else
  return "unavailable: built without the CUDA toolkit's nvtx3 headers (ranges counted only)";
#endif
}

std::map<std::string, uint64_t> NvtxMarks::Counts() const {
  std::map<std::string, uint64_t> out;
  for (const Mark& m : marks_) out[m.count_key] += m.count.load(std::memory_order_relaxed);
  return out;
}

}  // namespace opmap::demo
