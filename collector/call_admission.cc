#include "collector/call_admission.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace opmap::collector {

CallAdmission::CallAdmission(std::string what, std::string total_flag, int64_t max_total,
                             std::string per_principal_flag, int64_t max_per_principal)
    : what_(std::move(what)),
      total_flag_(std::move(total_flag)),
      per_principal_flag_(std::move(per_principal_flag)),
      max_total_(max_total),
      max_per_principal_(max_per_principal) {}

CallAdmission::Ticket& CallAdmission::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    principal_ = std::move(other.principal_);
  }
  return *this;
}

void CallAdmission::Ticket::Release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->Release(principal_);
}

absl::StatusOr<CallAdmission::Ticket> CallAdmission::Admit(const std::string& principal) {
  absl::MutexLock lock(&mu_);
  if (total_ >= max_total_) {
    ++refused_;
    return absl::ResourceExhaustedError(
        absl::StrFormat("the collector has %d %s in progress, its limit (%s %d); retry later",
                        total_, what_, total_flag_, max_total_));
  }
  int64_t& mine = by_principal_[principal];
  if (mine >= max_per_principal_) {
    ++refused_;
    return absl::ResourceExhaustedError(
        absl::StrFormat("token '%s' has %d %s in progress, the limit per token (%s %d); "
                        "retry later",
                        principal, mine, what_, per_principal_flag_, max_per_principal_));
  }
  ++mine;
  ++total_;
  return Ticket(this, principal);
}

void CallAdmission::Release(const std::string& principal) {
  absl::MutexLock lock(&mu_);
  --total_;
  auto it = by_principal_.find(principal);
  if (it != by_principal_.end() && --it->second <= 0) by_principal_.erase(it);
}

int64_t CallAdmission::in_progress() const {
  absl::MutexLock lock(&mu_);
  return total_;
}

int64_t CallAdmission::refused() const {
  absl::MutexLock lock(&mu_);
  return refused_;
}

}  // namespace opmap::collector
