#include "cli/analyze_stream.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/import/gzip_pipeline.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/stats/value_counts.h"
#include "analysis/summary/streaming_parts.h"
#include "analysis/summary/summary_accumulator.h"
#include "cli/event_spill.h"

namespace opmap::cli {
namespace {

absl::Status FileError(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// An open file, closed on destruction.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Plain JSON read from the file a window at a time.
class FileText : public analysis::KinetoTextSource {
 public:
  FileText(int fd, size_t size) : fd_(fd), size_(size) {}
  absl::StatusOr<size_t> Read(char* out, size_t capacity) override {
    size_t got = 0;
    while (got < capacity && !done_) {
      ssize_t n = read(fd_, out + got, capacity - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return FileError("reading the trace");
      if (n == 0) done_ = true;
      got += static_cast<size_t>(n);
    }
    return got;
  }
  bool done() const override { return done_; }
  size_t size_hint() const override { return size_; }

 private:
  int fd_;
  size_t size_;
  bool done_ = false;
};

// A read-only mapping of the whole file; pages already inflated are let go so that they do
// not count in the process's memory (the page cache keeps them for whoever reads again).
class Mapping {
 public:
  static constexpr size_t kReleaseStep = size_t{8} << 20;
  Mapping(void* base, size_t size) : base_(static_cast<char*>(base)), size_(size) {}
  ~Mapping() {
    if (base_ != nullptr) munmap(base_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::string_view view() const { return {base_, size_}; }
  // Called on the inflating thread only.
  void Consumed(size_t bytes) {
    const size_t upto = bytes / kReleaseStep * kReleaseStep;
    if (upto <= released_) return;
    madvise(base_ + released_, upto - released_, MADV_DONTNEED);
    released_ = upto;
  }

 private:
  char* base_;
  size_t size_;
  size_t released_ = 0;
};

bool StartsGzip(const unsigned char* b, size_t n) { return n >= 2 && b[0] == 0x1f && b[1] == 0x8b; }

}  // namespace

bool StreamableTrace(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  unsigned char head[256];
  ssize_t n = pread(fd.get(), head, sizeof(head), 0);
  if (n <= 0) return false;
  if (StartsGzip(head, static_cast<size_t>(n))) return true;
  for (ssize_t i = 0; i < n; ++i) {
    const unsigned char c = head[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

absl::StatusOr<analysis::TraceSummary> StreamAnalyzeFile(const std::string& path,
                                                         const StreamAnalyzeOptions& options) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return FileError("cannot open");
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return FileError("cannot stat");
  const size_t size = static_cast<size_t>(st.st_size);
  unsigned char head[2] = {0, 0};
  const bool gzip = pread(fd.get(), head, 2, 0) == 2 && StartsGzip(head, 2);

  EventSpill spill(options.spill_buffer_bytes);
  analysis::KinetoImportOptions import;
  import.progress = options.progress;
  absl::StatusOr<analysis::Trace> names;  // info and strings; the events went to `spill`
  if (gzip) {
    void* base = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (base == MAP_FAILED) return FileError("cannot map");
    Mapping mapping(base, size);
    madvise(base, size, MADV_SEQUENTIAL);
    analysis::PipelinedGzipReader reader(mapping.view(),
                                         [&mapping](size_t n) { mapping.Consumed(n); });
    names = analysis::ImportKinetoEvents(reader, spill, import);
  } else {
    FileText text(fd.get(), size);
    names = analysis::ImportKinetoEvents(text, spill, import);
  }
  if (!names.ok()) return names.status();

  stats::ValueBudget budget = stats::ValueBudget::FromBytes(options.memory_budget_bytes);
  analysis::SummaryAccumulator acc(&budget);
  analysis::StreamingParts parts(
      names->info, &names->strings, {.target_events = options.part_events},
      [&acc](const analysis::Trace& part, const analysis::PartRanges& ranges) {
        acc.Add(part, analysis::MapGpuEvents(part), &ranges);
      });
  if (absl::Status drained = spill.Drain(parts); !drained.ok()) return drained;
  analysis::TraceSummary s = acc.Finish(names->info);
  analysis::AddStallSections(*names, analysis::MapGpuEvents(*names), &s);
  analysis::StreamingFacts& f = s.streaming;
  f.streamed = true;
  f.parts = parts.stats().parts;
  f.largest_part_events = parts.stats().largest_part_events;
  f.launches_not_held = parts.stats().launches_not_held;
  f.late_events = parts.stats().late_events;
  f.spilled_bytes = spill.spilled_bytes();
  f.spill_runs = static_cast<int64_t>(spill.runs());
  f.memory_budget_bytes = options.memory_budget_bytes;
  f.sketched_rows = budget.rows_sketched();
  return s;
}

}  // namespace opmap::cli
