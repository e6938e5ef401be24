#include "agent/transport/capture_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/base/wall_clock.h"

namespace opmap::transport {

absl::StatusOr<analysis::CaptureFile> ReadCaptureFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("capture file ", path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  auto f = analysis::ParseCaptureFile(ss.str());
  if (!f.ok()) return absl::Status(f.status().code(), absl::StrCat(path, ": ", f.status().message()));
  return f;
}

absl::StatusOr<CaptureFileWriter> CaptureFileWriter::Create(const std::string& path,
                                                            uint32_t pid,
                                                            uint64_t ring_capacity,
                                                            std::string_view metadata) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("capture file ", path, ": ", std::strerror(errno)));
  }
  return CreateOnFd(fd, pid, ring_capacity, metadata);
}

absl::StatusOr<CaptureFileWriter> CaptureFileWriter::CreateOnFd(int fd, uint32_t pid,
                                                                uint64_t ring_capacity,
                                                                std::string_view metadata) {
  CaptureFileWriter w(fd);
  capfile::FileHeader h{};
  std::memcpy(h.magic, capfile::kMagic, sizeof(h.magic));
  h.version = capfile::kVersion;
  h.header_bytes = sizeof(h);
  h.pid = pid;
  h.ring_version = ring::kVersion;
  h.created_ns = base::RealtimeNs();
  h.ring_capacity = ring_capacity;
  if (auto s = w.Write(&h, sizeof(h)); !s.ok()) return s;
  capfile::MetadataRecord m{};
  const uint32_t size = ring::AlignRecord(static_cast<uint32_t>(sizeof(m) + metadata.size()));
  m.h.size_and_commit = size | ring::kCommitBit;
  m.h.type = capfile::kFileMetadata;
  m.text_len = static_cast<uint32_t>(metadata.size());
  std::string rec(size, '\0');
  std::memcpy(rec.data(), &m, sizeof(m));
  std::memcpy(rec.data() + sizeof(m), metadata.data(), metadata.size());
  if (auto s = w.Write(rec.data(), rec.size()); !s.ok()) return s;
  return w;
}

CaptureFileWriter::CaptureFileWriter(CaptureFileWriter&& o) noexcept
    : fd_(o.fd_), records_(o.records_) {
  o.fd_ = -1;
}

CaptureFileWriter::~CaptureFileWriter() {
  if (fd_ >= 0) close(fd_);
}

absl::Status CaptureFileWriter::Write(const void* bytes, size_t n) {
  const auto* p = static_cast<const char*>(bytes);
  while (n > 0) {
    const ssize_t w = write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return absl::DataLossError(absl::StrCat("capture file: write: ", std::strerror(errno)));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status CaptureFileWriter::Append(std::span<const uint8_t> record) {
  if (record.size() < sizeof(ring::RecordHeader) || record.size() % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("record of ", record.size(), " bytes"));
  }
  ++records_;
  return Write(record.data(), record.size());
}

absl::Status CaptureFileWriter::Finish(capfile::TrailerRecord trailer) {
  trailer.h.size_and_commit = static_cast<uint32_t>(sizeof(trailer)) | ring::kCommitBit;
  trailer.h.type = capfile::kFileTrailer;
  trailer.h.flags = 0;
  trailer.records_written = records_;
  absl::Status s = Write(&trailer, sizeof(trailer));
  if (close(fd_) != 0 && s.ok()) s = absl::DataLossError("capture file: close failed");
  fd_ = -1;
  return s;
}

}  // namespace opmap::transport
