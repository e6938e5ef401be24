#include "agent/counters/papi_counters.h"

#include <papi.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "agent/counters/papi_library.h"

namespace opmap::agent {
namespace {

void AllUnavailable(const std::vector<std::string>& names, const std::string& reason,
                    std::vector<CounterUnavailable>* unavailable) {
  for (const std::string& name : names) unavailable->push_back({name, reason});
}

}  // namespace

std::unique_ptr<PapiCounters> PapiCounters::Open(pid_t pid,
                                                 const std::vector<std::string>& presets,
                                                 std::vector<CounterUnavailable>* unavailable) {
  if (presets.empty()) return nullptr;
  if (absl::Status init = InitPapi(); !init.ok()) {
    AllUnavailable(presets, std::string(init.message()), unavailable);
    return nullptr;
  }
  absl::MutexLock lock(&PapiMutex());

  // Why the CPU component is off (no PMU) is the root cause; keep it to append to each
  // preset's own error so the printed reason says both what failed and why.
  absl::StatusOr<int> cidx = PapiCpuComponent();
  std::string component_note = cidx.ok() ? "" : absl::StrCat("; ", cidx.status().message());

  std::vector<std::pair<std::string, int>> wanted;
  for (const std::string& name : presets) {
    int code = 0;
    if (int rc = PAPI_event_name_to_code(name.c_str(), &code); rc != PAPI_OK) {
      unavailable->push_back(
          {name, absl::StrCat("PAPI_event_name_to_code: ", PapiErrorText(rc), component_note)});
      continue;
    }
    if (int rc = PAPI_query_event(code); rc != PAPI_OK) {
      unavailable->push_back(
          {name, absl::StrCat("PAPI_query_event: ", PapiErrorText(rc), component_note)});
      continue;
    }
    wanted.emplace_back(name, code);
  }
  if (wanted.empty()) return nullptr;
  if (!cidx.ok()) {  // presets known but no component to count them on
    for (const auto& [name, code] : wanted) {
      unavailable->push_back({name, std::string(cidx.status().message())});
    }
    return nullptr;
  }

  int event_set = PAPI_NULL;
  if (int rc = PAPI_create_eventset(&event_set); rc != PAPI_OK) {
    for (const auto& [name, code] : wanted) {
      unavailable->push_back({name, absl::StrCat("PAPI_create_eventset: ", PapiErrorText(rc))});
    }
    return nullptr;
  }
  // Until the object exists, failures destroy the set here: the destructor takes
  // PapiMutex(), which this function already holds.
  auto fail_all = [&](const std::vector<std::string>& names, const std::string& reason) {
    AllUnavailable(names, reason, unavailable);
    PAPI_cleanup_eventset(event_set);
    PAPI_destroy_eventset(&event_set);
    return nullptr;
  };
  std::vector<std::string> wanted_names;
  for (const auto& [name, code] : wanted) wanted_names.push_back(name);
  // Component, then attach, then multiplex, then events: the order PAPI requires.
  if (int rc = PAPI_assign_eventset_component(event_set, *cidx); rc != PAPI_OK) {
    return fail_all(wanted_names,
                    absl::StrCat("PAPI_assign_eventset_component: ", PapiErrorText(rc)));
  }
  if (int rc = PAPI_attach(event_set, static_cast<unsigned long>(pid)); rc != PAPI_OK) {
    return fail_all(wanted_names, absl::StrCat("PAPI_attach(pid ", pid, "): ", PapiErrorText(rc)));
  }
  bool multiplexed = false;
  if (static_cast<int>(wanted.size()) > PAPI_num_cmp_hwctrs(*cidx)) {
    // Without multiplexing the extra presets would fail to add; if multiplexing itself is
    // refused we go on and let PAPI_add_event say which presets did not fit.
    multiplexed = PAPI_set_multiplex(event_set) == PAPI_OK;
  }
  std::vector<std::string> added;
  for (const auto& [name, code] : wanted) {
    if (int rc = PAPI_add_event(event_set, code); rc != PAPI_OK) {
      unavailable->push_back({name, absl::StrCat("PAPI_add_event: ", PapiErrorText(rc),
                                                 multiplexed ? " (multiplexed set)" : "")});
      continue;
    }
    added.push_back(name);
  }
  if (added.empty()) return fail_all({}, "");
  if (int rc = PAPI_start(event_set); rc != PAPI_OK) {
    return fail_all(added, absl::StrCat("PAPI_start(pid ", pid, "): ", PapiErrorText(rc)));
  }
  std::unique_ptr<PapiCounters> counters(new PapiCounters(pid, event_set));
  counters->started_ = true;
  counters->multiplexed_ = multiplexed;
  counters->start_ns_ = PAPI_get_real_nsec();
  counters->values_.assign(added.size(), 0);
  counters->names_ = std::move(added);
  return counters;
}

PapiCounters::~PapiCounters() {
  absl::MutexLock lock(&PapiMutex());
  // Errors are ignored: the target may be gone, and there is no one left to tell.
  if (started_) PAPI_stop(event_set_, values_.data());
  PAPI_cleanup_eventset(event_set_);
  PAPI_destroy_eventset(&event_set_);
}

absl::Status PapiCounters::Read(std::vector<CounterReading>* out) {
  absl::MutexLock lock(&PapiMutex());
  if (int rc = PAPI_read(event_set_, values_.data()); rc != PAPI_OK) {
    return absl::InternalError(absl::StrCat("PAPI_read(pid ", pid_, "): ", PapiErrorText(rc)));
  }
  const int64_t elapsed_ns = PAPI_get_real_nsec() - start_ns_;
  for (size_t i = 0; i < names_.size(); ++i) {
    out->push_back({names_[i], CounterSource::kPapi, values_[i], elapsed_ns, elapsed_ns});
  }
  return absl::OkStatus();
}

}  // namespace opmap::agent
