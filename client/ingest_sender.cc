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

// What the reader thread shares with the writer.
struct AckState {
  std::mutex mu;
  std::condition_variable cv;
  absl::flat_hash_map<std::string, uint64_t> durable;  // session key → durable_seq
  std::vector<std::pair<std::string, Rejection>> new_rejections;  // key, rejection
  int64_t acks = 0;          // Acks read, all streams
  bool stream_done = false;  // the current stream's Read returned false
};

bool IsFatal(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAUTHENTICATED ||
         code == grpc::StatusCode::PERMISSION_DENIED ||
         code == grpc::StatusCode::INVALID_ARGUMENT ||
         code == grpc::StatusCode::UNIMPLEMENTED;
}

}  // namespace

SenderResult IngestSender::Run(const std::function<bool(Batch*)>& next) {
  SenderResult result;
  SenderProgress& prog = result.progress;
  AckState shared;
  std::deque<Pending> queue;  // pulled, not yet settled, in send order
  std::set<std::pair<std::string, uint64_t>> rejected_seen;
  std::mt19937_64 rng(std::random_device{}());

  absl::Duration backoff = options_.initial_backoff;
  absl::Time last_settle = absl::Now();
  absl::Time last_report = absl::InfinitePast();
  size_t endpoint = 0;
  bool first_stream = true;

  auto report = [&](bool force) {
    if (!options_.progress) return;
    absl::Time now = absl::Now();
    if (!force && now - last_report < options_.progress_interval) return;
    last_report = now;
    options_.progress(prog);
  };
  auto log = [&](const std::string& line) {
    if (options_.log) options_.log(line);
  };

  // Under shared.mu: drops settled batches from the front (kept in `settled_now` for
  // on_settled, called outside the lock); returns how many.
  std::vector<std::pair<std::string, uint64_t>> settled_now;
  auto prune_locked = [&]() {
    size_t popped = 0;
    while (!queue.empty()) {
      auto it = shared.durable.find(queue.front().key);
      if (it == shared.durable.end() || it->second < queue.front().seq) break;
      if (options_.on_settled) settled_now.emplace_back(queue.front().key, queue.front().seq);
      queue.pop_front();
      ++popped;
    }
    return popped;
  };
  auto is_settled_locked = [&](const Pending& p) {
    auto it = shared.durable.find(p.key);
    return it != shared.durable.end() && it->second >= p.seq;
  };
  // Acks already taken in by absorb(); the writer sleeps only while no newer one came.
  int64_t absorbed_acks = 0;
  // Takes acks in: prunes, reports rejections. Adjusts *pos for popped entries.
  auto absorb = [&](size_t* pos, bool* stream_done) {
    std::vector<std::pair<std::string, Rejection>> rejections;
    size_t popped;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      rejections.swap(shared.new_rejections);
      popped = prune_locked();
      *pos -= std::min(*pos, popped);
      while (*pos < queue.size() && is_settled_locked(queue[*pos])) ++*pos;
      *stream_done = shared.stream_done;
      absorbed_acks = shared.acks;
    }
    for (auto& [key, seq] : settled_now) {
      size_t nul = key.find('\0');
      options_.on_settled(key.substr(0, nul), key.substr(nul + 1), seq);
    }
    settled_now.clear();
    for (auto& [key, rej] : rejections) {
      if (!rejected_seen.insert({key, rej.seq()}).second) continue;
      ++prog.rejected;
      if (options_.on_rejection) {
        size_t nul = key.find('\0');
        options_.on_rejection(key.substr(0, nul), key.substr(nul + 1), rej);
      }
    }
    if (popped > 0) {
      prog.settled += static_cast<int64_t>(popped);
      last_settle = absl::Now();
      backoff = options_.initial_backoff;
      report(false);
    }
  };

  for (;;) {
    if (!first_stream) ++prog.reconnects;
    first_stream = false;
    std::shared_ptr<grpc::Channel> channel = client_->NewChannel(endpoint);
    std::unique_ptr<opmap::v1::Ingest::Stub> stub = opmap::v1::Ingest::NewStub(channel);
    grpc::ClientContext context;
    client_->PrepareContext(&context, absl::InfiniteDuration());
    std::unique_ptr<grpc::ClientReaderWriter<Batch, Ack>> stream = stub->Ingest(&context);
    int64_t acks_at_start;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      shared.stream_done = false;
      acks_at_start = shared.acks;
    }
    std::thread reader([&shared, s = stream.get()] {
      Ack ack;
      while (s->Read(&ack)) {
        std::lock_guard<std::mutex> lock(shared.mu);
        uint64_t& d = shared.durable[SessionKey(ack.agent_id(), ack.session_id())];
        d = std::max<uint64_t>(d, ack.durable_seq());
        for (const Rejection& r : ack.rejected()) {
          shared.new_rejections.emplace_back(SessionKey(ack.agent_id(), ack.session_id()), r);
        }
        ++shared.acks;
        shared.cv.notify_all();
      }
      std::lock_guard<std::mutex> lock(shared.mu);
      shared.stream_done = true;
      shared.cv.notify_all();
    });

    // Everything unsettled is (re)written from the front of the queue.
    size_t pos = 0;
    bool stream_done = false;
    bool write_failed = false;
    for (;;) {
      absorb(&pos, &stream_done);
      if (stream_done) break;
      if (prog.source_done && queue.empty()) break;
      if (pos < queue.size()) {
        Pending& p = queue[pos];
        if (p.written) ++prog.resent;
        p.written = true;
        if (!stream->Write(p.batch)) {
          write_failed = true;
          break;
        }
        ++pos;
        continue;
      }
      if (!prog.source_done && queue.size() < options_.window) {
        Pending p;
        if (!next(&p.batch)) {
          prog.source_done = true;
          continue;
        }
        p.key = SessionKey(p.batch.agent_id(), p.batch.session_id());
        p.seq = p.batch.seq();
        queue.push_back(std::move(p));
        ++prog.pulled;
        continue;
      }
      // Window full or everything written: wait for an ack or the end of the stream.
      std::unique_lock<std::mutex> lock(shared.mu);
      shared.cv.wait(lock, [&] { return shared.acks != absorbed_acks || shared.stream_done; });
    }

    const bool all_settled = prog.source_done && queue.empty();
    if (all_settled) {
      // Half-close and give the collector a moment to end the call cleanly.
      stream->WritesDone();
      std::unique_lock<std::mutex> lock(shared.mu);
      if (!shared.cv.wait_for(lock, std::chrono::seconds(5),
                              [&] { return shared.stream_done; })) {
        context.TryCancel();
      }
    } else if (write_failed || !stream_done) {
      context.TryCancel();
    }
    reader.join();
    grpc::Status status = stream->Finish();
    absorb(&pos, &stream_done);
    if (prog.source_done && queue.empty()) {
      report(true);
      result.status = grpc::Status::OK;
      return result;
    }

    if (IsFatal(status.error_code())) {
      report(true);
      result.status = status;
      return result;
    }
    if (status.ok()) {
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                           "the collector ended the stream with batches unacknowledged");
    }
    bool progressed;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      progressed = shared.acks != acks_at_start;
    }
    absl::Duration stalled = absl::Now() - last_settle;
    if (stalled >= options_.retry_for) {
      report(true);
      result.status = grpc::Status(
          status.error_code() == grpc::StatusCode::OK ? grpc::StatusCode::UNAVAILABLE
                                                      : status.error_code(),
          absl::StrCat("gave up after ", absl::FormatDuration(stalled),
                       " without progress; last error from ", client_->endpoint(endpoint),
                       ": ", StatusLine(status)));
      return result;
    }
    // A stream that never got an ack moves on to the next address.
    if (!progressed) endpoint = (endpoint + 1) % client_->endpoint_count();
    // Full jitter over the upper half: [backoff/2, backoff].
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    absl::Duration sleep = std::min(backoff * jitter(rng), options_.retry_for - stalled);
    if (options_.on_stream_broken) options_.on_stream_broken();
    log(absl::StrFormat("stream ended (%s); %d of %d batches settled; reconnecting to %s in %s",
                        StatusLine(status), prog.settled, prog.pulled,
                        client_->endpoint(endpoint),
                        absl::FormatDuration(absl::Trunc(sleep, absl::Milliseconds(1)))));
    report(true);
    absl::SleepFor(sleep);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace opmap::client
