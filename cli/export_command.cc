#include "cli/export_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/collector_flags.h"
#include "cli/command_flags.h"
#include "cli/connection_flags.h"
#include "cli/selection_flags.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::cli {
namespace {

constexpr char kExportUsage[] = R"(usage: opmap export --collector HOST:PORT --out FILE [options]

Writes the events a collector stores as one Chrome-trace JSON document (loads in Perfetto
and chrome://tracing, and back into `opmap analyze`). FILE is replaced atomically: the
document goes to a temporary file next to it, which is renamed over FILE only once the
collector has sent all of it.

options:
  --out FILE            where to write (required)
  --session S           only the capture session S (its session id, as `opmap import`
                        prints it)
  --agent A             only sessions of agent A
  --request R           with --session: only request R of it — the events within the
                        extent of the request range whose NVTX payload is R (its id; an
                        exemplar of `opmap analyze`'s tail), GPU work included
  --max-events N        at most N events (default: the collector's limit); a cut export
                        says so
  --quiet               no summary line
  -h, --help            this text

)";

constexpr char kExportExitCodes[] = R"(
exit codes: 0 ok; 2 bad usage, FILE not writable, or the collector refused the call
(UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT); 1 the collector is unreachable
(UNAVAILABLE) or another failure.
)";

int ExportUsageError(const std::string& msg) { return UsageFailure("opmap export", msg); }

// A temporary file next to the target, removed unless committed.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)) {}
  ~AtomicFile() {
    if (fd_ >= 0) close(fd_);
    if (!tmp_.empty() && !committed_) unlink(tmp_.c_str());
  }
  std::string Open() {
    tmp_ = path_ + ".tmp.XXXXXX";
    fd_ = mkstemp(tmp_.data());
    if (fd_ < 0) {
      std::string err = std::strerror(errno);
      tmp_.clear();
      return err;
    }
    // mkstemp makes 0600; give the file what a plain create would (0666 & ~umask).
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd_, 0666 & ~mask);
    return "";
  }
  // Back to empty (a retry on the next collector).
  std::string Reset() {
    if (ftruncate(fd_, 0) != 0 || lseek(fd_, 0, SEEK_SET) != 0) return std::strerror(errno);
    size_ = 0;
    return "";
  }
  std::string Write(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::strerror(errno);
      done += static_cast<size_t>(n);
    }
    size_ += data.size();
    return "";
  }
  std::string Commit() {
    if (fsync(fd_) != 0) return std::strerror(errno);
    if (close(fd_) != 0) {
      fd_ = -1;
      return std::strerror(errno);
    }
    fd_ = -1;
    if (rename(tmp_.c_str(), path_.c_str()) != 0) return std::strerror(errno);
    committed_ = true;
    return "";
  }
  uint64_t size() const { return size_; }

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  uint64_t size_ = 0;
};

struct ExportFlags {
  ConnectionFlags connection;
  SelectionFlags selection;
  std::string out, session, agent;
  uint64_t max_events = 0;
  std::optional<uint64_t> request;
  bool quiet = false;
};

const FlagKeys<ExportFlags>& ExportKeys() {
  static const FlagKeys<ExportFlags> keys = [] {
    FlagKeys<ExportFlags> k = {
        {"out", false, "FILE", "", TextField(&ExportFlags::out)},
        {"session", false, "S", "", TextField(&ExportFlags::session)},
        {"agent", false, "A", "", TextField(&ExportFlags::agent)},
        {"max-events", false, "N", "",
         [](std::string_view v, ExportFlags* f) {
           if (!absl::SimpleAtoi(std::string(v), &f->max_events)) {
             return absl::InvalidArgumentError("needs a non-negative integer");
           }
           return absl::OkStatus();
         }},
        {"request", false, "R", "",
         [](std::string_view v, ExportFlags* f) {
           uint64_t id = 0;
           if (!absl::SimpleAtoi(std::string(v), &id) || id >= (uint64_t{1} << 63)) {
             return absl::InvalidArgumentError("needs a request id (an integer in [0, 2^63))");
           }
           f->request = id;
           return absl::OkStatus();
         }},
        {"quiet", true, "", "", SwitchField(&ExportFlags::quiet)},
    };
    AddConnectionKeys(&ExportFlags::connection, &k);
    AddSelectionKeys(&ExportFlags::selection, &k);
    return k;
  }();
  return keys;
}

}  // namespace

