#include "agent/inject/nvtx_hooks.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string_view>

#include "agent/inject/capture_state.h"
#include "agent/inject/nvtx_registry.h"
#include "agent/inject/nvtx_thread.h"
#include "abi/ring_records.h"
#include "abi/control_messages.h"
#include "agent/inject/wide_text.h"

namespace opmap::inject::nvtx {
namespace {

using ring::RingWriter;

// Zero-initialized, trivially destructible: see nvtx_thread.h.
thread_local ThreadState t_state;

// The thread's state, looked up once per hook. In a dlopen'd library every access to a
// thread_local is a __tls_get_addr call, and GCC re-materializes the address at each use
// (it was 10 calls per push+pop); the empty asm makes the pointer opaque, so it stays in
// a register instead.
inline ThreadState& Self() {
  ThreadState* t = &t_state;
  asm("" : "+r"(t));
  return *t;
}

// nvtxRangeStart ids: the window generation in the top 24 bits, so an end whose start was
// made in another window (or while dormant, id 0) is recognised without a table.
constexpr int kIdGenerationShift = 40;
constexpr uint64_t kIdCounterMask = (uint64_t{1} << kIdGenerationShift) - 1;
constinit std::atomic<uint64_t> g_next_range_id{0};

uint64_t IdGeneration(uint32_t generation) { return generation & 0xFFFFFFu; }

// One message, whichever way the application passed it.
struct Message {
  const char* ascii = nullptr;
  const wchar_t* wide = nullptr;
  const StringEntry* registered = nullptr;
};

struct Attributes {
  uint32_t category = 0;
  uint32_t color = 0;
  uint64_t payload = 0;
  uint8_t payload_kind = ring::kPayloadNone;
  Message message;
};

template <typename T>
T Bits(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Reads only the fields inside the size the caller declared (older NVTX versions pass a
// shorter struct; a zeroed field means "not given").
Attributes FromEvent(const nvtxEventAttributes_t* a) {
  Attributes out;
  if (a == nullptr) return out;
  const size_t size = a->size;
  auto has = [size](size_t offset, size_t bytes) { return offset + bytes <= size; };
  if (has(offsetof(nvtxEventAttributes_t, category), 4)) out.category = a->category;
  if (has(offsetof(nvtxEventAttributes_t, color), 4) && a->colorType == NVTX_COLOR_ARGB) {
    out.color = a->color;
  }
  if (has(offsetof(nvtxEventAttributes_t, payload), 8)) {
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        out.payload_kind = ring::kPayloadUint64;
        out.payload = a->payload.ullValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        out.payload_kind = ring::kPayloadInt64;
        out.payload = static_cast<uint64_t>(a->payload.llValue);
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        out.payload_kind = ring::kPayloadDouble;
        out.payload = Bits<uint64_t>(&a->payload.dValue);
        break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        out.payload_kind = ring::kPayloadUint32;
        out.payload = a->payload.uiValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT32:
        out.payload_kind = ring::kPayloadInt32;
        out.payload = static_cast<uint64_t>(static_cast<int64_t>(a->payload.iValue));
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT: {
        out.payload_kind = ring::kPayloadFloat;
        const double widened = a->payload.fValue;
        out.payload = Bits<uint64_t>(&widened);
        break;
      }
      default:
        break;
    }
  }
  if (has(offsetof(nvtxEventAttributes_t, message), sizeof(a->message))) {
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII: out.message.ascii = a->message.ascii; break;
      case NVTX_MESSAGE_TYPE_UNICODE: out.message.wide = a->message.unicode; break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        out.message.registered = reinterpret_cast<const StringEntry*>(a->message.registered);
        break;
      default: break;
    }
  }
  return out;
}

const DomainEntry* AsDomain(nvtxDomainHandle_t d) {
  return reinterpret_cast<const DomainEntry*>(d);
}

uint32_t Tid(ThreadState& t) {
  if (t.tid == 0) t.tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t.tid;
}

// Whether the thread's stack still holds. Kept (kKeepStacks): exact since the first hook
// that saw the flag on this thread, across windows; each entry carries the window it was
// pushed in. Not kept: a stack left over from an earlier window was pushed before this
// window began, so it is forgotten (its pops count as kUnmatchedPop), not emitted.
void Sync(ThreadState& t, uint64_t state) {
  if (KeepingStacks(state)) {
    if (!t.keeping) {
      t.keeping = true;
      t.depth = 0;
      t.overflow = 0;
    }
    return;
  }
  const uint32_t generation = GenerationOf(state);
  // A stack kept until now holds pushes made outside any window: start afresh.
  if (t.generation == generation && !t.keeping) return;
  t.keeping = false;
  t.generation = generation;
  t.depth = 0;
  t.overflow = 0;
}

// A kept stack's depth as the window sees it: its own ranges below entry `i`.
uint32_t WindowDepth(const ThreadState& t, uint32_t i, uint32_t generation) {
  uint32_t depth = 0;
  for (uint32_t j = 0; j < i; ++j) depth += t.stack[j].generation == generation ? 1 : 0;
  return depth;
}

// Writes the message text at `out` (at most `cap` bytes). Registered strings are not
// copied: their entries live for the whole process.
struct Text {
  const char* data = nullptr;
  uint32_t len = 0;
  bool truncated = false;
};

Text CopyMessage(const Message& m, char* out, uint32_t cap) {
  Text t;
  if (cap > ring::kMaxInlineName) cap = ring::kMaxInlineName;
  if (m.registered != nullptr) {
    t.data = m.registered->text;
    t.len = m.registered->len;  // bounded to kMaxInlineName at registration
    return t;
  }
  t.data = out;
  if (m.ascii != nullptr) {
    const size_t n = strnlen(m.ascii, size_t{cap} + 1);
    t.truncated = n > cap;
    t.len = static_cast<uint32_t>(t.truncated ? cap : n);
    std::memcpy(out, m.ascii, t.len);
  } else if (m.wide != nullptr) {
    t.len = static_cast<uint32_t>(WideToUtf8(m.wide, out, cap, &t.truncated));
  }
  return t;
}

// kDomain goes out once per window per domain, before the window ends (not necessarily
// before the first record naming the domain: another thread may win the race to use it).
void NameDomain(const DomainEntry* d, uint32_t generation) {
  if (d == nullptr || d->named_in_gen.load(std::memory_order_relaxed) == generation) return;
  if (d->named_in_gen.exchange(generation, std::memory_order_relaxed) == generation) return;
  RingWriter& w = g_state.writer;
  auto* r = w.Reserve<ring::DomainRecord>(ring::kDomain, d->name_len);
  if (r == nullptr) {
    d->named_in_gen.store(0, std::memory_order_relaxed);  // retry at the next use
    return;
  }
  r->domain_id = d->id;
  r->name_len = static_cast<uint16_t>(d->name_len);
  RingWriter::CopyAfter(r, std::string_view(d->name, d->name_len));
  w.Commit(&r->h, sizeof(*r) + d->name_len);
}

void MarkTruncated(ring::RecordHeader* h, bool truncated) {
  if (!truncated) return;
  h->flags |= ring::kFlagNameTruncated;
  g_state.writer.CountTruncated();
}

bool Capturing(uint64_t state) { return (FlagsOf(state) & ring::kCaptureNvtx) != 0; }

// The hooks below run only while capturing, or (push/pop) while stacks are kept: every
// public hook loads window_state and returns before anything else otherwise (the dormant
// cost). Kept but not capturing, push and pop only maintain the stack: no clock, no ring.
int PushCommon(uint64_t state, const DomainEntry* domain, const Attributes& a) {
  ThreadState& t = Self();
  HookGuard guard(t);
  if (!guard.entered()) return 0;
  Sync(t, state);
  const bool capturing = Capturing(state);
  if (t.depth >= kMaxDepth) {
    ++t.overflow;
    if (capturing) g_state.writer.CountDrop(ring::kNestingTooDeep);
    return static_cast<int>(kMaxDepth + t.overflow - 1);
  }
  const uint32_t arena_start = t.depth > 0 ? t.stack[t.depth - 1].arena_end : 0;
  OpenRange& e = t.stack[t.depth];
  const Text name = CopyMessage(a.message, t.arena + arena_start, kNameArenaBytes - arena_start);
  e.name = name.data;
  e.name_len = name.len;
  e.truncated = name.truncated;
  e.arena_end = arena_start + (name.data == t.arena + arena_start ? name.len : 0);
  e.domain = domain;
  e.category = a.category;
  e.color = a.color;
  e.payload = a.payload;
  e.payload_kind = a.payload_kind;
  e.generation = capturing ? GenerationOf(state) : 0;
  e.graph_index = 0;
  e.start_ns = capturing ? NowNs() : 0;  // last, so the range excludes our bookkeeping
  return static_cast<int>(t.depth++);
}

void EmitRange(ThreadState& t, uint64_t state, const OpenRange& e, uint32_t depth,
               int64_t end_ns) {
  WriteScope scope(Tid(t), state);
  if (!scope.ok()) return;
  NameDomain(e.domain, GenerationOf(state));
  RingWriter& w = g_state.writer;
  auto* r = w.Reserve<ring::RangeRecord>(ring::kRange, e.name_len);
  if (r == nullptr) return;
  r->start_ns = e.start_ns;
  r->end_ns = end_ns;
  r->domain_id = e.domain != nullptr ? e.domain->id : 0;
  r->payload = e.payload;
  r->tid = t.tid;
  r->category = e.category;
  r->color = e.color;
  r->depth = static_cast<uint16_t>(depth);
  r->payload_kind = e.payload_kind;
  r->name_len = static_cast<uint16_t>(e.name_len);
  RingWriter::CopyAfter(r, std::string_view(e.name, e.name_len));
  MarkTruncated(&r->h, e.truncated);
  w.Commit(&r->h, sizeof(*r) + e.name_len);
}

int PopCommon(uint64_t state, const DomainEntry* domain) {
  const bool capturing = Capturing(state);
  const int64_t end_ns = capturing ? NowNs() : 0;  // first: the range excludes bookkeeping
  ThreadState& t = Self();
  HookGuard guard(t);
  if (!guard.entered()) return 0;
  Sync(t, state);
  if (t.overflow > 0) {  // the push was dropped (and counted) as too deep
    --t.overflow;
    return static_cast<int>(kMaxDepth + t.overflow);
  }
  // NVTX keeps one stack per domain; the innermost open range of this domain is the one
  // popped (nearly always the top of the thread's stack).
  uint32_t i = t.depth;
  while (i > 0 && t.stack[i - 1].domain != domain) --i;
  if (i == 0) {
    if (capturing) g_state.writer.CountDrop(ring::kUnmatchedPop);
    return -1;
  }
  --i;
  if (capturing) {
    const uint32_t generation = GenerationOf(state);
    if (!t.keeping) {
      EmitRange(t, state, t.stack[i], i, end_ns);
    } else if (t.stack[i].generation == generation) {
      EmitRange(t, state, t.stack[i], WindowDepth(t, i, generation), end_ns);
    } else {
      g_state.writer.CountDrop(ring::kUnmatchedPop);  // pushed before this window
    }
  }
  if (i + 1 < t.depth) {
    std::memmove(&t.stack[i], &t.stack[i + 1], sizeof(OpenRange) * (t.depth - i - 1));
  }
  --t.depth;
  return static_cast<int>(i);
}

nvtxRangeId_t StartCommon(uint64_t state, const DomainEntry* domain, const Attributes& a) {
  const int64_t start_ns = NowNs();
  ThreadState& t = Self();
  HookGuard guard(t);
  if (!guard.entered()) return 0;
  const uint32_t generation = GenerationOf(state);
  const uint64_t id =
      (IdGeneration(generation) << kIdGenerationShift) |
      ((g_next_range_id.fetch_add(1, std::memory_order_relaxed) + 1) & kIdCounterMask);
  // The free part of the arena is scratch space here: the record is written right away.
  Sync(t, state);
  const uint32_t arena_start = t.depth > 0 ? t.stack[t.depth - 1].arena_end : 0;
  const Text name = CopyMessage(a.message, t.arena + arena_start, kNameArenaBytes - arena_start);
  WriteScope scope(Tid(t), state);
  if (!scope.ok()) return id;
  NameDomain(domain, generation);
  RingWriter& w = g_state.writer;
  auto* r = w.Reserve<ring::RangeStartRecord>(ring::kRangeStart, name.len);
  if (r == nullptr) return id;
  r->range_id = id;
  r->start_ns = start_ns;
  r->domain_id = domain != nullptr ? domain->id : 0;
  r->payload = a.payload;
  r->tid = t.tid;
  r->category = a.category;
  r->color = a.color;
  r->payload_kind = a.payload_kind;
  r->name_len = static_cast<uint16_t>(name.len);
  RingWriter::CopyAfter(r, std::string_view(name.data, name.len));
  MarkTruncated(&r->h, name.truncated);
  w.Commit(&r->h, sizeof(*r) + name.len);
  return id;
}

void EndCommon(uint64_t state, const DomainEntry* domain, nvtxRangeId_t id) {
  const int64_t end_ns = NowNs();
  ThreadState& t = Self();
  HookGuard guard(t);
  if (!guard.entered()) return;
  const uint32_t generation = GenerationOf(state);
  if ((id >> kIdGenerationShift) != IdGeneration(generation)) {
    g_state.writer.CountDrop(ring::kUnmatchedPop);  // started before this window
    return;
  }
  WriteScope scope(Tid(t), state);
  if (!scope.ok()) return;
  NameDomain(domain, generation);
  RingWriter& w = g_state.writer;
  auto* r = w.Reserve<ring::RangeEndRecord>(ring::kRangeEnd, 0);
  if (r == nullptr) return;
  r->range_id = id;
  r->end_ns = end_ns;
  r->domain_id = domain != nullptr ? domain->id : 0;
  r->tid = t.tid;
  w.Commit(&r->h, sizeof(*r));
}

Attributes FromAscii(const char* message) {
  Attributes a;
  a.message.ascii = message;
  return a;
}

Attributes FromWide(const wchar_t* message) {
  Attributes a;
  a.message.wide = message;
  return a;
}

// Registration converts wide text once, outside any window, so a local buffer will do.
template <typename Fn>
auto WithUtf8(const wchar_t* text, Fn&& fn) {
  char buf[ring::kMaxInlineName];
  bool truncated = false;
  const size_t n = WideToUtf8(text, buf, sizeof(buf), &truncated);
  return fn(std::string_view(buf, n));
}

}  // namespace

// Dormant: one load, one test, return. Attributes are decoded only when capturing (or,
// for push/pop, keeping stacks).
#define OPMAP_DORMANT_RETURN(value)          \
  const uint64_t state = LoadWindowState(); \
  if (!Capturing(state)) return value
#define OPMAP_STACK_DORMANT_RETURN(value)                                      \
  const uint64_t state = LoadWindowState();                                   \
  if ((FlagsOf(state) & (ring::kCaptureNvtx | kKeepStacks)) == 0) return value

// Inside another hook of this thread (a tool calling NVTX from a callback) push and pop
// both do nothing; checked here so that a pop never pairs with someone else's push.
void MarkCommon(uint64_t state, const DomainEntry* domain, const Attributes& a) {
  if (Self().in_hook) return;
  PushCommon(state, domain, a);
  PopCommon(state, domain);
}

void MarkA(const char* message) {
  OPMAP_DORMANT_RETURN();
  MarkCommon(state, nullptr, FromAscii(message));
}
void MarkW(const wchar_t* message) {
  OPMAP_DORMANT_RETURN();
  MarkCommon(state, nullptr, FromWide(message));
}
void MarkEx(const nvtxEventAttributes_t* a) {
  OPMAP_DORMANT_RETURN();
  MarkCommon(state, nullptr, FromEvent(a));
}
void DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  OPMAP_DORMANT_RETURN();
  MarkCommon(state, AsDomain(d), FromEvent(a));
}

