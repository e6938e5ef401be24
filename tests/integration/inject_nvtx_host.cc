// A small NVTX-annotated host program for the libopmap_inject.so tests: each mode makes a
// known set of NVTX calls, so a test can assert exactly what the library captured (names,
// payloads, nesting, domains, drops) — the edge cases the demo workload never makes.
//
//   inject_nvtx_host basic        every NVTX entry point we hook, once or twice
//   inject_nvtx_host deep N       N nested pushes, then N pops
//   inject_nvtx_host prewindow    push before the window; "pushed" on stdout; waits for a
//                                 line on stdin (the test opens the window); then more
//   inject_nvtx_host spin N       N push/pop pairs of one registered string
//   inject_nvtx_host wait         waits for a line on stdin, then pushes/pops "after" once
//   inject_nvtx_host long         names longer than a record holds, and more than the
//                                 per-thread name arena holds while nested
//   inject_nvtx_host strings N    registers N distinct strings (beyond the library's bound)
//   inject_nvtx_host fork         forks; the child makes NVTX calls and exits
//   inject_nvtx_host none         no NVTX call at all (LD_PRELOAD on a plain process)
//
// Prints "done" and exits 0. Never links against anything of ours: NVTX finds the library
// through NVTX_INJECTION64_PATH, exactly as in a real inference process.
#include <nvtx3/nvToolsExt.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

namespace {

nvtxEventAttributes_t Attributes() {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

void WaitForLine() {
  std::string line;
  std::getline(std::cin, line);
}

void Basic() {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("opmap.host");
  nvtxDomainHandle_t wide_domain = nvtxDomainCreateW(L"opmap.wide\u00e9");
  nvtxStringHandle_t op = nvtxDomainRegisterStringA(domain, "host::matmul{flops=2048,bytes=96}");
  nvtxStringHandle_t wide_op = nvtxDomainRegisterStringW(domain, L"host::wide\u4e2d");

  nvtxRangePushA("outer");                      // depth 0, default domain
  nvtxRangePushW(L"wide \u00fc\u20ac\U0001F600");  // depth 1: 2-, 3- and 4-byte UTF-8
  {
    nvtxEventAttributes_t a = Attributes();
    a.category = 7;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF00FF00u;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = -5;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "ex_ascii";
    nvtxRangePushEx(&a);                        // depth 2
    nvtxRangePop();
  }
  {
    nvtxEventAttributes_t a = Attributes();
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = 42;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = op;
    nvtxDomainRangePushEx(domain, &a);          // depth 2, domain opmap.host
    nvtxEventAttributes_t w = Attributes();
    w.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    w.payload.dValue = 1.5;
    w.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    w.message.registered = wide_op;
    nvtxDomainRangePushEx(domain, &w);          // depth 3
    nvtxDomainRangePop(domain);
    nvtxDomainRangePop(domain);
  }
  {
    nvtxEventAttributes_t a = Attributes();
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"wide_domain_range";
    nvtxDomainRangePushEx(wide_domain, &a);     // depth 2
    nvtxDomainRangePop(wide_domain);
  }
  nvtxRangePop();  // wide
  nvtxRangePop();  // outer

  // Start/end ranges: one on this thread, one ended by another thread.
  nvtxRangeId_t local = nvtxRangeStartA("local_start");
  nvtxRangeEnd(local);
  nvtxEventAttributes_t r = Attributes();
  r.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  r.payload.ullValue = 1001;
  r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  r.message.registered = nvtxDomainRegisterStringA(domain, "request");
  nvtxRangeId_t crossing = nvtxDomainRangeStartEx(domain, &r);
  std::thread([&] {
    nvtxRangePushA("worker_op");  // depth 0 on the worker thread
    nvtxRangePop();
    nvtxDomainRangeEnd(domain, crossing);
  }).join();
  nvtxRangeId_t wide_start = nvtxRangeStartW(L"wide_start");
  nvtxRangeEnd(wide_start);

  // A pop with nothing pushed: counted as kUnmatchedPop, nothing emitted.
  nvtxRangePop();
}

void Deep(int n) {
  for (int i = 0; i < n; ++i) nvtxRangePushA(("level" + std::to_string(i)).c_str());
  for (int i = 0; i < n; ++i) nvtxRangePop();
}

void PreWindow() {
  nvtxRangePushA("outer_before_window");
  nvtxRangeId_t early = nvtxRangeStartA("start_before_window");
  std::cout << "pushed" << std::endl;
  WaitForLine();
  nvtxRangePushA("inner");
  nvtxRangePop();                  // emitted, depth 0: the window began inside "outer"
  nvtxRangePop();                  // outer: pushed before the window → kUnmatchedPop
  nvtxRangeEnd(early);             // started before the window → kUnmatchedPop
  nvtxRangePushA("after");
  nvtxRangePop();                  // emitted, depth 0 (the stack was not corrupted)
}

void Spin(long n) {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("opmap.spin");
  nvtxEventAttributes_t a = Attributes();
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nvtxDomainRegisterStringA(domain, "spin");
  for (long i = 0; i < n; ++i) {
    nvtxDomainRangePushEx(domain, &a);
    nvtxDomainRangePop(domain);
  }
}

void Long() {
  nvtxRangePushA(std::string(5000, 'a').c_str());  // cut to the 4096-byte inline maximum
  const std::string b(4000, 'b');
  for (int i = 0; i < 4; ++i) nvtxRangePushA(b.c_str());  // the 4th outgrows the arena
  for (int i = 0; i < 5; ++i) nvtxRangePop();
}

void Strings(int n) {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("opmap.strings");
  int null_handles = 0;
  for (int i = 0; i < n; ++i) {
    null_handles += nvtxDomainRegisterStringA(domain, ("s" + std::to_string(i)).c_str()) == nullptr;
  }
  std::cout << "null_handles " << null_handles << std::endl;
}

void Fork() {
  nvtxRangePushA("parent");
  const pid_t pid = fork();
  if (pid == 0) {
    nvtxRangePushA("child");
    nvtxRangePop();
    nvtxRangePop();
    std::exit(0);  // runs atexit handlers: the parent's window must survive them
  }
  int status = 0;
  waitpid(pid, &status, 0);
  nvtxRangePop();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "basic";
  if (mode == "basic") {
    Basic();
  } else if (mode == "deep") {
    Deep(argc > 2 ? std::atoi(argv[2]) : 70);
  } else if (mode == "prewindow") {
    PreWindow();
  } else if (mode == "spin") {
    Spin(argc > 2 ? std::atol(argv[2]) : 1000);
  } else if (mode == "wait") {
    nvtxInitialize(nullptr);  // loads the tool now, so registration happens before the wait
    WaitForLine();
    nvtxRangePushA("after");
    nvtxRangePop();
  } else if (mode == "long") {
    Long();
  } else if (mode == "strings") {
    Strings(argc > 2 ? std::atoi(argv[2]) : 1000);
  } else if (mode == "fork") {
    Fork();
  } else if (mode != "none") {
    std::cerr << "unknown mode " << mode << "\n";
    return 2;
  }
  std::cout << "done" << std::endl;
  return 0;
}
