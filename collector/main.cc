// opmap-collector: receives agents' batches (gRPC Ingest), stores them exactly once,
// answers queries (gRPC Query), exposes self-metrics (Prometheus) and the gRPC health
// service. See collector/README.md and `opmap-collector --help`.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/text/text_util.h"
#include "collector/auth.h"
#include "collector/collector_config.h"
#include "collector/call_watchdog.h"
#include "collector/group_commit.h"
#include "collector/ingest_service.h"
#include "collector/metrics.h"
#include "common/metrics/metrics_server.h"
#include "collector/query_service.h"
#include "collector/store/store.h"
#include "collector/store_health.h"
#include "common/log/rate_limited_log.h"
#include "common/version/version.h"
#include "google/protobuf/stubs/logging.h"

namespace opmap::collector {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

void Log(const std::string& line) { std::fprintf(stderr, "opmap-collector: %s\n", line.c_str()); }

// Lines a peer can cause once per message (a refused batch, a message protobuf will not
// parse): rate-limited (common/log), with the count of what was left out.
void PeerLog(const std::string& line) { log::PeerLog("opmap-collector", line); }

// Protobuf logs one line per string field that is not UTF-8 in a message it refuses.
void ProtobufLog(google::protobuf::LogLevel level, const char*, int, const std::string& message) {
  PeerLog(absl::StrFormat("protobuf %s: %s",
                          level >= google::protobuf::LOGLEVEL_ERROR ? "error" : "warning",
                          message));
}

bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

// "127.0.0.1:0" + 41234 -> "127.0.0.1:41234".
std::string WithPort(const std::string& address, int port) {
  return absl::StrFormat("%s:%d", address.substr(0, address.rfind(':')), port);
}

bool IsLoopback(const std::string& address) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(address, &host, &port).ok()) return false;
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

