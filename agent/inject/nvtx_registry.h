// NVTX domains and registered strings. The handles NVTX hands back to the application are
// pointers to entries here, allocated once and never freed (an application may use a
// handle until it exits, from any thread), so a hook turns a handle into a name with no
// lookup and no lock. Both tables are bounded: beyond kMaxDomains / kMaxStrings /
// kMaxStringBytes registration returns nullptr (NVTX's "default domain" / "no message")
// and counts a kTooManyStrings drop.
//
// Thread safety: Create/Register take a mutex (cold path: applications register once);
// reading an entry through its handle needs none.
#ifndef OPMAP_AGENT_INJECT_NVTX_REGISTRY_H_
#define OPMAP_AGENT_INJECT_NVTX_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <string_view>

namespace opmap::inject {

constexpr uint32_t kMaxDomains = 1024;
constexpr uint32_t kMaxStrings = 64 * 1024;
constexpr uint64_t kMaxStringBytes = 16u << 20;

struct DomainEntry {
  uint64_t id;                             // 1, 2, ...; 0 is the default domain
  mutable std::atomic<uint32_t> named_in_gen{0};  // the window its kDomain record went out in
  uint32_t name_len;
  const char* name;
};

// What an nvtxStringHandle_t points at.
struct StringEntry {
  uint32_t len;
  const char* text;  // not NUL-terminated
};

// Same name → same entry (NVTX allows creating a domain twice; tools see one domain).
DomainEntry* CreateDomain(std::string_view name);
// Same (domain, text) → same entry.
const StringEntry* RegisterString(const DomainEntry* domain, std::string_view text);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_NVTX_REGISTRY_H_
