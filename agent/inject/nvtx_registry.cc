#include "agent/inject/nvtx_registry.h"

#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "agent/inject/capture_state.h"
#include "abi/ring_protocol.h"

namespace opmap::inject {
namespace {

// Heap-allocated and leaked on purpose: handles stay valid through static destruction.
struct Registry {
  std::mutex mu;
  std::unordered_map<std::string, DomainEntry*> domains;
  std::unordered_map<std::string, StringEntry*> strings;  // key: domain id + '\0' + text
  uint64_t string_bytes = 0;
};

Registry& Reg() {
  static Registry* r = new Registry();
  return *r;
}

void CountTooMany() {
  if (g_state.writer.valid()) g_state.writer.CountDrop(ring::kTooManyStrings);
}

const char* CopyText(std::string_view text) {
  char* p = new char[text.size() + 1];
  if (!text.empty()) std::memcpy(p, text.data(), text.size());
  p[text.size()] = '\0';
  return p;
}

}  // namespace

DomainEntry* CreateDomain(std::string_view name) {
  if (name.size() > ring::kMaxInlineName) name = name.substr(0, ring::kMaxInlineName);
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string key(name);
  if (auto it = r.domains.find(key); it != r.domains.end()) return it->second;
  if (r.domains.size() >= kMaxDomains) {
    CountTooMany();
    return nullptr;
  }
  auto* d = new (std::nothrow) DomainEntry();
  if (d == nullptr) return nullptr;
  d->id = r.domains.size() + 1;
  d->name_len = static_cast<uint32_t>(name.size());
  d->name = CopyText(name);
  r.domains.emplace(std::move(key), d);
  return d;
}

const StringEntry* RegisterString(const DomainEntry* domain, std::string_view text) {
  if (text.size() > ring::kMaxInlineName) text = text.substr(0, ring::kMaxInlineName);
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string key = std::to_string(domain != nullptr ? domain->id : 0);
  key.push_back('\0');
  key.append(text);
  if (auto it = r.strings.find(key); it != r.strings.end()) return it->second;
  if (r.strings.size() >= kMaxStrings || r.string_bytes + text.size() > kMaxStringBytes) {
    CountTooMany();
    return nullptr;
  }
  auto* s = new (std::nothrow) StringEntry();
  if (s == nullptr) return nullptr;
  s->len = static_cast<uint32_t>(text.size());
  s->text = CopyText(text);
  r.string_bytes += text.size();
  r.strings.emplace(std::move(key), s);
  return s;
}

}  // namespace opmap::inject