int RangePushA(const char* message) {
  OPMAP_STACK_DORMANT_RETURN(0);
  return PushCommon(state, nullptr, FromAscii(message));
}
int RangePushW(const wchar_t* message) {
  OPMAP_STACK_DORMANT_RETURN(0);
  return PushCommon(state, nullptr, FromWide(message));
}
int RangePushEx(const nvtxEventAttributes_t* a) {
  OPMAP_STACK_DORMANT_RETURN(0);
  return PushCommon(state, nullptr, FromEvent(a));
}
int RangePop() {
  OPMAP_STACK_DORMANT_RETURN(0);
  return PopCommon(state, nullptr);
}
nvtxRangeId_t RangeStartA(const char* message) {
  OPMAP_DORMANT_RETURN(0);
  return StartCommon(state, nullptr, FromAscii(message));
}
nvtxRangeId_t RangeStartW(const wchar_t* message) {
  OPMAP_DORMANT_RETURN(0);
  return StartCommon(state, nullptr, FromWide(message));
}
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* a) {
  OPMAP_DORMANT_RETURN(0);
  return StartCommon(state, nullptr, FromEvent(a));
}
void RangeEnd(nvtxRangeId_t id) {
  OPMAP_DORMANT_RETURN();
  EndCommon(state, nullptr, id);
}
int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  OPMAP_STACK_DORMANT_RETURN(0);
  return PushCommon(state, AsDomain(d), FromEvent(a));
}
int DomainRangePop(nvtxDomainHandle_t d) {
  OPMAP_STACK_DORMANT_RETURN(0);
  return PopCommon(state, AsDomain(d));
}
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  OPMAP_DORMANT_RETURN(0);
  return StartCommon(state, AsDomain(d), FromEvent(a));
}
void DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  OPMAP_DORMANT_RETURN();
  EndCommon(state, AsDomain(d), id);
}

