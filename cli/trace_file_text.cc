#include "cli/trace_file_text.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/import/gzip_pipeline.h"

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
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

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

// A gzip file: its mapping, and the inflater reading it.
class GzipFileText : public TraceFileText {
 public:
  GzipFileText(void* base, size_t size)
      : mapping_(base, size), reader_(mapping_.view(), [this](size_t n) { mapping_.Consumed(n); }) {}
  analysis::KinetoTextSource& text() override { return reader_; }

 private:
  Mapping mapping_;
  analysis::PipelinedGzipReader reader_;  // after mapping_: stops before it is unmapped
};

class PlainFileText : public TraceFileText {
 public:
  PlainFileText(int fd, size_t size) : fd_(fd), text_(fd, size) {}
  analysis::KinetoTextSource& text() override { return text_; }

 private:
  Fd fd_;
  FileText text_;
};

}  // namespace

bool IsKinetoTraceFile(const std::string& path) {
  const int raw = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) return false;
  Fd fd(raw);
  unsigned char head[256];
  const ssize_t n = pread(fd.get(), head, sizeof(head), 0);
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return true;
  for (ssize_t i = 0; i < n; ++i) {
    const unsigned char c = head[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

absl::StatusOr<std::unique_ptr<TraceFileText>> TraceFileText::Open(const std::string& path) {
  const int raw = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) return FileError("cannot open");
  Fd fd(raw);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return FileError("cannot stat");
  const size_t size = static_cast<size_t>(st.st_size);
  unsigned char head[2] = {0, 0};
  if (size >= 2 && pread(fd.get(), head, 2, 0) == 2 && head[0] == 0x1f && head[1] == 0x8b) {
    void* base = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (base == MAP_FAILED) return FileError("cannot map");
    madvise(base, size, MADV_SEQUENTIAL);
    return std::unique_ptr<TraceFileText>(new GzipFileText(base, size));
  }
  return std::unique_ptr<TraceFileText>(new PlainFileText(fd.Release(), size));
}

}  // namespace opmap::cli
