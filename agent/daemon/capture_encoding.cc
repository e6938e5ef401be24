#include "agent/daemon/capture_encoding.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>

#include "absl/strings/str_cat.h"
#include "agent/transport/capture_file.h"

namespace opmap::agent {

absl::StatusOr<std::string> EncodeCapture(pid_t pid, uint64_t ring_capacity,
                                          const std::string& metadata,
                                          const RecordBuffer& records,
                                          const transport::RingCounters& counters) {
  // The writer writes to a descriptor; an anonymous memfd keeps this off the disk.
  const int fd = memfd_create("opmap-attach", MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("memfd_create: ", std::strerror(errno)));
  const int write_fd = dup(fd);
  if (write_fd < 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("dup: ", std::strerror(errno)));
  }
  absl::StatusOr<transport::CaptureFileWriter> w = transport::CaptureFileWriter::CreateOnFd(
      write_fd, static_cast<uint32_t>(pid), ring_capacity, metadata);
  absl::Status s = w.status();
  for (size_t i = 0; s.ok() && i < records.size(); ++i) {
    const std::string_view r = records[i];
    s = w->Append(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r.data()), r.size()));
  }
  if (s.ok()) {
    capfile::TrailerRecord t{};
    t.closed_ns = absl::ToUnixNanos(absl::Now());
    t.records_committed = counters.records_committed;
    t.names_truncated = counters.names_truncated;
    for (int c = 0; c < static_cast<int>(ring::kDropCauseCount); ++c) {
      t.drops[c] = counters.drops[c];
    }
    s = w->Finish(t);
  }
  std::string out;
  if (s.ok()) {
    const off_t size = lseek(fd, 0, SEEK_END);
    out.resize(static_cast<size_t>(size));
    if (size < 0 || pread(fd, out.data(), out.size(), 0) != size) {
      s = absl::InternalError(absl::StrCat("reading back the capture: ", std::strerror(errno)));
    }
  }
  close(fd);
  if (!s.ok()) return s;
  return out;
}

}  // namespace opmap::agent