#undef OPMAP_DORMANT_RETURN
#undef OPMAP_STACK_DORMANT_RETURN

uint32_t GraphStack(GraphStackLevel* out, uint32_t max) {
  const uint64_t state = LoadWindowState();
  if (!KeepingStacks(state)) return 0;  // a stack not kept may be stale
  ThreadState& t = Self();
  HookGuard guard(t);
  if (!guard.entered()) return 0;
  Sync(t, state);
  const uint32_t n = t.depth < max ? t.depth : max;
  for (uint32_t i = 0; i < n; ++i) {
    OpenRange& e = t.stack[i];
    out[i] = GraphStackLevel{e.name, e.name_len, e.truncated, &e.graph_index};
  }
  return n;
}

nvtxDomainHandle_t DomainCreateA(const char* name) {
  HookGuard guard(Self());
  if (!guard.entered()) return nullptr;
  return reinterpret_cast<nvtxDomainHandle_t>(
      CreateDomain(name != nullptr ? std::string_view(name) : std::string_view()));
}

nvtxDomainHandle_t DomainCreateW(const wchar_t* name) {
  HookGuard guard(Self());
  if (!guard.entered()) return nullptr;
  return WithUtf8(name, [](std::string_view s) {
    return reinterpret_cast<nvtxDomainHandle_t>(CreateDomain(s));
  });
}

// Entries are never freed: another thread may still be inside a hook with the handle.
void DomainDestroy(nvtxDomainHandle_t) {}

nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t d, const char* text) {
  HookGuard guard(Self());
  if (!guard.entered()) return nullptr;
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<StringEntry*>(RegisterString(
      AsDomain(d), text != nullptr ? std::string_view(text) : std::string_view())));
}

nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t* text) {
  HookGuard guard(Self());
  if (!guard.entered()) return nullptr;
  return WithUtf8(text, [d](std::string_view s) {
    return reinterpret_cast<nvtxStringHandle_t>(
        const_cast<StringEntry*>(RegisterString(AsDomain(d), s)));
  });
}

}  // namespace opmap::inject::nvtx