int RunExport(const std::vector<std::string>& argv) {
  ExportFlags flags;
  const config::CommandShape shape{.config_file = false, .operands = false,
                                   .short_names = {{'o', "out"}, {'q', "quiet"}}};
  if (std::optional<int> rc = ParseCommandFlags(
          "opmap export", argv, ExportKeys(), shape,
          std::string(kExportUsage) + kConnectionUsage + kSelectionUsage + kExportExitCodes, &flags, nullptr)) {
    return *rc;
  }
  ConnectionFlags& connection = flags.connection;
  const SelectionFlags& selection = flags.selection;
  const std::string& out = flags.out;
  const bool quiet = flags.quiet;
  if (out.empty()) return ExportUsageError("--out FILE is required");
  opmap::v1::ExportTraceRequest req;
  std::string error;
  opmap::v1::TimeRange range;
  bool has_range = false;
  if (!MakeTimeRange(selection, &range, &has_range, &error)) return ExportUsageError(error);
  if (has_range) *req.mutable_range() = range;
  *req.mutable_filter() = selection.filter;
  req.set_agent_id(flags.agent);
  req.set_session_id(flags.session);
  req.set_max_events(flags.max_events);
  if (flags.request) {
    if (flags.session.empty()) return ExportUsageError("--request needs --session (a request of one session)");
    req.set_request_id(*flags.request);
  }
  if (!connection.timeout_given) connection.timeout = absl::Minutes(10);
  absl::StatusOr<std::unique_ptr<CollectorChannel>> client = CollectorChannel::Create(connection);
  if (!client.ok()) return ExportUsageError(std::string(client.status().message()));

  AtomicFile file(out);
  if (std::string err = file.Open(); !err.empty()) {
    std::cerr << "opmap export: " << out << ": cannot create a temporary file next to it: "
              << err << "\n";
    return 2;
  }
  opmap::v1::TraceChunk last;
  grpc::Status status;
  std::string endpoint;
  for (size_t e = 0; e < (*client)->endpoint_count(); ++e) {
    endpoint = (*client)->endpoint(e);
    if (std::string err = file.Reset(); !err.empty()) {
      std::cerr << "opmap export: " << out << ": " << err << "\n";
      return 2;
    }
    grpc::ClientContext context;
    (*client)->PrepareContext(&context, (*client)->timeout());
    auto stub = opmap::v1::Query::NewStub((*client)->NewChannel(e));
    std::unique_ptr<grpc::ClientReader<opmap::v1::TraceChunk>> reader =
        stub->ExportTrace(&context, req);
    opmap::v1::TraceChunk chunk;
    bool got_data = false;
    std::string write_error;
    while (reader->Read(&chunk)) {
      got_data = true;
      if (write_error.empty()) write_error = file.Write(chunk.data());
      if (!write_error.empty()) {
        context.TryCancel();
        break;
      }
      if (chunk.last()) last = chunk;
    }
    status = reader->Finish();
    if (!write_error.empty()) {
      std::cerr << "opmap export: " << out << ": write failed: " << write_error << "\n";
      return 2;
    }
    if (status.ok() || got_data || status.error_code() != grpc::StatusCode::UNAVAILABLE) break;
  }
  if (!status.ok()) {
    std::cerr << "opmap export: " << StatusLine(status) << AuthHint(status, **client)
              << " (collector " << endpoint << ")\n";
    return ExitCodeFor(status);
  }
  if (!last.last()) {
    std::cerr << "opmap export: the collector ended the export without its last chunk "
                 "(collector "
              << endpoint << "); " << out << " left unchanged\n";
    return 1;
  }
  if (std::string err = file.Commit(); !err.empty()) {
    std::cerr << "opmap export: " << out << ": " << err << "\n";
    return 2;
  }
  if (!quiet) {
    std::cout << absl::StrFormat("exported %d events (%d bytes) to %s%s\n", last.events(),
                                 file.size(), out,
                                 last.truncated() ? " (truncated: --max-events or the "
                                                    "collector's limit reached)"
                                                  : "");
  }
  return 0;
}

}  // namespace opmap::cli
