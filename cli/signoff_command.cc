#include "cli/signoff_command.h"

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "analysis/bottleneck/mitigations.h"
#include "common/text/json_writer.h"
#include "cli/collector_flags.h"
#include "cli/command_flags.h"
#include "cli/connection_flags.h"
#include "cli/query_command_parts.h"
#include "common/io/read_file.h"
#include "cli/report_marker.h"
#include "common/crypto/sha256.h"
#include "opmap/v1/query.grpc.pb.h"

namespace opmap::cli {
namespace {

constexpr char kSignoffUsage[] = R"(usage: opmap signoff REPORT --owner NAME --role ROLE [options]

Records NAME's approval of REPORT (a file written by `opmap report` or `opmap analyze
--report`) in the collector's store, by the SHA-256 of the file's bytes. The collector
keeps the token's name beside it. `opmap report` shows who signed which report of the same
baseline and candidate. Signing the same file twice with the same owner and role is one
sign-off.

  --owner NAME     who approves (printable text, at most 200 bytes)
  --role ROLE      "ML compiler engineer" (compiler), "runtime systems engineer" (runtime)
                   or "performance modeling owner" (modeling)
  --json           print the stored sign-off as JSON
)";

int SignoffUsage(const std::string& error) { return UsageFailure("opmap signoff", error); }

struct SignoffFlags {
  ConnectionFlags connection;
  std::string owner, role;
  bool json = false;
};

const FlagKeys<SignoffFlags>& SignoffKeys() {
  static const FlagKeys<SignoffFlags> keys = [] {
    FlagKeys<SignoffFlags> k = {
        {"owner", false, "NAME", "", TextField(&SignoffFlags::owner)},
        {"role", false, "ROLE", "", TextField(&SignoffFlags::role)},
        {"json", true, "", "", SwitchField(&SignoffFlags::json)},
    };
    AddConnectionKeys(&SignoffFlags::connection, &k);
    return k;
  }();
  return keys;
}

}  // namespace

int RunSignoff(const std::vector<std::string>& argv) {
  SignoffFlags flags;
  std::vector<std::string> operands;
  if (std::optional<int> rc = ParseCommandFlags(
          "opmap signoff", argv, SignoffKeys(), config::CommandShape{.config_file = false, .operands = true},
          std::string(kSignoffUsage) + "\n" + kConnectionUsage, &flags, &operands)) {
    return *rc;
  }
  if (operands.size() > 1) {
    return SignoffUsage("one REPORT at a time (got '" + operands[0] + "' and '" + operands[1] + "')");
  }
  const std::string report = operands.empty() ? "" : operands[0];
  const std::string& owner = flags.owner;
  const std::string& role_text = flags.role;
  const bool json = flags.json;
  ConnectionFlags& connection = flags.connection;
  if (report.empty()) return SignoffUsage("missing REPORT");
  if (owner.empty()) return SignoffUsage("missing --owner NAME");
  if (role_text.empty()) return SignoffUsage("missing --role ROLE");
  const std::optional<analysis::OwnerRole> role = analysis::ParseOwnerRole(role_text);
  if (!role) {
    return SignoffUsage("--role: '" + role_text +
                 "' is not a role (ML compiler engineer, runtime systems engineer, "
                 "performance modeling owner)");
  }
  absl::StatusOr<std::string> bytes = io::ReadFileBytes(report);
  if (!bytes.ok()) {
    std::cerr << "opmap signoff: " << bytes.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<ReportMarker> marker = FindReportMarker(*bytes);
  if (!marker.ok()) {
    std::cerr << "opmap signoff: " << report << ": " << marker.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<CollectorChannel>> client = CollectorChannel::Create(connection);
  if (!client.ok()) return SignoffUsage(std::string(client.status().message()));

  opmap::v1::Signoff req;
  req.set_report_sha256(crypto::Sha256Hex(*bytes));
  req.set_kind(marker->kind);
  req.set_baseline(marker->baseline);
  req.set_candidate(marker->candidate);
  req.set_verdict(marker->verdict);
  req.set_owner(owner);
  req.set_role(std::string(analysis::OwnerRoleName(*role)));
  opmap::v1::RecordSignoffResponse resp;
  std::string endpoint;
  grpc::Status status = (*client)->CallWithFailover(
      [&](const std::shared_ptr<grpc::Channel>& ch, grpc::ClientContext& ctx) {
        return opmap::v1::Query::NewStub(ch)->RecordSignoff(&ctx, req, &resp);
      },
      &endpoint);
  if (!status.ok()) return query_internal::CallFailed(status, **client, endpoint, "opmap signoff");
  const opmap::v1::Signoff& s = resp.signoff();
  if (json) {
    text::JsonWriter w;
    w.BeginObject()
        .Field("report_sha256", s.report_sha256())
        .Field("kind", s.kind())
        .Field("baseline", s.baseline())
        .Field("candidate", s.candidate())
        .Field("verdict", s.verdict())
        .Field("owner", s.owner())
        .Field("role", s.role())
        .Field("signed_ns", s.signed_ns())
        .Field("principal", s.principal());
    w.Key("already_recorded").Bool(resp.already_recorded());
    w.EndObject();
    std::cout << w.str() << "\n";
    return 0;
  }
  std::cout << (resp.already_recorded() ? "already signed: " : "signed: ") << report
            << "\n  sha256     " << s.report_sha256() << "\n  report     " << s.kind()
            << (s.kind() == "release"
                    ? absl::StrCat(" ", s.baseline(), " -> ", s.candidate(), ", verdict ",
                                   s.verdict())
                : s.kind() == "fit"
                    ? absl::StrCat(" by ", s.baseline(), " over ", s.candidate(), ", best ", s.verdict())
                    : absl::StrCat(" ", s.candidate()))
            << "\n  owner      " << s.owner() << " (" << s.role() << ")"
            << "\n  token      " << s.principal() << "\n  at         "
            << absl::FormatTime(absl::RFC3339_sec, absl::FromUnixNanos(s.signed_ns()),
                                absl::UTCTimeZone())
            << "\n";
  return 0;
}

}  // namespace opmap::cli
