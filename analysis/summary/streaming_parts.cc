#include "analysis/summary/streaming_parts.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "analysis/mapping/kernel_mapper.h"
#include "common/text/text_util.h"

namespace opmap::analysis {

using text::Contains;

StreamingParts::StreamingParts(const TraceInfo& info, StringTable* strings,
                               const StreamingPartsOptions& options, PartFn fn)
    : info_(info), strings_(strings), options_(options), fn_(std::move(fn)) {
  if (options_.target_events == 0) options_.target_events = 1;
}

StreamingParts::HeldCall StreamingParts::Classify(StringId name) {
  auto [it, inserted] = call_kinds_.try_emplace(name);
  if (inserted) {
    const std::string_view n = strings_->Get(name);
    it->second.graph = IsGraphLaunchCall(n);
    it->second.launch = it->second.graph || Contains(n, "Launch") || Contains(n, "Memcpy") ||
                        Contains(n, "Memset") || Contains(n, "runFunction");
  }
  return it->second;
}

void StreamingParts::BeforeAdd(int64_t start_ns) {
  if (start_ns < last_cut_) ++stats_.late_events;
  if (new_events_ >= options_.target_events) {
    if (start_ns > last_start_) {
      Cut(start_ns, false);
    } else if (new_events_ >= options_.target_events * options_.forced_cut_factor) {
      ++stats_.forced_cuts;
      Cut(start_ns, false);
    }
  }
  last_start_ = std::max(last_start_, start_ns);
  ++new_events_;
}

int64_t StreamingParts::HeldCallOf(const GpuEvent& event) const {
  if (auto it = call_by_correlation_.find({event.process, event.correlation});
      it != call_by_correlation_.end()) {
    return static_cast<int64_t>(it->second);
  }
  if (auto it = call_by_id_.find(event.correlation); it != call_by_id_.end()) {
    const int64_t process = part_.api_calls[it->second].process;
    if (event.process == kNone || process == kNone) return static_cast<int64_t>(it->second);
  }
  return -1;
}

void StreamingParts::Hold(const ApiCall& call, size_t index) {
  if (call.correlation == kNone) return;
  call_by_correlation_.try_emplace(CallKey{call.process, call.correlation}, index);
  call_by_id_.try_emplace(call.correlation, index);
}

void StreamingParts::Add(const GpuEvent& event) {
  BeforeAdd(event.start_ns);
  ++gpu_events_;
  if (event.correlation != kNone) {
    if (const int64_t held = HeldCallOf(event); held >= 0) {
      calls_[held].resolved = true;
    } else if (let_go_.contains({event.process, event.correlation}) ||
               let_go_before_.contains({event.process, event.correlation})) {
      ++stats_.launches_not_held;
    }
  }
  part_.gpu_events.push_back(event);
}

void StreamingParts::Add(const ApiCall& call) {
  BeforeAdd(call.start_ns);
  HeldCall held = Classify(call.name);
  Hold(call, part_.api_calls.size());
  part_.api_calls.push_back(call);
  calls_.push_back(held);
}

void StreamingParts::Add(const Range& range) {
  BeforeAdd(range.start_ns);
  part_.ranges.push_back(range);
  range_ids_.push_back(next_range_id_++);
}

void StreamingParts::Finish() { Cut(INT64_MAX, true); }

std::vector<bool> StreamingParts::RangesEnclosingCarriedCalls(
    const std::vector<bool>& call_carried) const {
  std::vector<bool> pinned(part_.ranges.size(), false);
  // Carried calls by thread, sorted by start.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<size_t>> calls;
  for (size_t i = 0; i < part_.api_calls.size(); ++i) {
    if (call_carried[i]) calls[{part_.api_calls[i].process, part_.api_calls[i].thread}].push_back(i);
  }
  if (calls.empty()) return pinned;
  for (auto& [key, list] : calls) {
    std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return part_.api_calls[a].start_ns < part_.api_calls[b].start_ns;
    });
  }
  for (size_t r = 0; r < part_.ranges.size(); ++r) {
    const Range& range = part_.ranges[r];
    auto it = calls.find({range.process, range.thread});
    if (it == calls.end()) continue;
    const std::vector<size_t>& list = it->second;
    auto first = std::lower_bound(list.begin(), list.end(), range.start_ns,
                                  [&](size_t c, int64_t t) { return part_.api_calls[c].start_ns < t; });
    for (auto c = first; c != list.end() && part_.api_calls[*c].start_ns <= range.end_ns(); ++c) {
      if (part_.api_calls[*c].end_ns() <= range.end_ns()) {
        pinned[r] = true;
        break;
      }
    }
  }
  return pinned;
}

