#include "agent/inject/inject_main.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "agent/inject/capture_state.h"
#include "agent/inject/control_client.h"
#include "agent/inject/file_capture.h"
#include "agent/inject/first_window.h"
#include "agent/inject/inject_config.h"
#include "agent/inject/nvtx_hooks.h"
#include "agent/inject/ring_memfd.h"
#include "agent/inject/window.h"

#if OPMAP_INJECT_HAVE_CUPTI
#include "agent/inject/cupti/cupti_graphs.h"
#endif

namespace opmap::inject {
namespace {

// Everything the threads use, allocated once and never freed: the control thread is never
// joined and hooks run through static destruction, so nothing may be destroyed at exit.
struct Runtime {
  InjectConfig config;
  RingMemory ring;
  WindowController windows;
  FirstWindowLatch latch;
  ControlClient* client = nullptr;
  FileCapture* file = nullptr;
  pid_t owner_pid = 0;
};

constexpr int64_t kFileModeInitWaitMs = 5000;

constinit std::atomic<Runtime*> g_runtime{nullptr};
constinit std::atomic<uint32_t> g_loaded_by{0};
pthread_once_t g_once = PTHREAD_ONCE_INIT;
bool g_forked_child = false;

void* ThreadMain(void* arg) {
  auto* rt = static_cast<Runtime*>(arg);
  if (rt->file != nullptr) {
    rt->file->Run();
  } else {
    rt->client->Run();
  }
  return nullptr;
}

void AtExitHandler() {
  Runtime* rt = g_runtime.load(std::memory_order_acquire);
  // A forked child shares its parent's ring and agent: the parent's window is not ours
  // to end.
  if (rt == nullptr || getpid() != rt->owner_pid) return;
  if (rt->file != nullptr) rt->file->AtExit();
  if (rt->client != nullptr) rt->client->AtExit();
  ring::WindowDoneBody done{};
  bool ended = false;
  rt->windows.Finalize(&done, &ended, 200'000'000);  // CUPTI finalize (file mode too)
}

// The child of a fork() keeps our hooks in its NVTX tables but has none of our threads,
// and the ring mapping is shared with the parent: switch everything off for good. A child
// that execs loads the library afresh and registers itself.
void ForkChild() {
  g_forked_child = true;
  g_state.window_state.store(0, std::memory_order_relaxed);
  g_state.writer = ring::RingWriter();
}

void Start() {
  auto* rt = new Runtime();
  rt->config = InjectConfig::FromEnv();
  rt->owner_pid = getpid();
  if (!CreateRing(rt->config.ring_bytes, &rt->ring)) {
    rt->latch.Settle();
    g_runtime.store(rt, std::memory_order_release);
    return;  // dormant for the life of the process
  }
  g_state.writer = ring::RingWriter(rt->ring.base);
  if (!rt->config.capture_file.empty()) {
    rt->file = new FileCapture(rt->config, rt->ring, &rt->windows, &rt->latch, &g_loaded_by);
  } else {
    rt->client = new ControlClient(rt->config, rt->ring, &rt->windows, &rt->latch, &g_loaded_by);
  }
#if OPMAP_INJECT_HAVE_CUPTI
  if (rt->config.graph_nodes) {
    // From the first NVTX call on, so ranges opened before cuInit are on the stacks too;
    // the recorder itself can only start inside cuInit (StartGraphRecordingIfAsked).
    NoteGraphRecordingRequested();
    if (!GraphRecordingFailed()) KeepStacks();
  }
#endif
  g_runtime.store(rt, std::memory_order_release);
  atexit(AtExitHandler);
  pthread_atfork(nullptr, nullptr, ForkChild);

  // The thread blocks every signal, so the host's handlers (SIGINT, SIGCHLD, SIGPROF, ...)
  // keep running on the host's own threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  const bool started = pthread_create(&thread, &attr, ThreadMain, rt) == 0;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (started) {
    pthread_setname_np(thread, "opmap-inject");
  } else {
    rt->latch.Settle();
  }
}

}  // namespace

void EnsureStarted(LoadedBy how) {
  g_loaded_by.fetch_or(how, std::memory_order_relaxed);
  if (g_forked_child) return;
  pthread_once(&g_once, Start);
}

