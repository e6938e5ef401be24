#include "cli/event_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace opmap::cli {
namespace {

using analysis::ApiCall;
using analysis::GpuEvent;
using analysis::Range;

constexpr uint8_t kRange = 0, kCall = 1, kGpu = 2;
constexpr size_t kMaxRecord = 1 + 8 + std::max({sizeof(GpuEvent), sizeof(ApiCall), sizeof(Range)});

size_t PayloadSize(uint8_t kind) {
  return kind == kGpu ? sizeof(GpuEvent) : kind == kCall ? sizeof(ApiCall) : sizeof(Range);
}

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// One record decoded: the key and the event (one of the three, by kind).
struct Decoded {
  int64_t start_ns = 0;
  uint64_t seq = 0;
  uint8_t kind = 0;
  GpuEvent gpu;
  ApiCall call;
  Range range;
};
}  // namespace

// A spilled run read a block at a time.
class EventSpill::RunCursor {
 public:
  RunCursor(int fd, Run run) : fd_(fd), next_(run.offset), end_(run.offset + run.bytes) {}

  // The next record into *out; false at the end of the run or on error (status()).
  bool Next(Decoded* out) {
    if (pos_ + kMaxRecord > buf_.size() && next_ < end_ && !Refill()) return false;
    if (pos_ >= buf_.size()) return false;
    const uint8_t kind = static_cast<uint8_t>(buf_[pos_]);
    const size_t size = 1 + 8 + PayloadSize(kind);
    if (pos_ + size > buf_.size()) {
      status_ = absl::DataLossError("a spilled run ends inside a record");
      return false;
    }
    out->kind = kind;
    std::memcpy(&out->seq, buf_.data() + pos_ + 1, 8);
    const char* payload = buf_.data() + pos_ + 9;
    if (kind == kGpu) {
      std::memcpy(&out->gpu, payload, sizeof(GpuEvent));
      out->start_ns = out->gpu.start_ns;
    } else if (kind == kCall) {
      std::memcpy(&out->call, payload, sizeof(ApiCall));
      out->start_ns = out->call.start_ns;
    } else {
      std::memcpy(&out->range, payload, sizeof(Range));
      out->start_ns = out->range.start_ns;
    }
    pos_ += size;
    return true;
  }
  const absl::Status& status() const { return status_; }

 private:
  bool Refill() {
    buf_.erase(0, pos_);
    pos_ = 0;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kBlockBytes, end_ - next_));
    const size_t had = buf_.size();
    buf_.resize(had + want);
    size_t got = 0;
    while (got < want) {
      ssize_t n = pread(fd_, buf_.data() + had + got, want - got, static_cast<off_t>(next_ + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        status_ = n < 0 ? Errno("reading the spill file") : absl::DataLossError("the spill file is short");
        return false;
      }
      got += static_cast<size_t>(n);
    }
    next_ += want;
    return true;
  }

  int fd_;
  uint64_t next_;
  uint64_t end_;
  std::string buf_;
  size_t pos_ = 0;
  absl::Status status_;
};

EventSpill::EventSpill(size_t buffer_bytes) : buffer_bytes_(buffer_bytes) {
  // Room for a full buffer of any one kind, so that filling it copies nothing; pages are
  // touched (and counted) only as events arrive.
  gpu_.reserve(buffer_bytes / (sizeof(GpuEvent) + sizeof(Key)) + 1);
  calls_.reserve(buffer_bytes / (sizeof(ApiCall) + sizeof(Key)) + 1);
  ranges_.reserve(buffer_bytes / (sizeof(Range) + sizeof(Key)) + 1);
  keys_.reserve(buffer_bytes / (sizeof(ApiCall) + sizeof(Key)) + 1);
}

EventSpill::~EventSpill() {
  if (fd_ >= 0) close(fd_);
}

void EventSpill::OnGpuEvent(const GpuEvent& event) {
  if (!error_.ok()) return;  // Drain reports it; holding more would only grow
  keys_.push_back({event.start_ns, seq_++, kGpu, static_cast<uint32_t>(gpu_.size())});
  gpu_.push_back(event);
  held_bytes_ += sizeof(GpuEvent) + sizeof(Key);
  AfterAdd();
}
void EventSpill::OnApiCall(const ApiCall& call) {
  if (!error_.ok()) return;
  keys_.push_back({call.start_ns, seq_++, kCall, static_cast<uint32_t>(calls_.size())});
  calls_.push_back(call);
  held_bytes_ += sizeof(ApiCall) + sizeof(Key);
  AfterAdd();
}
void EventSpill::OnRange(const Range& range) {
  if (!error_.ok()) return;
  keys_.push_back({range.start_ns, seq_++, kRange, static_cast<uint32_t>(ranges_.size())});
  ranges_.push_back(range);
  held_bytes_ += sizeof(Range) + sizeof(Key);
  AfterAdd();
}