int Run(const CollectorConfig& config) {
  // Every thread inherits this mask; the main thread takes the signals with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<Authenticator> loaded = config.insecure_no_auth
                                            ? Authenticator::AllowAll()
                                            : Authenticator::FromFile(config.tokens_file);
  if (!loaded.ok()) {
    Log(absl::StrFormat("--tokens: %s", loaded.status().message()));
    return kExitUsage;
  }
  const Authenticator auth = std::move(*loaded);
  if (config.insecure_no_auth) {
    Log("WARNING: --insecure-no-auth: every caller may ingest and query without a token. "
        "Never run this way outside a test.");
  } else {
    // The install guide's mode, root:opmap 0640 with the collector running as group opmap,
    // is fine: only the collector's own group reads it. Others reading it, or another
    // group, is not.
    struct stat st{};
    if (stat(config.tokens_file.c_str(), &st) == 0) {
      if ((st.st_mode & 007) != 0) {
        Log(absl::StrFormat("warning: tokens file %s is readable by others (chmod o-rwx)",
                            config.tokens_file));
      } else if ((st.st_mode & 070) != 0 && st.st_gid != getegid()) {
        Log(absl::StrFormat("warning: tokens file %s is readable by group %d, not the "
                            "collector's own group %d (chgrp it to the collector's group, or "
                            "chmod g-rwx)",
                            config.tokens_file, static_cast<int>(st.st_gid),
                            static_cast<int>(getegid())));
      }
    }
  }

  std::shared_ptr<grpc::ServerCredentials> credentials;
  const bool tls = !config.tls_cert.empty();
  if (tls) {
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (!ReadWholeFile(config.tls_key, &pair.private_key)) {
      Log(absl::StrFormat("--tls-key: cannot read %s", config.tls_key));
      return kExitUsage;
    }
    if (!ReadWholeFile(config.tls_cert, &pair.cert_chain)) {
      Log(absl::StrFormat("--tls-cert: cannot read %s", config.tls_cert));
      return kExitUsage;
    }
    grpc::SslServerCredentialsOptions options(
        config.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                     : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    if (!config.tls_client_ca.empty() &&
        !ReadWholeFile(config.tls_client_ca, &options.pem_root_certs)) {
      Log(absl::StrFormat("--tls-client-ca: cannot read %s", config.tls_client_ca));
      return kExitUsage;
    }
    options.pem_key_cert_pairs.push_back(std::move(pair));
    credentials = grpc::SslServerCredentials(options);
  } else {
    credentials = grpc::InsecureServerCredentials();
    if (!IsLoopback(config.listen)) {
      Log(absl::StrFormat("warning: %s is not a loopback address and TLS is off: tokens and "
                          "data travel in clear text (--tls-cert/--tls-key)",
                          config.listen));
    }
  }

  absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(config.store);
  if (!store.ok()) {
    Log(absl::StrFormat("--store %s: %s", config.store, store.status().message()));
    return kExitRuntime;
  }
  for (const std::string& note : (*store)->OpenNotes()) {
    Log(absl::StrFormat("warning: --store %s: %s", config.store, note));
  }

  for (const std::string& name : auth.UnboundWriters()) {
    Log(absl::StrFormat("warning: token '%s' has no agents= binding: it may write any agent's "
                        "sessions (docs/security.md)",
                        name));
  }

  CollectorMetrics metrics;
  StoreHealth health;
  metrics.health = &health;
  google::protobuf::SetLogHandler(ProtobufLog);
  // Cuts off calls that wait on their peer past a deadline (call_watchdog.h).
  CallWatchdog watchdog(&metrics.calls_timed_out);
  // Many streams' batches in one store transaction, where the engine can share one.
  std::unique_ptr<GroupCommitter> committer;
  if ((*store)->GroupsCommits() && config.group_commit_max_batches > 1) {
    GroupCommitOptions group;
    group.max_batches = static_cast<size_t>(config.group_commit_max_batches);
    group.max_records = config.group_commit_max_records;
    group.max_delay = config.group_commit_delay;
    committer = std::make_unique<GroupCommitter>(store->get(), group);
  }
  metrics.committer = committer.get();
  IngestOptions ingest_options;
  ingest_options.health = &health;
  ingest_options.committer = committer.get();
  ingest_options.watchdog = &watchdog;
  ingest_options.stream_idle_timeout = config.stream_idle_timeout;
  ingest_options.write_timeout = config.write_timeout;
  ingest_options.max_session_records = config.max_session_records;
  ingest_options.max_held_records = config.max_held_records;
  ingest_options.max_session_bytes = config.max_session_bytes;
  ingest_options.max_held_bytes = config.max_held_bytes;
  ingest_options.max_streams = static_cast<int>(config.max_streams);
  ingest_options.max_streams_per_principal = static_cast<int>(config.max_streams_per_token);
  ingest_options.log = Log;
  ingest_options.peer_log = PeerLog;
  IngestService ingest(store->get(), &auth, &metrics, ingest_options);
  QueryOptions query_options;
  query_options.health = &health;
  query_options.max_queries = config.max_queries;
  query_options.max_queries_per_token = config.max_queries_per_token;
  query_options.max_exports = config.max_exports;
  query_options.max_exports_per_token = config.max_exports_per_token;
  query_options.watchdog = &watchdog;
  query_options.request_body_timeout = config.request_body_timeout;
  query_options.write_timeout = config.write_timeout;
  QueryService query(store->get(), &auth, &metrics, query_options);

  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!config.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsServer>> started = metrics::MetricsServer::Start(
        config.metrics_listen, [&metrics] { return metrics.RenderPrometheus(); });
    if (!started.ok()) {
      Log(absl::StrFormat("--metrics-listen: %s", started.status().message()));
      return kExitRuntime;
    }
    metrics_server = std::move(*started);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, credentials, &port);
  builder.RegisterService(&ingest);
  builder.RegisterService(&query);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  // Threads are bounded too (the synchronous server has one per call in progress): the
  // ingest stream limit, the query limit, and room for health checks and the calls being
  // refused. Past it gRPC answers RESOURCE_EXHAUSTED instead of starting a thread. Since
  // every kind of call is admitted against its own limit (and a token against its share),
  // ingest keeps its threads whatever queries do, and the reverse.
  grpc::ResourceQuota quota("opmap-collector");
  quota.SetMaxThreads(static_cast<int>(config.max_streams + config.max_queries) + 64);
  builder.SetResourceQuota(quota);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    Log(absl::StrFormat("--listen: cannot listen on %s (address in use or not local?)",
                        config.listen));
    return kExitRuntime;
  }
  std::printf("listening on %s\n", WithPort(config.listen, port).c_str());
  if (metrics_server != nullptr) std::printf("metrics on %s\n", metrics_server->address().c_str());
  std::fflush(stdout);
  // A clickhouse:// URL may carry password=...: never into the log.
  const std::string shown_store = text::RedactPasswords(config.store);
  Log(absl::StrFormat("store %s, raw retention %s, auth %s, tls %s", shown_store,
                      absl::FormatDuration(config.raw_retention),
                      config.insecure_no_auth ? "OFF" : absl::StrFormat("%d tokens", auth.size()),
                      tls ? (config.tls_client_ca.empty() ? "on" : "on, client certs required")
                          : "off"));

  // Raw-event retention and idle-session eviction every minute; the store's integrity
  // every --integrity-check-every (it was checked at open).
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread maintenance([&] {
    std::unique_lock<std::mutex> lock(mu);
    absl::Time last_check = absl::Now();
    while (!stop) {
      lock.unlock();
      if (!health.damaged() && absl::Now() - last_check >= config.integrity_check_every) {
        last_check = absl::Now();
        if (absl::Status st = (*store)->CheckIntegrity(); !st.ok()) {
          health.MarkDamaged(st);
          Log(absl::StrFormat("integrity check: %s; ingest stopped, queries refused",
                              st.message()));
        }
      }
      int64_t cutoff = absl::ToUnixNanos(absl::Now() - config.raw_retention);
      absl::StatusOr<int64_t> expired = (*store)->ExpireRawBefore(cutoff);
      if (!expired.ok()) {
        Log(absl::StrFormat("retention: %s", expired.status().message()));
      } else if (*expired > 0) {
        Log(absl::StrFormat("retention: expired %d raw batches", *expired));
      }
      ingest.EvictIdle(absl::Now() - absl::Minutes(10));
      lock.lock();
      cv.wait_for(lock,
                  std::min<std::chrono::nanoseconds>(
                      std::chrono::minutes(1),
                      absl::ToChronoNanoseconds(config.integrity_check_every)),
                  [&] { return stop; });
    }
  });

  int sig = 0;
  sigwait(&signals, &sig);
  Log(absl::StrFormat("%s: shutting down", strsignal(sig)));
  if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
    health->Shutdown();  // NOT_SERVING to health checkers from now on
  }
  // Ingest streams are long-lived: cancel them now (commits in progress finish; the
  // agents resend what was not acked). Queries get up to 10 s to finish.
  ingest.BeginShutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(10));
  server->Wait();
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  cv.notify_all();
  maintenance.join();
  if (metrics_server != nullptr) metrics_server->Stop();
  server.reset();
  metrics.committer = nullptr;  // the metrics server is stopped: nobody renders now
  committer.reset();  // nothing queued: every handler has returned
  store->reset();  // closes the store: everything acknowledged is durable
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace opmap::collector

int main(int argc, char** argv) {
  using namespace opmap::collector;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--version") {
    std::fputs(opmap::VersionText("opmap-collector").c_str(), stdout);
    return 0;
  }
  absl::StatusOr<ParsedArgs> parsed = ParseCollectorArgs(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "opmap-collector: %s\n", std::string(parsed.status().message()).c_str());
    std::fprintf(stderr, "run `opmap-collector --help` for usage\n");
    return 2;
  }
  if (parsed->help) {
    std::fputs(CollectorUsage().c_str(), stdout);
    return 0;
  }
  return Run(parsed->config);
}
