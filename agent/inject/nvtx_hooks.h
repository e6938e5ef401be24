// The NVTX callbacks libopmap_inject.so installs (nvtx_install.cc puts them into NVTX's
// tables). Push/pop ranges become one kRange record at the pop; start/end ranges a
// kRangeStart and a kRangeEnd; domains and registered strings are resolved to names here,
// so the ring carries text, not handles. Message text is passed through verbatim (the
// `name{flops=F,bytes=B}` shape suffix is parsed by the analysis, not here).
//
// Every hook first loads window_state and returns when NVTX capture is off: a dormant
// push or pop costs that one load and a return. Where the CUDA graph recorder runs
// (kKeepStacks), push and pop keep the thread's stack at all times — a name copy and no
// clock, no ring — so a graph node built outside any window still gets its ranges. Registration (domains, strings) works
// whether or not a window is open, since handles outlive windows.
#ifndef OPMAP_AGENT_INJECT_NVTX_HOOKS_H_
#define OPMAP_AGENT_INJECT_NVTX_HOOKS_H_

#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL  // types and declarations only: this library is a tool, not a user
#endif
#include <nvtx3/nvToolsExt.h>

#include <cstdint>

#include "agent/inject/graph_stack.h"

namespace opmap::inject::nvtx {

// Marks (an instant, e.g. a request's arrival) are recorded as a range pushed and popped at
// once on the calling thread: the same record, name and payload, about no duration.
void MarkA(const char* message);
void MarkW(const wchar_t* message);
void MarkEx(const nvtxEventAttributes_t* attributes);
void DomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes);

int RangePushA(const char* message);
int RangePushW(const wchar_t* message);
int RangePushEx(const nvtxEventAttributes_t* attributes);
int RangePop();
nvtxRangeId_t RangeStartA(const char* message);
nvtxRangeId_t RangeStartW(const wchar_t* message);
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* attributes);
void RangeEnd(nvtxRangeId_t id);

nvtxDomainHandle_t DomainCreateA(const char* name);
nvtxDomainHandle_t DomainCreateW(const wchar_t* name);
void DomainDestroy(nvtxDomainHandle_t domain);
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t domain, const char* text);
nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t* text);
int DomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes);
int DomainRangePop(nvtxDomainHandle_t domain);
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t domain,
                                 const nvtxEventAttributes_t* attributes);
void DomainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id);

// The calling thread's open push/pop ranges, outermost first (a GraphStackFn; see
// graph_stack.h). 0 unless stacks are kept.
uint32_t GraphStack(GraphStackLevel* out, uint32_t max);

}  // namespace opmap::inject::nvtx

#endif  // OPMAP_AGENT_INJECT_NVTX_HOOKS_H_