void StreamingParts::Cut(int64_t at_ns, bool last) {
  // Calls whose GPU work may still come go on into the next part, with their ranges.
  std::vector<bool> call_carried(part_.api_calls.size(), false);
  if (!last) {
    for (size_t i = 0; i < part_.api_calls.size(); ++i) {
      const HeldCall& held = calls_[i];
      const ApiCall& call = part_.api_calls[i];
      if (!held.launch || call.correlation == kNone) continue;
      // at_ns - horizon cannot overflow: times are within ±2^62 (model/trace.h).
      if ((held.graph || !held.resolved) && call.start_ns >= at_ns - options_.launch_horizon_ns) {
        call_carried[i] = true;
      }
    }
    // Past the cap, the earliest go (calls are in arrival order, which is start order).
    size_t carried = static_cast<size_t>(std::count(call_carried.begin(), call_carried.end(), true));
    for (size_t i = 0; i < call_carried.size() && carried > options_.max_carried_calls; ++i) {
      if (!call_carried[i]) continue;
      call_carried[i] = false;
      --carried;
      ++stats_.calls_past_cap;
    }
  }
  const std::vector<bool> pinned = RangesEnclosingCarriedCalls(call_carried);
  PartRanges held;
  held.id = range_ids_;
  held.ends_here.resize(part_.ranges.size());
  for (size_t r = 0; r < part_.ranges.size(); ++r) {
    // A range ending exactly at the cut still encloses a zero-length call there (the
    // mapping's containment is closed): it goes on into the next part.
    held.ends_here[r] = last || (part_.ranges[r].end_ns() < at_ns && !pinned[r]) ? 1 : 0;
  }

  ++stats_.parts;
  stats_.largest_part_events = std::max<int64_t>(
      stats_.largest_part_events,
      static_cast<int64_t>(part_.gpu_events.size() + part_.api_calls.size() + part_.ranges.size()));
  part_.info = info_;
  part_.strings = std::move(*strings_);
  fn_(part_, held);
  *strings_ = std::move(part_.strings);
  if (last) return;

  // What goes on: open and pinned ranges, carried calls; the rest is let go. The next
  // part is about as large as this one: room for it now, not by doubling as it fills.
  Trace next;
  next.gpu_events.reserve(part_.gpu_events.size());
  next.api_calls.reserve(part_.api_calls.size());
  next.ranges.reserve(part_.ranges.size());
  std::vector<int64_t> next_ids;
  for (size_t r = 0; r < part_.ranges.size(); ++r) {
    if (held.ends_here[r]) continue;
    next.ranges.push_back(part_.ranges[r]);
    next_ids.push_back(range_ids_[r]);
  }
  std::vector<HeldCall> next_calls;
  std::swap(let_go_before_, let_go_);
  let_go_.clear();
  call_by_correlation_.clear();
  call_by_id_.clear();
  for (size_t i = 0; i < part_.api_calls.size(); ++i) {
    const ApiCall& call = part_.api_calls[i];
    if (!call_carried[i]) {
      if (call.correlation != kNone) let_go_.insert({call.process, call.correlation});
      continue;
    }
    Hold(call, next.api_calls.size());
    next.api_calls.push_back(call);
    next_calls.push_back(calls_[i]);
  }
  stats_.carried += static_cast<int64_t>(next.ranges.size() + next.api_calls.size());
  part_ = std::move(next);
  range_ids_ = std::move(next_ids);
  calls_ = std::move(next_calls);
  new_events_ = 0;
  last_cut_ = at_ns;
}

void AddTraceInStartOrder(const Trace& trace, StreamingParts* parts) {
  struct Item {
    int64_t start;
    int kind;
    size_t index;
  };
  std::vector<Item> items;
  items.reserve(trace.ranges.size() + trace.api_calls.size() + trace.gpu_events.size());
  for (size_t i = 0; i < trace.ranges.size(); ++i) items.push_back({trace.ranges[i].start_ns, 0, i});
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    items.push_back({trace.api_calls[i].start_ns, 1, i});
  }
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    items.push_back({trace.gpu_events[i].start_ns, 2, i});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.start != b.start ? a.start < b.start : a.kind < b.kind;
  });
  for (const Item& it : items) {
    if (it.kind == 0) parts->Add(trace.ranges[it.index]);
    if (it.kind == 1) parts->Add(trace.api_calls[it.index]);
    if (it.kind == 2) parts->Add(trace.gpu_events[it.index]);
  }
  parts->Finish();
}

}  // namespace opmap::analysis
