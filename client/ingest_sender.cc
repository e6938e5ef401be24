#include "client/ingest_sender.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "opmap/v1/ingest.grpc.pb.h"

namespace opmap::client {
namespace {

using opmap::v1::Ack;
using opmap::v1::Batch;
using opmap::v1::Rejection;

// (agent_id, session_id) as one hash key; '\0' cannot occur in either (proto strings
// may hold it, but then the collector rejects the batch and nothing waits on the key).
std::string SessionKey(const std::string& agent, const std::string& session) {
  std::string key;
  key.reserve(agent.size() + 1 + session.size());
  key.append(agent).push_back('\0');
  key.append(session);
  return key;
}

struct Pending {
  Batch batch;
  std::string key;
  uint64_t seq = 0;
  bool written = false;  // written on some stream before (a rewrite is a resend)
};

}  // namespace

bool IsMessageTooLarge(const grpc::Status& status) {
  // gRPC's own refusal of a message over the receiver's limit ("Received message larger
  // than max (N vs. M)"): the same batch would be refused again on every retry.
  return status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         status.error_message().find("larger than max") != std::string::npos;
}

namespace {

// What the reader thread shares with the writer.
struct AckState {
  std::mutex mu;
  std::condition_variable cv;
  absl::flat_hash_map<std::string, uint64_t> durable;  // session key → durable_seq
  std::vector<std::pair<std::string, Rejection>> new_rejections;  // key, rejection
  int64_t acks = 0;          // Acks read, all streams
  bool stream_done = false;  // the current stream's Read returned false
};

bool IsFatal(const grpc::Status& status) {
  const grpc::StatusCode code = status.error_code();
  return code == grpc::StatusCode::UNAUTHENTICATED ||
         code == grpc::StatusCode::PERMISSION_DENIED ||
         code == grpc::StatusCode::INVALID_ARGUMENT ||
         code == grpc::StatusCode::UNIMPLEMENTED || IsMessageTooLarge(status);
}

// One Run(): the state of a run as members and its steps as methods. Absorb takes the
// acks the reader thread collected and prunes what they settle; Fill pulls the next
// batch while the window has room; Stream writes everything unsettled on one stream and
// keeps absorbing and filling until it breaks or all is settled; Run reconnects with
// backoff between streams and decides when to give up.
class IngestStream {
 public:
  IngestStream(CollectorChannel* channel, const SenderOptions& options,
               const std::function<bool(Batch*)>& next)
      : channel_(channel), options_(options), next_(next), rng_(std::random_device{}()),
        backoff_(options.initial_backoff), last_settle_(absl::Now()) {}

  SenderResult Run();

 private:
  // How one stream ended.
  struct StreamEnd {
    grpc::Status status;
    bool progressed = false;  // an ack arrived on it
  };

  void Report(bool force);
  void Log(const std::string& line) {
    if (options_.log) options_.log(line);
  }
  bool AllSettled() const { return progress().source_done && queue_.empty(); }
  SenderProgress& progress() { return result_.progress; }
  const SenderProgress& progress() const { return result_.progress; }

  // Under shared_.mu: drops settled batches from the front (kept in settled_now_ for
  // on_settled, called outside the lock); returns how many.
  size_t PruneLocked();
  bool IsSettledLocked(const Pending& p) const {
    auto it = shared_.durable.find(p.key);
    return it != shared_.durable.end() && it->second >= p.seq;
  }
  // Takes acks in: prunes, reports rejections and settled batches. Moves *pos (the next
  // batch to write) back by the entries popped and past the ones already settled.
  void Absorb(size_t* pos, bool* stream_done);
  // Pulls one batch from the source into the queue; false when the source is done.
  bool Fill();
  // One stream to `endpoint`: (re)writes everything unsettled, then new batches.
  StreamEnd Stream(size_t endpoint);

