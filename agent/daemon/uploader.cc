#include "agent/daemon/uploader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "agent/spool/outbox.h"
#include "client/collector_channel.h"
#include "client/ingest_sender.h"
#include "common/config/flag_config.h"

namespace opmap::agent {

absl::StatusOr<std::unique_ptr<Uploader>> Uploader::Create(const AgentConfig& config) {
  std::unique_ptr<Uploader> u(new Uploader());
  u->config_ = config;
  OutboxOptions options;
  options.memory_bytes = static_cast<size_t>(config.memory_queue_bytes);
  options.spool_bytes = static_cast<uint64_t>(config.spool_bytes);
  options.spool_dir = config.spool_dir;
  absl::StatusOr<std::unique_ptr<Outbox>> outbox = Outbox::Open(options);
  if (!outbox.ok()) {
    return absl::Status(outbox.status().code(),
                        absl::StrCat("--spool-dir ", config.spool_dir, ": ",
                                     outbox.status().message()));
  }
  u->outbox_ = std::move(*outbox);
  if (!config.collector.empty()) {
    u->state_ = "connecting";
    u->thread_ = std::thread([p = u.get()] { p->Loop(); });
  }
  return u;
}

Uploader::~Uploader() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (outbox_ != nullptr) (void)outbox_->Close();
}

DropReport::Counts Uploader::AttachUnreportedDrops(opmap::v1::Batch& batch) {
  const OutboxStats stats = outbox_->stats();
  DropReport::Counts totals{};
  std::copy(std::begin(stats.dropped_by_cause), std::end(stats.dropped_by_cause),
            totals.begin());
  const DropReport::Counts counts = drop_report_.Take(
      totals, [this](const OutboxKey& key) { return outbox_->Holds(key); });
  for (int c = 0; c < kDropCauseCount; ++c) {
    if (counts[c] == 0) continue;
    const auto cause = static_cast<DropCause>(c);
    opmap::v1::DropCount* d = batch.mutable_drops()->add_counts();
    d->set_stage(cause == DropCause::kQueueFull ? opmap::v1::DROP_STAGE_QUEUE
                                                : opmap::v1::DROP_STAGE_SPOOL);
    d->set_kind(opmap::v1::EVENT_KIND_BATCH);
    d->set_count(counts[c]);
    d->set_reason(absl::StrCat("agent outbox: ", DropCauseName(cause),
                               " (batches of earlier windows)"));
  }
  return counts;
}

void Uploader::Push(std::vector<opmap::v1::Batch> batches) {
  // The drop counts ride on the first batch the outbox takes; DropReport hands them to a
  // later carrier if this one is refused now or dropped later, before the collector has it.
  bool carried = false;
  for (opmap::v1::Batch& b : batches) {
    DropReport::Counts counts{};
    if (!carried) counts = AttachUnreportedDrops(b);
    OutboxKey key{b.session_id(), b.seq()};
    if (absl::Status s = outbox_->Push(key, b.SerializeAsString()); !s.ok()) {
      // Counted by the outbox (dropped_batches); the message says why.
      push_errors_.fetch_add(1);
      if (!carried) drop_report_.Untake(counts);
      std::fprintf(stderr, "opmap-agent: batch %s#%llu: %s\n", b.session_id().c_str(),
                   static_cast<unsigned long long>(b.seq()), std::string(s.message()).c_str());
      continue;
    }
    if (!carried) {
      drop_report_.Carried(std::move(key), counts);
      carried = true;
    }
  }
}

UploadStats Uploader::Stats() {
  OutboxStats s = outbox_->stats();
  UploadStats u;
  u.queued_batches = static_cast<int64_t>(s.memory_batches + s.spool_batches);
  u.memory_batches = static_cast<int64_t>(s.memory_batches);
  u.spool_bytes = static_cast<int64_t>(s.spool_bytes);
  u.sent_batches = sent_.load();
  u.acked_batches = static_cast<int64_t>(s.acked_batches);
  u.dropped_batches = static_cast<int64_t>(s.dropped_batches);
  std::copy(std::begin(s.dropped_by_cause), std::end(s.dropped_by_cause),
            u.dropped_by_cause.begin());
  std::lock_guard<std::mutex> lock(mu_);
  u.collector_state = state_;
  u.connected = state_.starts_with("connected");
  return u;
}

void Uploader::Loop() {
  client::ChannelOptions channel_options;
  absl::StatusOr<std::vector<std::string>> collectors = config::ParseAddressList(config_.collector);
  if (!collectors.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = absl::StrCat("not connecting: collector: ", collectors.status().message());
    return;
  }
  channel_options.collectors = *std::move(collectors);
  channel_options.token_file = config_.token_file;
  channel_options.tls_ca = config_.tls_ca;
  channel_options.tls_cert = config_.tls_cert;
  channel_options.tls_key = config_.tls_key;
  absl::StatusOr<std::unique_ptr<client::CollectorChannel>> channel =
      client::CollectorChannel::Create(channel_options);
  if (!channel.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = absl::StrCat("not connecting: ", channel.status().message());
    return;
  }
  client::SenderOptions options;
  // Short: Run returns soon after a failure, so the loop notices stop_ and the spool
  // takes over; the next round retries.
  options.retry_for = absl::Seconds(10);
  options.max_backoff = absl::Seconds(5);
  options.on_settled = [this](const std::string&, const std::string& session, uint64_t seq) {
    drop_report_.Settled(session, seq);  // first: see DropReport
    (void)outbox_->Ack(session, seq);
  };
  // The stream broke: what waits in memory goes to disk now, so an agent killed while
  // the collector is away loses nothing it had queued.
  options.on_stream_broken = [this] { (void)outbox_->Spill(); };
  options.log = [this](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = absl::StrCat("reconnecting: ", line);
  };
  client::IngestSender sender(channel->get(), options);
  while (!stop_.load()) {
    if (!outbox_->WaitForUnsent(absl::Milliseconds(200))) continue;
    // One stream per burst of windows: Run returns when everything it pulled is settled.
    outbox_->Rewind();
    client::SenderResult r = sender.Run([this](opmap::v1::Batch* batch) {
      if (stop_.load()) return false;
      absl::StatusOr<std::optional<OutboxItem>> item = outbox_->NextUnsent();
      if (!item.ok() || !item->has_value()) return false;
      if (!batch->ParseFromString((*item)->bytes)) return false;  // the outbox checked crc
      sent_.fetch_add(1);
      return true;
    });
    std::lock_guard<std::mutex> lock(mu_);
    if (r.status.ok()) {
      state_ = absl::StrCat("connected to ", channel_options.collectors.front());
    } else {
      state_ = absl::StrCat("unreachable: ", client::StatusLine(r.status),
                            " (batches kept in the outbox)");
      (void)outbox_->Spill();
    }
  }
}

}  // namespace opmap::agent
