#include "cli/import_command.h"

#include "common/config/flag_config.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text/json_writer.h"
#include "analysis/wire/batch_codec.h"
#include "cli/collector_flags.h"
#include "cli/command_flags.h"
#include "cli/connection_flags.h"
#include "cli/import_stream.h"
#include "cli/trace_file_text.h"
#include "client/ingest_sender.h"
#include "common/crypto/sha256.h"
#include "common/io/read_file.h"
#include "cli/capture_loader.h"
#include "cli/trace_loader.h"
#include "common/version/version.h"

#ifndef OPMAP_VERSION
#define OPMAP_VERSION "0.0.0"
#endif

namespace opmap::cli {
namespace {

constexpr char kImportUsage[] = R"(usage: opmap import TRACE... --collector HOST:PORT [--token T | --token-file F] [options]

Sends PyTorch-profiler (Kineto) traces (.json or .json.gz) to a collector through Ingest,
exactly as an agent does: batches with sequence numbers, kept until the collector acks
them as durable, resent after a reconnect (the collector drops what it already holds).
Each trace becomes one capture session of agent "opmap-import@<this host>" whose id is
"import-" + SHA-256 of the file's bytes, of the options that shape the batches
(--batch-records, --host, --model, --revision, --label, --capture) and of the token: importing the
same file again with the same options and token is deduplicated and stored once, and no
other token's holder can predict the id to write into the session first.

A Kineto file or an Nsight Systems export is read twice and never held: first through
(the id, and a full check, so a bad trace is refused before anything is sent), then again
while its batches go out. Memory stays flat whatever the trace's size (the collector holds
a session until its last batch: --max-session-records there bounds it). Capture files are
loaded whole.

options:
  --host H            Resource.host of the imported events (default: none)
  --model M           model name (Resource.model_name)
  --revision R        model revision (Resource.model_revision)
  --label k=v         a job label; repeatable
  --capture PATH      a CUDA/HIP graph capture trace or a folder of them, merged into
                      each TRACE before it is sent, as `opmap analyze --capture` does
                      (the trace is then loaded whole); repeatable
  --batch-records N   records (kernels, memory ops, launches, ranges) per batch
                      (default 20000)
  --window N          unacknowledged batches in flight at most (default 64)
  --retry-for D       keep reconnecting (backoff 100 ms doubling to 5 s, with jitter)
                      while nothing is acknowledged for up to D (default 120s)
  --format F          text (default) or json (one object per trace, one per line)
  --quiet             no progress or reconnect lines on stderr
  -h, --help          this text

)";

constexpr char kImportExitCodes[] = R"(
exit codes: 0 every batch stored; 2 bad usage, bad input, refused by the collector
(UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT), a batch over the collector's
message limit (at once, not retried) or a batch rejected (each rejection is printed with
the field it names); 1 the collector stayed unreachable for --retry-for,
or an internal error.
)";

struct ImportArgs {
  std::vector<std::string> traces;
  ConnectionFlags connection;
  std::string host, model, revision;
  std::map<std::string, std::string> labels;
  size_t batch_records = 20000;
  size_t window = 64;
  absl::Duration retry_for = absl::Seconds(120);
  std::vector<std::string> captures;  // --capture: graph capture traces to merge first
  bool json = false;
  bool quiet = false;
};

int ImportUsageError(const std::string& msg) { return UsageFailure("opmap import", msg); }

