// SqliteStore: report sign-offs (schema v5 `signoffs`). One row per (report SHA-256,
// owner, role); a repeat returns the first row, so a retried `opmap signoff` is harmless.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "collector/store/sqlite/sqlite_store.h"

namespace opmap::collector {
namespace {

constexpr char kColumns[] =
    "report_sha256, kind, baseline, candidate, verdict, owner, role, signed_ns, principal";

opmap::v1::Signoff FromRow(const sqlite::Statement& st) {
  opmap::v1::Signoff s;
  s.set_report_sha256(std::string(st.Text(0)));
  s.set_kind(std::string(st.Text(1)));
  s.set_baseline(std::string(st.Text(2)));
  s.set_candidate(std::string(st.Text(3)));
  s.set_verdict(std::string(st.Text(4)));
  s.set_owner(std::string(st.Text(5)));
  s.set_role(std::string(st.Text(6)));
  s.set_signed_ns(st.Int(7));
  s.set_principal(std::string(st.Text(8)));
  return s;
}

}  // namespace

absl::StatusOr<Store::SignoffOutcome> SqliteStore::RecordSignoff(const opmap::v1::Signoff& s) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction tx, sqlite::Transaction::Begin(*db_));
  {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db_->Prepare(absl::StrFormat(
                         "INSERT OR IGNORE INTO signoffs(%s) VALUES(?1, ?2, ?3, ?4, ?5, ?6, "
                         "?7, ?8, ?9)",
                         kColumns)));
    st.BindText(1, s.report_sha256());
    st.BindText(2, s.kind());
    st.BindText(3, s.baseline());
    st.BindText(4, s.candidate());
    st.BindText(5, s.verdict());
    st.BindText(6, s.owner());
    st.BindText(7, s.role());
    st.BindInt(8, s.signed_ns());
    st.BindText(9, s.principal());
    RETURN_IF_ERROR(st.Run());
  }
  SignoffOutcome out;
  out.already = db_->Changes() == 0;
  ASSIGN_OR_RETURN(sqlite::Statement st,
                   db_->Prepare(absl::StrFormat("SELECT %s FROM signoffs WHERE report_sha256 = "
                                                "?1 AND owner = ?2 AND role = ?3",
                                                kColumns)));
  st.BindText(1, s.report_sha256());
  st.BindText(2, s.owner());
  st.BindText(3, s.role());
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return absl::InternalError("signoffs: the row just written is missing");
  out.stored = FromRow(st);
  RETURN_IF_ERROR(tx.Commit());
  return out;
}

absl::StatusOr<std::vector<opmap::v1::Signoff>> SqliteStore::ListSignoffs(
    const opmap::v1::ListSignoffsRequest& request) {
  std::vector<opmap::v1::Signoff> out;
  RETURN_IF_ERROR(WithReader([&](sqlite::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sqlite::Statement st,
                     db.Prepare(absl::StrFormat("SELECT %s FROM signoffs WHERE kind = ?1 AND "
                                                "baseline = ?2 AND candidate = ?3 ORDER BY id",
                                                kColumns)));
    st.BindText(1, request.kind());
    st.BindText(2, request.baseline());
    st.BindText(3, request.candidate());
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return absl::OkStatus();
      out.push_back(FromRow(st));
    }
  }));
  return out;
}

}  // namespace opmap::collector
