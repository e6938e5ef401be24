#include "analysis/summary/request_breakdown.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include "analysis/serving/request_key.h"
#include "analysis/summary/host_ranges.h"
#include "analysis/summary/modules.h"

namespace opmap::analysis {
namespace {

using Kind = RequestComponentKind;
constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

// The innermost range at each instant of one thread: disjoint segments in time order.
struct Segment {
  int64_t start, end;
  int32_t range;
};

// `on_thread`: the thread's ranges by start, longer first on ties. Ranges that overlap
// without nesting (start/end ranges) give way to the later one.
std::vector<Segment> InnermostSegments(const std::vector<Range>& ranges,
                                       const std::vector<int32_t>& on_thread) {
  std::vector<Segment> out;
  std::vector<int32_t> open;
  int64_t cur = std::numeric_limits<int64_t>::min();
  auto emit = [&](int64_t a, int64_t b, int32_t r) {
    if (b > a) out.push_back({a, b, r});
  };
  auto close_until = [&](int64_t t) {
    while (!open.empty() && ranges[open.back()].end_ns() <= t) {
      const int64_t e = ranges[open.back()].end_ns();
      emit(cur, e, open.back());
      cur = std::max(cur, e);
      open.pop_back();
    }
  };
  for (int32_t r : on_thread) {
    const int64_t s = ranges[r].start_ns;
    close_until(s);
    if (!open.empty()) emit(cur, s, open.back());
    cur = std::max(cur, s);
    open.push_back(r);
  }
  close_until(kForever);
  return out;
}

}  // namespace

std::string_view RequestComponentKindName(RequestComponentKind kind) {
  switch (kind) {
    case Kind::kQueue: return "queue";
    case Kind::kGpu: return "gpu";
    case Kind::kCopy: return "copy";
    case Kind::kGpuWait: return "gpu_wait";
    case Kind::kHostOperator: return "host_operator";
    case Kind::kHostGap: return "host_gap";
  }
  return "host_gap";
}

int32_t RequestBreakdownAccumulator::KeyIndex(RequestComponentKind kind, std::string_view what,
                                              std::string_view module) {
  Key key{kind, std::string(what), std::string(module)};
  auto [it, added] = key_index_.try_emplace(key, static_cast<int32_t>(keys_.size()));
  if (added) keys_.push_back(std::move(key));
  return it->second;
}

void RequestBreakdownAccumulator::Add(const Trace& part, const MappingResult& mapping,
                                      const PartRanges* ranges) {
  const std::vector<Range>& rs = part.ranges;
  // Request ranges of the part (a request name is looked up once per string).
  absl::flat_hash_map<StringId, bool> is_request;
  std::vector<int32_t> requests;
  for (size_t i = 0; i < rs.size(); ++i) {
    auto [it, added] = is_request.try_emplace(rs[i].name, false);
    if (added) it->second = !RequestKey(part.strings.Get(rs[i].name)).empty();
    if (it->second) requests.push_back(static_cast<int32_t>(i));
  }
  if (requests.empty()) return;

  int64_t threads = 0;
  const std::vector<int32_t> parent = RangeParents(part, &threads);
  // One step annotated twice (SGLang's step[...] around vLLM-style execute_...): a request
  // range inside another of the same key on its thread is that request, not another.
  std::erase_if(requests, [&](int32_t i) {
    const std::string_view key = RequestKey(part.strings.Get(rs[i].name));
    for (int32_t p = parent[i]; p >= 0; p = parent[p]) {
      if (is_request[rs[p].name] && RequestKey(part.strings.Get(rs[p].name)) == key) return true;
    }
    return false;
  });
  if (requests.empty()) return;
  const ModuleAttribution modules = AttributeModules(part);
  const std::vector<bool> operators = OperatorRanges(part);

  // Outermost non-request ranges with a payload: the candidates to serve a request.
  absl::flat_hash_map<int64_t, std::vector<int32_t>> by_payload;
  for (size_t j = 0; j < rs.size(); ++j) {
    if (rs[j].payload == kNone || parent[j] >= 0 || is_request[rs[j].name]) continue;
    by_payload[rs[j].payload].push_back(static_cast<int32_t>(j));
  }

  // This part's end: every GPU event and call of the part ends by it (a cut splits none).
  int64_t part_end = std::numeric_limits<int64_t>::min();
  for (const GpuEvent& g : part.gpu_events) part_end = std::max(part_end, g.end_ns());
  for (const ApiCall& c : part.api_calls) part_end = std::max(part_end, c.end_ns());
  for (size_t i = 0; i < rs.size(); ++i) {
    part_end = std::max(part_end, PartRanges::EndsHere(ranges, i) ? rs[i].end_ns()
                                                                    : rs[i].start_ns);
  }

  // Requests and their services in this part; services indexed by (process, thread).
  struct Held {
    State* state;
    int64_t limit;
    bool ends_here;
  };
  std::vector<Held> held;
  struct ThreadService {
    int64_t start, end;
    State* state;
  };
  absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<ThreadService>> by_thread;
  for (int32_t i : requests) {
    const Range& r = rs[i];
    const int64_t id = PartRanges::IdOf(ranges, i);
    auto [it, added] = open_.try_emplace(id);
    State& st = it->second;
    if (added) {
      st.record.name = std::string(part.strings.Get(r.name));
      st.record.key = std::string(RequestKey(st.record.name));
      st.record.start_ns = r.start_ns;
      st.record.dur_ns = r.dur_ns;
      st.record.process = r.process;
      st.record.thread = r.thread;
      st.record.payload = r.payload;
      st.cursor = r.start_ns;
    }
    st.services.clear();
    st.events.clear();
    if (r.payload != kNone) {
      if (auto p = by_payload.find(r.payload); p != by_payload.end()) {
        for (int32_t j : p->second) {
          const Range& s = rs[j];
          if (s.process != r.process || s.start_ns < r.start_ns || s.end_ns() > r.end_ns()) {
            continue;
          }
          st.services.push_back({s.process, s.thread, s.start_ns, s.end_ns()});
        }
      }
    }
    if (!st.services.empty()) {
      st.record.joined = true;
    } else if (r.payload == kNone || (added && PartRanges::EndsHere(ranges, i))) {
      // No payload, or the whole request is in this part and nothing carries its payload:
      // it serves itself.
      st.services.push_back({r.process, r.thread, r.start_ns, r.end_ns()});
    }
    for (const Service& s : st.services) {
      if (st.service_start == kNone || s.start < st.service_start) st.service_start = s.start;
      by_thread[{s.process, s.thread}].push_back({s.start, s.end, &st});
      // A graph capture merge puts the launch copies of a replayed graph on the replay
      // thread of its launch's thread, inside the launch call's time (trace.h).
      by_thread[{s.process, ReplayThread(s.thread)}].push_back({s.start, s.end, &st});
    }
    const bool ends_here = PartRanges::EndsHere(ranges, i);
    held.push_back({&st, ends_here ? r.end_ns() : part_end, ends_here});
  }
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(),
              [](const ThreadService& a, const ThreadService& b) { return a.start < b.start; });
  }

  // GPU events by their launch call's thread and time.
  for (size_t e = 0; e < part.gpu_events.size(); ++e) {
    const int32_t la = mapping.events[e].launch_api;
    if (la < 0) continue;
    const ApiCall& call = part.api_calls[la];
    auto it = by_thread.find({call.process, call.thread});
    if (it == by_thread.end()) continue;
    const std::vector<ThreadService>& list = it->second;
    auto up = std::upper_bound(
        list.begin(), list.end(), call.start_ns,
        [](int64_t t, const ThreadService& s) { return t < s.start; });
    // Services on one thread overlap only by nesting: a few look-backs find them all.
    int looked = 0;
    State* last = nullptr;
    for (auto s = up; s != list.begin() && looked < 64; ++looked) {
      --s;
      if (call.start_ns <= s->end && s->state != last) {
        s->state->events.push_back(static_cast<int32_t>(e));
        last = s->state;
      }
    }
  }

  // Each thread's innermost-range segments, built for service threads only.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<Segment>> segments;
  {
    absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<int32_t>> on_thread;
    for (size_t i = 0; i < rs.size(); ++i) {
      auto key = std::make_pair(rs[i].process, rs[i].thread);
      if (!IsReplayThread(rs[i].thread) && by_thread.contains(key)) {
        on_thread[key].push_back(static_cast<int32_t>(i));
      }
    }
    for (auto& [key, list] : on_thread) {
      std::sort(list.begin(), list.end(), [&](int32_t a, int32_t b) {
        if (rs[a].start_ns != rs[b].start_ns) return rs[a].start_ns < rs[b].start_ns;
        if (rs[a].dur_ns != rs[b].dur_ns) return rs[a].dur_ns > rs[b].dur_ns;
        return a < b;
      });
      segments[key] = InnermostSegments(rs, list);
    }
  }

  std::vector<int32_t> range_key(rs.size(), -1);
  auto module_of = [&](int32_t r) -> std::string_view {
    const int32_t m = r < 0 ? -1 : modules.module_of[r];
    if (m < 0 || !modules.names[m]) return "";
    return modules.names[m]->name;
  };
  auto range_component = [&](int32_t r) {
    if (range_key[r] >= 0) return range_key[r];
    const bool is_operator = operators[r] && !modules.names[r];
    if (is_operator) {
      std::optional<LayerType> t = ClassifyOperatorName(part.strings.Get(rs[r].name));
      range_key[r] = KeyIndex(Kind::kHostOperator, LayerTypeName(t.value_or(LayerType::kOther)),
                              module_of(r));
    } else {
      range_key[r] = KeyIndex(Kind::kHostGap, "", module_of(r));
    }
    return range_key[r];
  };
  const int32_t no_range = KeyIndex(Kind::kHostGap, "", "");
  const int32_t queue = KeyIndex(Kind::kQueue, "", "");
  const int32_t wait = KeyIndex(Kind::kGpuWait, "", "");

  auto add = [](State& st, int32_t key, int64_t ns) {
    if (ns > 0) st.ns[key] += ns;
  };
  // [a, b) with no GPU work of the request running or launched: by the innermost range
  // on the service thread open at each instant.
  auto host = [&](State& st, int64_t a, int64_t b) {
    for (const Service& s : st.services) {
      if (a >= b) return;
      if (s.end <= a) continue;
      if (s.start > a) {
        const int64_t to = std::min(b, s.start);
        add(st, no_range, to - a);
        a = to;
        if (a >= b) return;
      }
      const int64_t until = std::min(b, s.end);
      const std::vector<Segment>& segs = segments[{s.process, s.thread}];
      auto seg = std::upper_bound(segs.begin(), segs.end(), a,
                                  [](int64_t t, const Segment& x) { return t < x.end; });
      for (; seg != segs.end() && seg->start < until && a < until; ++seg) {
        if (seg->start > a) {
          add(st, no_range, seg->start - a);
          a = seg->start;
        }
        const int64_t to = std::min(until, seg->end);
        add(st, range_component(seg->range), to - a);
        a = to;
      }
      if (a < until) {
        add(st, no_range, until - a);
        a = until;
      }
    }
    if (a < b) add(st, no_range, b - a);
  };
  // [a, b) with no GPU work of the request running; its next event launched at `launch`.
  auto idle = [&](State& st, int64_t a, int64_t b, int64_t launch) {
    const int64_t queued_until = st.service_start == kNone ? b : st.service_start;
    if (a < queued_until) {
      const int64_t to = std::min(b, queued_until);
      add(st, queue, to - a);
      a = to;
    }
    if (a >= b) return;
    const int64_t host_end = std::clamp(launch, a, b);
    host(st, a, host_end);
    add(st, wait, b - host_end);
  };

  for (Held& h : held) {
    State& st = *h.state;
    std::sort(st.services.begin(), st.services.end(),
              [](const Service& a, const Service& b) { return a.start < b.start; });
    std::sort(st.events.begin(), st.events.end(), [&](int32_t a, int32_t b) {
      const GpuEvent& x = part.gpu_events[a];
      const GpuEvent& y = part.gpu_events[b];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : a < b;
    });
    st.record.gpu_events += static_cast<int64_t>(st.events.size());
    if (h.ends_here) {  // the request lasts until its last GPU event ends
      for (int32_t e : st.events) h.limit = std::max(h.limit, part.gpu_events[e].end_ns());
      st.record.extent_ns = h.limit - st.record.start_ns;
    }
    for (int32_t e : st.events) {
      const GpuEvent& g = part.gpu_events[e];
      if (g.start_ns > st.cursor) {
        idle(st, st.cursor, g.start_ns, part.api_calls[mapping.events[e].launch_api].start_ns);
      }
      const int64_t busy_end = std::min(g.end_ns(), h.limit);
      if (busy_end <= st.cursor) continue;
      const int32_t r = mapping.events[e].range;
      const bool copy = g.kind != GpuEventKind::kKernel;
      std::string what = r >= 0 && !copy ? "op:" + std::string(part.strings.Get(rs[r].name))
                                         : std::string(LayerTypeName(
                                               copy ? LayerType::kMemcpy
                                                    : ClassifyKernelName(part.strings.Get(g.name))));
      add(st, KeyIndex(copy ? Kind::kCopy : Kind::kGpu, what, module_of(r)),
          busy_end - std::max(st.cursor, g.start_ns));
      st.cursor = busy_end;
    }
    if (h.limit > st.cursor) {
      idle(st, st.cursor, h.limit, kForever);
      st.cursor = h.limit;
    }
  }
  for (int32_t i : requests) {
    if (!PartRanges::EndsHere(ranges, i)) continue;
    auto it = open_.find(PartRanges::IdOf(ranges, i));
    State& st = it->second;
    if (!st.record.joined) {  // a payload that nothing served: its wait was not a queue
      if (auto q = st.ns.find(queue); q != st.ns.end()) {
        st.ns[no_range] += q->second;
        st.ns.erase(queue);
      }
    }
    done_.push_back(std::move(st));
    open_.erase(it);
  }
}