const FlagKeys<ImportArgs>& ImportKeys() {
  static const FlagKeys<ImportArgs> keys = [] {
    FlagKeys<ImportArgs> k = {
        {"host", false, "H", "", TextField(&ImportArgs::host)},
        {"model", false, "M", "", TextField(&ImportArgs::model)},
        {"revision", false, "R", "", TextField(&ImportArgs::revision)},
        {"label", false, "K=V", "",
         [](std::string_view v, ImportArgs* a) {
           absl::StatusOr<std::pair<std::string, std::string>> label = config::ParseLabel(v);
           if (!label.ok()) return label.status();
           a->labels[label->first] = label->second;
           return absl::OkStatus();
         }},
        {"capture", false, "PATH", "",
         [](std::string_view v, ImportArgs* a) {
           if (v.empty()) return absl::InvalidArgumentError("needs a capture trace or a folder of them");
           a->captures.emplace_back(v);
           return absl::OkStatus();
         }},
        {"batch-records", false, "N", "", IntField(&ImportArgs::batch_records, 1, 1000000)},
        {"window", false, "N", "", IntField(&ImportArgs::window, 1, 1000000)},
        {"retry-for", false, "D", "",
         [](std::string_view v, ImportArgs* a) {
           if (!ParseDurationFlag(std::string(v), &a->retry_for)) {
             return absl::InvalidArgumentError("needs a duration such as 120s or 10m");
           }
           return absl::OkStatus();
         }},
        {"format", false, "F", "",
         [](std::string_view v, ImportArgs* a) {
           if (v == "text" || v == "table") {
             a->json = false;
           } else if (v == "json") {
             a->json = true;
           } else {
             return absl::InvalidArgumentError("needs text or json");
           }
           return absl::OkStatus();
         }},
        {"quiet", true, "", "", SwitchField(&ImportArgs::quiet)},
    };
    AddConnectionKeys(&ImportArgs::connection, &k);
    return k;
  }();
  return keys;
}

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// Everything besides the file's bytes that changes what the batches hold.
std::string CanonicalOptions(const ImportArgs& args) {
  std::string s = absl::StrCat("version=", OPMAP_VERSION, "\nbatch_records=",
                               args.batch_records, "\nhost=", args.host, "\nmodel=",
                               args.model, "\nrevision=", args.revision, "\n");
  for (const auto& [k, v] : args.labels) {  // std::map: sorted
    absl::StrAppend(&s, "label=", k.size(), ":", k, "=", v.size(), ":", v, "\n");
  }
  // A merged trace is another session than the replay alone.
  for (const std::string& c : args.captures) absl::StrAppend(&s, "capture=", c.size(), ":", c, "\n");
  return s;
}

opmap::v1::Resource MakeResource(const ImportArgs& args, const analysis::TraceInfo& info) {
  opmap::v1::Resource r;
  r.set_host(args.host);
  r.set_model_name(args.model);
  r.set_model_revision(args.revision);
  for (const auto& [k, v] : args.labels) (*r.mutable_labels())[k] = v;
  if (info.process > 0 && info.process <= 0xffffffffLL) {
    r.set_pid(static_cast<uint32_t>(info.process));
  }
  r.set_framework("pytorch");  // Kineto traces come from the PyTorch profiler
  r.set_agent_version(absl::StrCat("opmap-import ", std::string(opmap::Version())));
  for (size_t i = 0; i < info.gpu_names.size(); ++i) {
    opmap::v1::Gpu* g = r.add_gpus();
    g->set_device(static_cast<uint32_t>(i));
    g->set_name(info.gpu_names[i]);
  }
  return r;
}

