// InitializeInjectionNvtx2: NVTX calls it (once per NVTX instance in the process: every
// library compiled with the nvtx3 headers has its own) when the first NVTX call of that
// instance finds NVTX_INJECTION64_PATH. We fill the instance's callback tables with our
// hooks; every slot we leave empty NVTX turns into a no-op.
#include <cstdint>

#include "agent/inject/inject_main.h"
#include "agent/inject/nvtx_hooks.h"

namespace opmap::inject {
namespace {

// Sets slot `id` of a module table, if the instance's table has it (an older NVTX has
// fewer slots).
void Set(NvtxFunctionTable table, unsigned int size, unsigned int id, NvtxFunctionPointer fn) {
  if (table == nullptr || id >= size || table[id] == nullptr) return;
  *table[id] = fn;
}

template <typename F>
NvtxFunctionPointer Fn(F* f) {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}

bool InstallCore(const NvtxExportTableCallbacks* cb) {
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) == 0) return false;
  Set(t, n, NVTX_CBID_CORE_MarkEx, Fn(&nvtx::MarkEx));
  Set(t, n, NVTX_CBID_CORE_MarkA, Fn(&nvtx::MarkA));
  Set(t, n, NVTX_CBID_CORE_MarkW, Fn(&nvtx::MarkW));
  Set(t, n, NVTX_CBID_CORE_RangePushA, Fn(&nvtx::RangePushA));
  Set(t, n, NVTX_CBID_CORE_RangePushW, Fn(&nvtx::RangePushW));
  Set(t, n, NVTX_CBID_CORE_RangePushEx, Fn(&nvtx::RangePushEx));
  Set(t, n, NVTX_CBID_CORE_RangePop, Fn(&nvtx::RangePop));
  Set(t, n, NVTX_CBID_CORE_RangeStartA, Fn(&nvtx::RangeStartA));
  Set(t, n, NVTX_CBID_CORE_RangeStartW, Fn(&nvtx::RangeStartW));
  Set(t, n, NVTX_CBID_CORE_RangeStartEx, Fn(&nvtx::RangeStartEx));
  Set(t, n, NVTX_CBID_CORE_RangeEnd, Fn(&nvtx::RangeEnd));
  return true;
}

bool InstallCore2(const NvtxExportTableCallbacks* cb) {
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) == 0) return false;
  Set(t, n, NVTX_CBID_CORE2_DomainCreateA, Fn(&nvtx::DomainCreateA));
  Set(t, n, NVTX_CBID_CORE2_DomainCreateW, Fn(&nvtx::DomainCreateW));
  Set(t, n, NVTX_CBID_CORE2_DomainDestroy, Fn(&nvtx::DomainDestroy));
  Set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, Fn(&nvtx::DomainRegisterStringA));
  Set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, Fn(&nvtx::DomainRegisterStringW));
  Set(t, n, NVTX_CBID_CORE2_DomainMarkEx, Fn(&nvtx::DomainMarkEx));
  Set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, Fn(&nvtx::DomainRangePushEx));
  Set(t, n, NVTX_CBID_CORE2_DomainRangePop, Fn(&nvtx::DomainRangePop));
  Set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, Fn(&nvtx::DomainRangeStartEx));
  Set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, Fn(&nvtx::DomainRangeEnd));
  return true;
}

}  // namespace
}  // namespace opmap::inject

// Returns 1 (attached) or 0 (NVTX then unloads nothing of ours: the library is pinned
// with -z nodelete, see CMakeLists.txt, because its threads may already run).
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  using namespace opmap::inject;
  if (get_export_table == nullptr) return 0;
  const auto* cb =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->struct_size < sizeof(NvtxExportTableCallbacks) ||
      cb->GetModuleFunctionTable == nullptr) {
    return 0;
  }
  // The version handshake NVTX asks tools to make (ignored by NVTX today).
  const auto* version =
      static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  // Hooks first (dormant until a window opens; safe before the ring exists), so that the
  // first window, which EnsureStarted may open at once, already sees NVTX attached.
  if (!InstallCore(cb) || !InstallCore2(cb)) return 0;
  NoteNvtxAttached();
  EnsureStarted(kLoadedByNvtx);
  WaitForFirstWindow();
  return 1;
}
