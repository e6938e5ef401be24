// libFuzzer target for capture files (abi/capture_file_format.h): what
// libopmap_inject.so writes with OPMAP_CAPTURE_FILE and what `opmap attach` receives,
// read by `opmap analyze`:
//   bytes -> ParseCaptureFile -> (round trip through CaptureFileWriter on a memfd:
//            the same metadata and records come back)
//   bytes -> ImportCaptureFile -> MapGpuEvents -> Summarize -> reports (fuzz_analyze.h)
// Invariants: a file that parses imports; the round trip is exact; errors say why.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "agent/transport/capture_file.h"
#include "analysis/import/capture_import.h"
#include "tests/fuzz/fuzz_analyze.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace opmap;
using fuzz::Check;
using fuzz::Fail;

int ScratchFd() {
  static const int fd = memfd_create("opmap-fuzz-capture", MFD_CLOEXEC);
  if (fd < 0) Fail("memfd_create");
  return fd;
}

// Writes `f` again with CaptureFileWriter and reads it back.
void RoundTrip(const analysis::CaptureFile& f) {
  const int fd = ScratchFd();
  if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) Fail("memfd reset");
  // The writer owns (and closes) its descriptor: give it a duplicate of the memfd.
  absl::StatusOr<transport::CaptureFileWriter> w = transport::CaptureFileWriter::CreateOnFd(
      dup(fd), f.header.pid, f.header.ring_capacity, f.metadata);
  if (!w.ok()) Fail("CaptureFileWriter::CreateOnFd", w.status().ToString());
  for (const std::string& r : f.records) {
    absl::Status s = w->Append(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(r.data()), r.size()));
    if (!s.ok()) Fail("CaptureFileWriter::Append of a parsed record", s.ToString());
  }
  capfile::TrailerRecord trailer = f.trailer.value_or(capfile::TrailerRecord{});
  if (absl::Status s = w->Finish(trailer); !s.ok()) Fail("CaptureFileWriter::Finish", s.ToString());
  const off_t end = lseek(fd, 0, SEEK_END);
  std::string bytes(static_cast<size_t>(end), '\0');
  if (pread(fd, bytes.data(), bytes.size(), 0) != end) Fail("memfd read back");

  absl::StatusOr<analysis::CaptureFile> again = analysis::ParseCaptureFile(bytes);
  if (!again.ok()) Fail("a rewritten capture file does not parse", again.status().ToString());
  Check(again->metadata == f.metadata, "round trip: metadata");
  Check(again->records == f.records, "round trip: records");
  Check(again->trailer.has_value() && !again->cut_short, "round trip: trailer");
  Check(again->trailer->records_written == f.records.size(), "round trip: records_written");
  Check(again->header.pid == f.header.pid &&
            again->header.ring_capacity == f.header.ring_capacity,
        "round trip: header");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = fuzz::AsText(data, size);
  (void)analysis::LooksLikeCaptureFile(bytes);
  absl::StatusOr<analysis::CaptureFile> file = analysis::ParseCaptureFile(bytes);
  if (file.ok()) {
    RoundTrip(*file);
  } else {
    fuzz::CheckErrorSaysWhy(file.status(), "ParseCaptureFile");
  }
  absl::StatusOr<analysis::Trace> trace = analysis::ImportCaptureFile(bytes);
  if (!trace.ok()) {
    fuzz::CheckErrorSaysWhy(trace.status(), "ImportCaptureFile");
    Check(!file.ok(), "a file that parses imports");
    return 0;
  }
  Check(file.ok(), "a file that imports parses");
  fuzz::AnalyzeTrace(*trace);
  return 0;
}