  CollectorChannel* channel_;
  const SenderOptions& options_;
  const std::function<bool(Batch*)>& next_;
  SenderResult result_;
  AckState shared_;
  std::deque<Pending> queue_;  // pulled, not yet settled, in send order
  std::set<std::pair<std::string, uint64_t>> rejected_seen_;
  std::vector<std::pair<std::string, uint64_t>> settled_now_;
  std::mt19937_64 rng_;
  absl::Duration backoff_;
  absl::Time last_settle_;
  absl::Time last_report_ = absl::InfinitePast();
  int64_t absorbed_acks_ = 0;  // acks already absorbed: the writer sleeps until a newer one
};

void IngestStream::Report(bool force) {
  if (!options_.progress) return;
  absl::Time now = absl::Now();
  if (!force && now - last_report_ < options_.progress_interval) return;
  last_report_ = now;
  options_.progress(progress());
}

size_t IngestStream::PruneLocked() {
  size_t popped = 0;
  while (!queue_.empty() && IsSettledLocked(queue_.front())) {
    if (options_.on_settled) settled_now_.emplace_back(queue_.front().key, queue_.front().seq);
    queue_.pop_front();
    ++popped;
  }
  return popped;
}

void IngestStream::Absorb(size_t* pos, bool* stream_done) {
  std::vector<std::pair<std::string, Rejection>> rejections;
  size_t popped;
  {
    std::lock_guard<std::mutex> lock(shared_.mu);
    rejections.swap(shared_.new_rejections);
    popped = PruneLocked();
    *pos -= std::min(*pos, popped);
    while (*pos < queue_.size() && IsSettledLocked(queue_[*pos])) ++*pos;
    *stream_done = shared_.stream_done;
    absorbed_acks_ = shared_.acks;
  }
  for (auto& [key, seq] : settled_now_) {
    size_t nul = key.find('\0');
    options_.on_settled(key.substr(0, nul), key.substr(nul + 1), seq);
  }
  settled_now_.clear();
  for (auto& [key, rej] : rejections) {
    if (!rejected_seen_.insert({key, rej.seq()}).second) continue;
    ++progress().rejected;
    if (options_.on_rejection) {
      size_t nul = key.find('\0');
      options_.on_rejection(key.substr(0, nul), key.substr(nul + 1), rej);
    }
  }
  if (popped > 0) {
    progress().settled += static_cast<int64_t>(popped);
    last_settle_ = absl::Now();
    backoff_ = options_.initial_backoff;
    Report(false);
  }
}

bool IngestStream::Fill() {
  Pending p;
  if (!next_(&p.batch)) {
    progress().source_done = true;
    return false;
  }
  p.key = SessionKey(p.batch.agent_id(), p.batch.session_id());
  p.seq = p.batch.seq();
  queue_.push_back(std::move(p));
  ++progress().pulled;
  return true;
}

IngestStream::StreamEnd IngestStream::Stream(size_t endpoint) {
  std::shared_ptr<grpc::Channel> channel = channel_->NewChannel(endpoint);
  std::unique_ptr<opmap::v1::Ingest::Stub> stub = opmap::v1::Ingest::NewStub(channel);
  grpc::ClientContext context;
  channel_->PrepareContext(&context, absl::InfiniteDuration());
  std::unique_ptr<grpc::ClientReaderWriter<Batch, Ack>> stream = stub->Ingest(&context);
  int64_t acks_at_start;
  {
    std::lock_guard<std::mutex> lock(shared_.mu);
    shared_.stream_done = false;
    acks_at_start = shared_.acks;
  }
  std::thread reader([shared = &shared_, s = stream.get()] {
    Ack ack;
    while (s->Read(&ack)) {
      std::lock_guard<std::mutex> lock(shared->mu);
      uint64_t& d = shared->durable[SessionKey(ack.agent_id(), ack.session_id())];
      d = std::max<uint64_t>(d, ack.durable_seq());
      for (const Rejection& r : ack.rejected()) {
        shared->new_rejections.emplace_back(SessionKey(ack.agent_id(), ack.session_id()), r);
      }
      ++shared->acks;
      shared->cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->stream_done = true;
    shared->cv.notify_all();
  });

  // Everything unsettled is (re)written from the front of the queue.
  size_t pos = 0;
  bool stream_done = false;
  bool write_failed = false;
  for (;;) {
    Absorb(&pos, &stream_done);
    if (stream_done || AllSettled()) break;
    if (pos < queue_.size()) {
      Pending& p = queue_[pos];
      if (p.written) ++progress().resent;
      p.written = true;
      if (!stream->Write(p.batch)) {
        write_failed = true;
        break;
      }
      ++pos;
      continue;
    }
    if (!progress().source_done && queue_.size() < options_.window) {
      Fill();
      continue;
    }
    // Window full or everything written: wait for an ack or the end of the stream.
    std::unique_lock<std::mutex> lock(shared_.mu);
    shared_.cv.wait(lock, [&] { return shared_.acks != absorbed_acks_ || shared_.stream_done; });
  }

  // Cancelling replaces whatever status the collector sent with CANCELLED, so the call
  // is cancelled only when the collector has not ended it within 5 s: after the last
  // batch (half-closed) or after a failed write (the call ended under it: a refused
  // token, a store failure; the status is on its way, and a fatal one must end the run).
  auto wait_for_end_or_cancel = [&] {
    std::unique_lock<std::mutex> lock(shared_.mu);
    if (!shared_.cv.wait_for(lock, std::chrono::seconds(5), [&] { return shared_.stream_done; })) {
      context.TryCancel();
    }
  };
  if (AllSettled()) {
    stream->WritesDone();
    wait_for_end_or_cancel();
  } else if (write_failed) {
    wait_for_end_or_cancel();
  } else if (!stream_done) {
    context.TryCancel();
  }
  reader.join();
  StreamEnd end;
  end.status = stream->Finish();
  Absorb(&pos, &stream_done);
  std::lock_guard<std::mutex> lock(shared_.mu);
  end.progressed = shared_.acks != acks_at_start;
  return end;
}

SenderResult IngestStream::Run() {
  size_t endpoint = 0;
  for (bool first = true;; first = false) {
    if (!first) ++progress().reconnects;
    StreamEnd end = Stream(endpoint);
    if (AllSettled()) {
      Report(true);
      result_.status = grpc::Status::OK;
      return result_;
    }
    grpc::Status status = end.status;
    if (IsFatal(status)) {
      Report(true);
      result_.status = status;
      return result_;
    }
    if (status.ok()) {
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "the collector ended the stream with batches unacknowledged");
    }
    absl::Duration stalled = absl::Now() - last_settle_;
    if (stalled >= options_.retry_for) {
      Report(true);
      result_.status = grpc::Status(
          status.error_code(),
          absl::StrCat("gave up after ", absl::FormatDuration(stalled),
                       " without progress; last error from ", channel_->endpoint(endpoint),
                       ": ", StatusLine(status)));
      return result_;
    }
    // A stream that never got an ack moves on to the next address.
    if (!end.progressed) endpoint = (endpoint + 1) % channel_->endpoint_count();
    // Full jitter over the upper half: [backoff/2, backoff].
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    absl::Duration sleep = std::min(backoff_ * jitter(rng_), options_.retry_for - stalled);
    if (options_.on_stream_broken) options_.on_stream_broken();
    Log(absl::StrFormat("stream ended (%s); %d of %d batches settled; reconnecting to %s in %s",
                        StatusLine(status), progress().settled, progress().pulled,
                        channel_->endpoint(endpoint),
                        absl::FormatDuration(absl::Trunc(sleep, absl::Milliseconds(1)))));
    Report(true);
    absl::SleepFor(sleep);
    backoff_ = std::min(backoff_ * 2, options_.max_backoff);
  }
}

}  // namespace

SenderResult IngestSender::Run(const std::function<bool(Batch*)>& next) {
  IngestStream stream(client_, options_, next);
  return stream.Run();
}

}  // namespace opmap::client