void EventSpill::AfterAdd() {
  if (held_bytes_ >= buffer_bytes_ && error_.ok()) error_ = Spill();
}

void EventSpill::SortKeys() {
  std::sort(keys_.begin(), keys_.end(), [](const Key& a, const Key& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.seq < b.seq;
  });
}

absl::Status EventSpill::OpenFile() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  fd_ = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ >= 0) return absl::OkStatus();
  std::string path = dir + "/opmap-spill-XXXXXX";
  fd_ = mkostemp(path.data(), O_CLOEXEC);
  if (fd_ < 0) return Errno(absl::StrCat("creating a temporary file in ", dir));
  unlink(path.c_str());
  return absl::OkStatus();
}

absl::Status EventSpill::Spill() {
  if (fd_ < 0) {
    absl::Status opened = OpenFile();
    if (!opened.ok()) return opened;
  }
  SortKeys();
  std::string out;
  out.reserve(size_t{4} << 20);
  Run run{file_size_, 0};
  auto flush = [&]() -> absl::Status {
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = pwrite(fd_, out.data() + done, out.size() - done,
                         static_cast<off_t>(file_size_ + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno("writing the spill file");
      done += static_cast<size_t>(n);
    }
    file_size_ += out.size();
    run.bytes += out.size();
    out.clear();
    return absl::OkStatus();
  };
  for (const Key& k : keys_) {
    out.push_back(static_cast<char>(k.kind));
    out.append(reinterpret_cast<const char*>(&k.seq), 8);
    if (k.kind == kGpu) {
      out.append(reinterpret_cast<const char*>(&gpu_[k.index]), sizeof(GpuEvent));
    } else if (k.kind == kCall) {
      out.append(reinterpret_cast<const char*>(&calls_[k.index]), sizeof(ApiCall));
    } else {
      out.append(reinterpret_cast<const char*>(&ranges_[k.index]), sizeof(Range));
    }
    if (out.size() >= (size_t{4} << 20)) {
      absl::Status st = flush();
      if (!st.ok()) return st;
    }
  }
  absl::Status st = flush();
  if (!st.ok()) return st;
  runs_.push_back(run);
  keys_.clear();
  gpu_.clear();
  calls_.clear();
  ranges_.clear();
  held_bytes_ = 0;
  return absl::OkStatus();
}

absl::Status EventSpill::Drain(analysis::StreamingParts& parts) {
  if (!error_.ok()) return error_;
  SortKeys();
  if (runs_.empty()) {  // everything fit the buffer: no merge
    for (const Key& k : keys_) {
      if (k.kind == kGpu) parts.Add(gpu_[k.index]);
      if (k.kind == kCall) parts.Add(calls_[k.index]);
      if (k.kind == kRange) parts.Add(ranges_[k.index]);
    }
    parts.Finish();
    return absl::OkStatus();
  }
  // Sources: the spilled runs, then the buffer still in memory (index runs_.size()).
  std::vector<RunCursor> cursors;
  cursors.reserve(runs_.size());
  for (const Run& run : runs_) cursors.emplace_back(fd_, run);
  const size_t memory = runs_.size();
  size_t next_key = 0;
  std::vector<Decoded> heads(runs_.size() + 1);
  auto advance = [&](size_t source) -> bool {
    if (source < memory) return cursors[source].Next(&heads[source]);
    if (next_key >= keys_.size()) return false;
    const Key& k = keys_[next_key++];
    Decoded& d = heads[source];
    d.start_ns = k.start_ns;
    d.seq = k.seq;
    d.kind = k.kind;
    if (k.kind == kGpu) d.gpu = gpu_[k.index];
    if (k.kind == kCall) d.call = calls_[k.index];
    if (k.kind == kRange) d.range = ranges_[k.index];
    return true;
  };
  auto later = [&](size_t a, size_t b) {
    const Decoded& x = heads[a];
    const Decoded& y = heads[b];
    return x.start_ns != y.start_ns ? x.start_ns > y.start_ns : x.seq > y.seq;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t source = 0; source <= memory; ++source) {
    if (advance(source)) heap.push(source);
  }
  while (!heap.empty()) {
    const size_t source = heap.top();
    heap.pop();
    const Decoded& d = heads[source];
    if (d.kind == kGpu) parts.Add(d.gpu);
    if (d.kind == kCall) parts.Add(d.call);
    if (d.kind == kRange) parts.Add(d.range);
    if (advance(source)) heap.push(source);
  }
  for (const RunCursor& c : cursors) {
    if (!c.status().ok()) return c.status();
  }
  parts.Finish();
  return absl::OkStatus();
}

}  // namespace opmap::cli
