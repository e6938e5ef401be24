#include "cli/import_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/import/event_consumer.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"
#include "cli/import_command.h"
#include "cli/nsys_file.h"
#include "cli/trace_file_text.h"
#include "common/crypto/sha256.h"

namespace opmap::cli {
namespace {

// Counts what the first pass parses, and keeps nothing.
class Counter : public analysis::EventConsumer {
 public:
  void OnGpuEvent(const analysis::GpuEvent&) override {
    ++gpu_events;
    ++records;
  }
  void OnApiCall(const analysis::ApiCall&) override { ++records; }
  void OnRange(const analysis::Range&) override { ++records; }
  int64_t gpu_events = 0;
  int64_t records = 0;
};

}  // namespace

bool StreamableImport(const std::string& path) { return IsKinetoTraceFile(path) || IsStreamableNsysFile(path); }

absl::StatusOr<analysis::Trace> StreamEvents(const std::string& path,
                                             analysis::EventConsumer& consumer) {
  if (IsNsysFile(path)) {
    absl::StatusOr<NsysDb> db = OpenNsysFile(path);
    if (!db.ok()) return db.status();
    return analysis::StreamNsysEvents(db->get(), consumer);
  }
  absl::StatusOr<std::unique_ptr<TraceFileText>> file = TraceFileText::Open(path);
  if (!file.ok()) return file.status();
  return analysis::ImportKinetoEvents((*file)->text(), consumer);
}

absl::StatusOr<CheckedTraceFile> CheckTraceFile(const std::string& path,
                                                std::string_view options) {
  CheckedTraceFile out;
  {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::InvalidArgumentError(absl::StrCat("cannot open: ", std::strerror(errno)));
    crypto::Sha256Stream digest;
    std::unique_ptr<char[]> buf(new char[1 << 20]);
    while (true) {
      const ssize_t n = read(fd, buf.get(), 1 << 20);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int e = errno;
        close(fd);
        return absl::InvalidArgumentError(absl::StrCat("reading the trace: ", std::strerror(e)));
      }
      if (n == 0) break;
      digest.Update(std::string_view(buf.get(), static_cast<size_t>(n)));
    }
    close(fd);
    out.session_id = ImportSessionIdOf(digest, options);
  }
  Counter counter;
  absl::StatusOr<analysis::Trace> names = StreamEvents(path, counter);
  if (!names.ok()) return names.status();
  out.info = std::move(names->info);
  out.gpu_events = counter.gpu_events;
  out.records = counter.records;
  return out;
}

// The second pass's consumer: chunks of events encoded as they fill, pushed in order.
class StreamedBatches::Producer : public analysis::EventConsumer {
 public:
  Producer(StreamedBatches* out, analysis::BatchingOptions options)
      : out_(out), options_(std::move(options)) {
    // A few batches' worth per chunk: the encoder splits a chunk by its record limit.
    chunk_records_ = std::max<size_t>(options_.max_records_per_batch, 1) * 4;
  }
  void OnStart(const analysis::TraceInfo&, analysis::StringTable* strings) override {
    encoder_.emplace(options_, *strings);
  }
  void OnGpuEvent(const analysis::GpuEvent& e) override {
    chunk_.gpu_events.push_back(e);
    Filled();
  }
  void OnApiCall(const analysis::ApiCall& c) override {
    chunk_.api_calls.push_back(c);
    Filled();
  }
  void OnRange(const analysis::Range& r) override {
    chunk_.ranges.push_back(r);
    Filled();
  }
  void OnFinish() override { Encode(/*last=*/true); }
  bool Cancelled() const override { return !status_.ok() || out_->cancelled(); }
  const absl::Status& status() const { return status_; }

 private:
  void Filled() {
    if (++held_ >= chunk_records_) Encode(/*last=*/false);
  }
  void Encode(bool last) {
    if (!status_.ok() || !encoder_) return;
    absl::StatusOr<std::vector<opmap::v1::Batch>> batches = encoder_->Encode(chunk_, last);
    chunk_.gpu_events.clear();
    chunk_.api_calls.clear();
    chunk_.ranges.clear();
    held_ = 0;
    if (!batches.ok()) {
      status_ = batches.status();
      return;
    }
    for (opmap::v1::Batch& b : *batches) {
      if (!out_->Push(std::move(b))) return;
    }
  }

  StreamedBatches* out_;
  analysis::BatchingOptions options_;
  std::optional<analysis::SessionBatchEncoder> encoder_;
  analysis::Trace chunk_;  // events only; names are ids of the importer's table
  size_t held_ = 0;
  size_t chunk_records_ = 0;
  absl::Status status_;
};

StreamedBatches::StreamedBatches(std::string path, analysis::BatchingOptions options) {
  thread_ = std::thread([this, path = std::move(path), options = std::move(options)]() mutable {
    Run(std::move(path), std::move(options));
  });
}

StreamedBatches::~StreamedBatches() { (void)Finish(); }

void StreamedBatches::Run(std::string path, analysis::BatchingOptions options) {
  Producer producer(this, std::move(options));
  absl::StatusOr<analysis::Trace> names = StreamEvents(path, producer);
  absl::Status status = !producer.status().ok() ? producer.status() : names.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_ && absl::IsCancelled(status)) status = absl::OkStatus();
  status_ = status;
  done_ = true;
  ready_.notify_all();
}

bool StreamedBatches::Push(opmap::v1::Batch batch) {
  std::unique_lock<std::mutex> lock(mu_);
  room_.wait(lock, [&] { return cancelled_ || queue_.size() < kQueueBatches; });
  if (cancelled_) return false;
  queue_.push_back(std::move(batch));
  ready_.notify_one();
  return true;
}

bool StreamedBatches::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool StreamedBatches::Next(opmap::v1::Batch* out) {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait(lock, [&] { return !queue_.empty() || done_; });
  if (queue_.empty()) return false;
  if (done_ && !status_.ok()) return false;  // do not send a session the pass broke off
  *out = std::move(queue_.front());
  queue_.pop_front();
  ++handed_out_;
  room_.notify_one();
  return true;
}

absl::Status StreamedBatches::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_) cancelled_ = true;
  }
  room_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace opmap::cli