RequestBreakdowns RequestBreakdownAccumulator::Finish(
    const std::function<LayerType(std::string_view)>& operator_type) {
  RequestBreakdowns out;
  absl::flat_hash_map<std::tuple<uint8_t, uint8_t, std::string>, int32_t> final_index;
  std::vector<int32_t> remap(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k) {
    const Key& key = keys_[k];
    LayerType type = LayerType::kOther;
    if (key.what.rfind("op:", 0) == 0) {
      type = operator_type(std::string_view(key.what).substr(3));
    } else if (std::optional<LayerType> t = ParseLayerType(key.what)) {
      type = *t;
    }
    auto [it, added] = final_index.try_emplace(
        {static_cast<uint8_t>(key.kind), static_cast<uint8_t>(type), key.module},
        static_cast<int32_t>(out.components.size()));
    if (added) out.components.push_back({key.kind, type, key.module});
    remap[k] = it->second;
  }
  out.requests.reserve(done_.size());
  for (State& st : done_) {
    RequestRecord& r = out.requests.emplace_back(std::move(st.record));
    absl::flat_hash_map<int32_t, int64_t> merged;
    for (const auto& [k, ns] : st.ns) merged[remap[k]] += ns;
    r.parts.assign(merged.begin(), merged.end());
    std::sort(r.parts.begin(), r.parts.end());
  }
  done_.clear();
  // Canonical order, whatever parts the trace came in.
  std::sort(out.requests.begin(), out.requests.end(),
            [](const RequestRecord& a, const RequestRecord& b) {
              return std::tie(a.start_ns, a.dur_ns, a.thread, a.name) <
                     std::tie(b.start_ns, b.dur_ns, b.thread, b.name);
            });
  return out;
}

}  // namespace opmap::analysis