// A progress line once an import has run for a second: in place on a terminal, every
// 5 s otherwise.
class Progress {
 public:
  Progress(const std::string& file, bool enabled)
      : file_(file), enabled_(enabled), tty_(isatty(2)), start_(absl::Now()) {}
  ~Progress() { Finish(); }
  void Update(const client::SenderProgress& p, size_t total) {
    if (!enabled_) return;
    absl::Time now = absl::Now();
    if (now - start_ < absl::Seconds(1)) return;
    if (!tty_ && now - last_ < absl::Seconds(5) && p.settled < static_cast<int64_t>(total)) {
      return;
    }
    last_ = now;
    shown_ = true;
    double pct = total ? 100.0 * p.settled / total : 100.0;
    std::fprintf(stderr, "%sopmap import: %s: %d/%d batches acknowledged (%.0f%%)%s%s",
                 tty_ ? "\r" : "", file_.c_str(), static_cast<int>(p.settled),
                 static_cast<int>(total), pct,
                 p.reconnects ? absl::StrFormat(", %d reconnects", p.reconnects).c_str() : "",
                 tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  // Ends an in-place line before another line is printed.
  void Finish() {
    if (shown_ && tty_) std::fprintf(stderr, "\n");
    shown_ = false;
  }

 private:
  std::string file_;
  bool enabled_, tty_, shown_ = false;
  absl::Time start_, last_ = absl::InfinitePast();
};

const char* RejectionCodeName(int code) {
  switch (code) {
    case opmap::v1::REJECTION_CODE_INVALID_VALUE: return "INVALID_VALUE";
    case opmap::v1::REJECTION_CODE_COLUMN_LENGTH: return "COLUMN_LENGTH";
    case opmap::v1::REJECTION_CODE_UNKNOWN_STRING_ID: return "UNKNOWN_STRING_ID";
    case opmap::v1::REJECTION_CODE_STRING_TABLE_GAP: return "STRING_TABLE_GAP";
    case opmap::v1::REJECTION_CODE_MISSING_IDENTITY: return "MISSING_IDENTITY";
    case opmap::v1::REJECTION_CODE_TOO_LARGE: return "TOO_LARGE";
    default: return "UNSPECIFIED";
  }
}

// Imports one file; returns the exit code for it.
// A refusal or an unreachable collector sets *stop: it would apply to every file.
// The batches of one file: a Kineto file or an Nsight export streamed (import_stream.h),
// a capture file loaded whole. Exit code 2 and a message on bad input, before anything is sent.
struct FileBatches {
  std::string session_id;
  int64_t gpu_events = 0;
  int64_t records = 0;
  size_t expected = 0;  // batches, for progress (an estimate when streamed)
  std::vector<opmap::v1::Batch> loaded;
  std::unique_ptr<StreamedBatches> streamed;
  size_t next = 0;
  bool Next(opmap::v1::Batch* out) {
    if (streamed) return streamed->Next(out);
    if (next >= loaded.size()) return false;
    *out = std::move(loaded[next++]);
    return true;
  }
  size_t sent() const { return streamed ? static_cast<size_t>(streamed->handed_out()) : next; }
};

absl::StatusOr<FileBatches> PrepareBatches(const std::string& path, const ImportArgs& args,
                                           const std::string& id_options,
                                           analysis::BatchingOptions batching) {
  FileBatches out;
  if (args.captures.empty() && StreamableImport(path)) {
    absl::StatusOr<CheckedTraceFile> checked = CheckTraceFile(path, id_options);
    if (!checked.ok()) return checked.status();
    out.session_id = checked->session_id;
    out.gpu_events = checked->gpu_events;
    out.records = checked->records;
    out.expected = static_cast<size_t>(checked->records) / batching.max_records_per_batch + 1;
    batching.session_id = out.session_id;
    batching.resource = MakeResource(args, checked->info);
    out.streamed = std::make_unique<StreamedBatches>(path, std::move(batching));
    return out;
  }
  absl::StatusOr<std::string> bytes = io::ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  out.session_id = ImportSessionId(*bytes, id_options);
  absl::StatusOr<analysis::Trace> trace = LoadTraceBytes(std::move(*bytes));
  if (!trace.ok()) return trace.status();
  if (!trace->graph_nodes.empty()) MergeGraphNodeIds(*trace, "opmap import", args.quiet);
  if (!args.captures.empty()) {
    absl::StatusOr<analysis::CaptureMergeReport> merged =
        MergeCaptureFiles(args.captures, *trace, "opmap import", args.quiet);
    if (!merged.ok()) return merged.status();
  }
  batching.session_id = out.session_id;
  batching.resource = MakeResource(args, trace->info);
  absl::StatusOr<std::vector<opmap::v1::Batch>> batches = analysis::TraceToBatches(*trace, batching);
  if (!batches.ok()) return batches.status();
  out.gpu_events = static_cast<int64_t>(trace->gpu_events.size());
  out.records = out.gpu_events + static_cast<int64_t>(trace->api_calls.size()) +
                static_cast<int64_t>(trace->ranges.size());
  out.loaded = std::move(*batches);
  out.expected = out.loaded.size();
  return out;
}

// Imports one file; returns the exit code for it.
// A refusal or an unreachable collector sets *stop: it would apply to every file.
int ImportOne(const std::string& path, const ImportArgs& args, CollectorChannel* channel,
              const std::string& agent_id, bool* stop) {
  const absl::Time start = absl::Now();
  // Namespaced by principal: the token's fingerprint is part of the id (docs/security.md).
  const std::string id_options =
      absl::StrCat(CanonicalOptions(args), "principal=", channel->TokenFingerprint(), "\n");
  analysis::BatchingOptions batching;
  batching.agent_id = agent_id;
  batching.max_records_per_batch = args.batch_records;
  absl::StatusOr<FileBatches> prepared = PrepareBatches(path, args, id_options, batching);
  if (!prepared.ok()) {
    std::cerr << "opmap import: " << path << ": " << prepared.status().message() << "\n";
    return 2;
  }
  FileBatches& batches = *prepared;
  const std::string& session_id = batches.session_id;
  const size_t total = batches.expected;
  const int64_t gpu_events = batches.gpu_events;
  const int64_t records = batches.records;

  Progress progress(path, !args.quiet);
  client::SenderOptions options;
  options.window = args.window;
  options.retry_for = args.retry_for;
  options.progress = [&](const client::SenderProgress& p) { progress.Update(p, total); };
  options.on_rejection = [&](const std::string&, const std::string&,
                             const opmap::v1::Rejection& r) {
    progress.Finish();
    std::cerr << absl::StrFormat("opmap import: %s: batch %d rejected: %s%s%s (%s)\n", path,
                                 r.seq(), r.field(), r.field().empty() ? "" : ": ",
                                 r.message(), RejectionCodeName(r.code()));
  };
  if (!args.quiet) {
    options.log = [&](const std::string& line) {
      progress.Finish();
      std::cerr << "opmap import: " << path << ": " << line << "\n";
    };
  }
  client::IngestSender sender(channel, options);
  client::SenderResult result =
      sender.Run([&](opmap::v1::Batch* out) { return batches.Next(out); });
  progress.Finish();
  if (batches.streamed) {
    // The second pass read the file again: a failure now means it changed since the first.
    if (absl::Status pass = batches.streamed->Finish(); !pass.ok() && result.status.ok()) {
      std::cerr << "opmap import: " << path << ": " << pass.message()
                << " (the file changed while it was imported; the session is incomplete)\n";
      return 2;
    }
  }
  if (client::IsMessageTooLarge(result.status)) {
    // Bad input for this collector, not an outage: said at once, exit 2, no retry.
    std::cerr << "opmap import: " << path << ": " << StatusLine(result.status)
              << " (a batch is over the collector's --max-message-bytes; import with a "
                 "smaller --batch-records)\n";
    return 2;
  }
  if (!result.status.ok()) {
    std::cerr << "opmap import: " << path << ": " << StatusLine(result.status)
              << AuthHint(result.status, *channel) << "\n";
    *stop = true;
    return ExitCodeFor(result.status) == 2 ? 2 : 1;
  }
  const client::SenderProgress& p = result.progress;
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (args.json) {
    text::JsonWriter w;
    w.BeginObject()
        .Field("file", path)
        .Field("agent_id", agent_id)
        .Field("session_id", session_id)
        .Field("batches", static_cast<int64_t>(batches.sent()))
        .Field("gpu_events", gpu_events)
        .Field("records", records)
        .Field("rejected_batches", p.rejected)
        .Field("resent_batches", p.resent)
        .Field("reconnects", p.reconnects)
        .Field("seconds", seconds)
        .EndObject();
    std::cout << w.str() << "\n";
  } else {
    std::cout << absl::StrFormat("imported %s: %d batches, %d GPU events, session %s", path,
                                 batches.sent(), gpu_events, session_id);
    if (p.rejected) std::cout << absl::StrFormat(" (%d batches rejected)", p.rejected);
    if (p.reconnects) {
      std::cout << absl::StrFormat(" (%d reconnects, %d batches resent)", p.reconnects,
                                   p.resent);
    }
    std::cout << "\n";
  }
  std::cout.flush();
  return p.rejected ? 2 : 0;
}

}  // namespace

std::string ImportSessionId(std::string_view file_bytes, std::string_view options) {
  crypto::Sha256Stream digest;
  digest.Update(file_bytes);
  return ImportSessionIdOf(digest, options);
}

std::string ImportSessionIdOf(crypto::Sha256Stream& file_digest, std::string_view options) {
  static constexpr char kSep[] = "\0opmap-import\0";
  file_digest.Update(std::string_view(kSep, sizeof(kSep) - 1));
  file_digest.Update(options);
  const std::array<unsigned char, 32> digest = file_digest.Finish();
  std::string id = "import-";
  for (unsigned int i = 0; i < 16; ++i) absl::StrAppend(&id, absl::Hex(digest[i], absl::kZeroPad2));
  return id;
}

int RunImport(const std::vector<std::string>& argv) {
  ImportArgs args;
  const config::CommandShape shape{.config_file = false, .operands = true,
                                   .short_names = {{'q', "quiet"}}};
  if (std::optional<int> rc =
          ParseCommandFlags("opmap import", argv, ImportKeys(), shape,
                            std::string(kImportUsage) + kConnectionUsage + kImportExitCodes, &args,
                            &args.traces)) {
    return *rc;
  }
  if (args.traces.empty()) return ImportUsageError("no trace given");
  absl::StatusOr<std::unique_ptr<CollectorChannel>> client =
      CollectorChannel::Create(args.connection);
  if (!client.ok()) return ImportUsageError(std::string(client.status().message()));

  const std::string agent_id = "opmap-import@" + Hostname();
  int exit_code = 0;
  for (const std::string& path : args.traces) {
    bool stop = false;
    int rc = ImportOne(path, args, client->get(), agent_id, &stop);
    if (stop) return rc;
    exit_code = std::max(exit_code, rc);
  }
  return exit_code;
}

}  // namespace opmap::cli