void StartGraphRecordingIfAsked() {
#if OPMAP_INJECT_HAVE_CUPTI
  // The environment, not the Runtime: this runs before EnsureStarted (see there).
  const char* asked = std::getenv("OPMAP_GRAPH_NODES");
  if (asked == nullptr || std::strcmp(asked, "1") != 0 || g_forked_child) return;
  std::string reason;
  if (!StartGraphRecording(&nvtx::GraphStack, &g_state.writer, &reason)) {
    // Each window reports the reason; the stacks need not be kept for nothing.
    g_state.window_state.fetch_and(~uint64_t{kKeepStacks}, std::memory_order_seq_cst);
  }
#endif
}

void NoteNvtxAttached() {
  if (g_nvtx_attached.exchange(true, std::memory_order_acq_rel)) return;
  // A window that began before the process's first NVTX call reported NVTX unavailable;
  // say in that window that it is attached now, so the reader does not take the ranges
  // that follow for a contradiction.
  const uint64_t state = LoadWindowState();
  if ((FlagsOf(state) & ring::kCaptureNvtx) == 0) return;
  WriteScope scope(static_cast<uint32_t>(getpid()), state);
  if (!scope.ok()) return;
  constexpr std::string_view kAttached = "attached (first NVTX call of the process)";
  ring::RingWriter& w = g_state.writer;
  if (auto* r = w.Reserve<ring::StatusRecord>(ring::kStatus, kAttached.size())) {
    r->time_ns = NowNs();
    r->component = ring::kComponentNvtx;
    r->code = ring::kStatusOk;
    r->message_len = kAttached.size();
    ring::RingWriter::CopyAfter(r, kAttached);
    w.Commit(&r->h, sizeof(*r) + kAttached.size());
  }
}

void WaitForFirstWindow() {
  Runtime* rt = g_runtime.load(std::memory_order_acquire);
  if (rt == nullptr) return;
  int64_t wait_ms = rt->config.init_wait_ms;
  // File mode promises a window "from the start": its thread opens the window at once, so
  // by default the first NVTX call waits (bounded) for that rather than race it.
  if (rt->file != nullptr && wait_ms == 0) wait_ms = kFileModeInitWaitMs;
  if (wait_ms > 0) rt->latch.Wait(wait_ms);
}

}  // namespace opmap::inject

namespace {

// LD_PRELOAD: start at load. NVTX only looks for a tool through NVTX_INJECTION64_PATH, so
// when the process owner preloaded us and did not set it, point it at this very file
// (dlopen of an already-loaded path returns this copy). Done here, before main, while the
// process is still single-threaded: setenv is not thread-safe.
__attribute__((constructor)) void OnLoad() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || std::strstr(preload, "libopmap_inject") == nullptr) return;
  // OPMAP_GRAPH_NODES=1 needs the driver to call InitializeInjection inside cuInit, the
  // one moment the graph recorder can start before any graph is built: the same for
  // CUDA_INJECTION64_PATH, unless the owner named another tool there.
  const char* graphs = std::getenv("OPMAP_GRAPH_NODES");
  const bool want_cuda = graphs != nullptr && std::strcmp(graphs, "1") == 0 &&
                         std::getenv("CUDA_INJECTION64_PATH") == nullptr;
  if (std::getenv("NVTX_INJECTION64_PATH") == nullptr || want_cuda) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&OnLoad), &info) != 0 && info.dli_fname != nullptr) {
      setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
      if (want_cuda) setenv("CUDA_INJECTION64_PATH", info.dli_fname, 0);
    }
  }
  opmap::inject::EnsureStarted(opmap::inject::kLoadedByPreload);
}

}  // namespace

// CUDA_INJECTION64_PATH: the driver calls this inside cuInit. 1 = success. Never waits
// for a first window here: starting CUPTI for that window needs cuInit, which this very
// call is inside of.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  // The recorder first: a window EnsureStarted may open at once (file mode) must find
  // CUPTI's subscriber taken by it, to share, rather than take it itself.
  opmap::inject::StartGraphRecordingIfAsked();
  opmap::inject::EnsureStarted(opmap::inject::kLoadedByCuda);
  return 1;
}
