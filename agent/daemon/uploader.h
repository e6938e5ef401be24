// The agent's upload thread: finished windows go into the Outbox (agent/spool: memory,
// then a bounded disk spool), and one thread streams them to the collector over the
// Ingest stream (client/ingest_sender.h: acks, resend after reconnect, exponential backoff
// with jitter, TLS/mTLS + token). A batch leaves the Outbox only when an Ack settles it,
// so an agent restart resends what was not acknowledged and the collector drops what it
// already holds: exactly once, end to end.
#ifndef OPMAP_AGENT_DAEMON_UPLOADER_H_
#define OPMAP_AGENT_DAEMON_UPLOADER_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/daemon/agent.h"
#include "agent/daemon/agent_config.h"
#include "agent/daemon/drop_report.h"
#include "agent/spool/outbox_types.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::agent {

class Outbox;

class Uploader {
 public:
  static absl::StatusOr<std::unique_ptr<Uploader>> Create(const AgentConfig& config);
  ~Uploader();  // stops the thread, spills what is in memory to the spool

  // From the supervisor: never waits on the network (may write the spool).
  void Push(std::vector<opmap::v1::Batch> batches);
  UploadStats Stats();

 private:
  Uploader() = default;
  void Loop();
  // The outbox's drops not yet reported (DropReport), as DropCount records on `batch`
  // (DROP_STAGE_SPOOL or _QUEUE, EVENT_KIND_BATCH).
  DropReport::Counts AttachUnreportedDrops(opmap::v1::Batch& batch);

  AgentConfig config_;
  std::unique_ptr<Outbox> outbox_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::string state_ = "none configured";  // guarded by mu_
  std::atomic<int64_t> sent_{0};
  std::atomic<int64_t> push_errors_{0};
  DropReport drop_report_;
  std::thread thread_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_UPLOADER_H_
