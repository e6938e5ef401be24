#include "analysis/summary/request_breakdown.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "analysis/serving/request_key.h"
#include "analysis/summary/host_ranges.h"
#include "analysis/summary/modules.h"

namespace opmap::analysis {
namespace {

using Kind = RequestComponentKind;
constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
constexpr std::string_view kArrivalName = "arrival";

using Segment = RangeSegment;

// `ranges`: one thread's, by start, longer first on ties. Ranges that overlap without
// nesting (start/end ranges) give way to the later one. Segment::range indexes `ranges`.
template <typename R>
std::vector<Segment> InnermostSegments(const std::vector<R>& ranges) {
  std::vector<Segment> out;
  out.reserve(2 * ranges.size());  // a range gives at most its head and its tail after a child
  std::vector<int32_t> open;
  int64_t cur = std::numeric_limits<int64_t>::min();
  auto emit = [&](int64_t a, int64_t b, int32_t r) {
    if (b > a) out.push_back({a, b, r});
  };
  auto close_until = [&](int64_t t) {
    while (!open.empty() && ranges[open.back()].end <= t) {
      const int64_t e = ranges[open.back()].end;
      emit(cur, e, open.back());
      cur = std::max(cur, e);
      open.pop_back();
    }
  };
  for (size_t r = 0; r < ranges.size(); ++r) {
    const int64_t s = ranges[r].start;
    close_until(s);
    if (!open.empty()) emit(cur, s, open.back());
    cur = std::max(cur, s);
    open.push_back(static_cast<int32_t>(r));
  }
  close_until(kForever);
  return out;
}

bool HasRequestRange(const Trace& part) {
  absl::flat_hash_map<StringId, bool> seen;
  for (const Range& r : part.ranges) {
    auto [it, added] = seen.try_emplace(r.name, false);
    if (added && !RequestKey(part.strings.Get(r.name)).empty()) return true;
  }
  return false;
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
  if (!HasRequestRange(part)) return;
  int64_t threads = 0;
  std::vector<uint32_t> order;
  const std::vector<int32_t> parent = RangeParents(part, &threads, &order);
  Add(part, mapping, ranges, parent, order, AttributeModules(part, order));
}

void RequestBreakdownAccumulator::Add(const Trace& part, const MappingResult& mapping,
                                      const PartRanges* ranges,
                                      const std::vector<int32_t>& parent,
                                      const std::vector<uint32_t>& order,
                                      const ModuleAttribution& modules) {
  const std::vector<Range>& rs = part.ranges;
  // Request ranges of the part (a request name is looked up once per string, in a table
  // by string id: this pass reads every range of the session).
  std::vector<int8_t> request_name(part.strings.size(), -1);
  auto is_request_name = [&](StringId name) {
    int8_t& known = request_name[name];
    if (known < 0) known = RequestKey(part.strings.Get(name)).empty() ? 0 : 1;
    return known == 1;
  };
  std::vector<int32_t> requests;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (is_request_name(rs[i].name)) requests.push_back(static_cast<int32_t>(i));
  }
  if (requests.empty()) return;
  // One step annotated twice (SGLang's step[...] around vLLM-style execute_...): a request
  // range inside another of the same key and payload on its thread is that request, not
  // another. (Requests with their own ids — start/end ranges of overlapping requests on a
  // client thread — nest in time without being one.)
  std::erase_if(requests, [&](int32_t i) {
    const std::string_view key = RequestKey(part.strings.Get(rs[i].name));
    for (int32_t p = parent[i]; p >= 0; p = parent[p]) {
      if (is_request_name(rs[p].name) && rs[p].payload == rs[i].payload &&
          RequestKey(part.strings.Get(rs[p].name)) == key) {
        return true;
      }
    }
    return false;
  });
  if (requests.empty()) return;
  // The mapper's own, when it was given this part (else computed here).
  std::vector<bool> computed;
  if (mapping.operator_ranges.size() != rs.size()) computed = OperatorRanges(part);
  const std::vector<bool>& operators =
      mapping.operator_ranges.size() == rs.size() ? mapping.operator_ranges : computed;

  // Arrival marks (`arrival` ranges with a payload: the request id): the latest per
  // (process, id) waits for its request, across parts.
  for (const Range& r : rs) {
    if (r.payload == kNone || part.strings.Get(r.name) != kArrivalName) continue;
    auto [it, added] = arrivals_.try_emplace({r.process, r.payload}, r.start_ns);
    if (!added) {
      it->second = std::max(it->second, r.start_ns);
    } else if (arrivals_.size() > kMaxWaitingArrivals) {
      arrivals_.erase(it);
      ++arrivals_dropped_;
    }
  }

  // Outermost non-request ranges with a payload: the candidates to serve a request.
  absl::flat_hash_map<int64_t, std::vector<int32_t>> by_payload;
  for (size_t j = 0; j < rs.size(); ++j) {
    if (rs[j].payload == kNone || parent[j] >= 0 || is_request_name(rs[j].name)) continue;
    by_payload[rs[j].payload].push_back(static_cast<int32_t>(j));
  }

  // Requests and their services in this part, indexed by (process, thread).
  struct ThreadService {
    int64_t start, end;
    State* state;
    Served* served;
    int64_t max_end = 0;  // the latest end among this and the services before it
  };
  absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<ThreadService>> by_thread;
  auto index = [&](State& st, Served& served, const Service& s) {
    by_thread[{s.process, s.thread}].push_back({s.start, s.end, &st, &served});
    // A graph capture merge puts the launch copies of a replayed graph on the replay
    // thread of its launch's thread, inside the launch call's time (trace.h).
    by_thread[{s.process, ReplayThread(s.thread)}].push_back({s.start, s.end, &st, &served});
  };
  std::vector<State*> ending;
  for (int32_t i : requests) {
    const Range& r = rs[i];
    auto [it, added] = open_.try_emplace(PartRanges::IdOf(ranges, i));
    State& st = it->second;
    if (added) {
      st.record.name = std::string(part.strings.Get(r.name));
      st.record.key = std::string(RequestKey(st.record.name));
      st.record.start_ns = r.start_ns;
      st.record.dur_ns = r.dur_ns;
      st.record.process = r.process;
      st.record.thread = r.thread;
      st.record.payload = r.payload;
      st.own.services.push_back({r.process, r.thread, r.start_ns, r.end_ns()});
      // Marked arrival: the request lasts from it, queued until its range starts.
      if (r.payload != kNone) {
        if (auto a = arrivals_.find({r.process, r.payload});
            a != arrivals_.end() && a->second <= r.start_ns) {
          st.record.start_ns = a->second;
          st.record.arrival_marked = true;
          arrivals_.erase(a);
        }
      }
    }
    index(st, st.own, st.own.services.front());
    if (r.payload != kNone) {
      if (auto p = by_payload.find(r.payload); p != by_payload.end()) {
        for (int32_t j : p->second) {
          const Range& s = rs[j];
          if (s.process != r.process || s.start_ns < r.start_ns || s.end_ns() > r.end_ns()) {
            continue;
          }
          const Service service{s.process, s.thread, s.start_ns, s.end_ns()};
          if (st.joined.service_ids.insert(PartRanges::IdOf(ranges, j)).second) {
            st.joined.services.push_back(service);
          }
          index(st, st.joined, service);
        }
      }
    }
    if (PartRanges::EndsHere(ranges, i)) {
      st.ending = true;
      ending.push_back(&st);
    }
  }
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(),
              [](const ThreadService& a, const ThreadService& b) { return a.start < b.start; });
    int64_t max_end = std::numeric_limits<int64_t>::min();
    for (ThreadService& s : list) s.max_end = max_end = std::max(max_end, s.end);
  }
  // Every service on `key` that overlaps [start, end], each (state, way) once: back from
  // the last that starts by `end` until none before can reach `start`.
  auto services_on = [&](int64_t process, int64_t thread) -> std::vector<ThreadService>* {
    auto it = by_thread.find({process, thread});
    return it == by_thread.end() ? nullptr : &it->second;
  };
  auto each_service = [&](const std::vector<ThreadService>* on_thread, int64_t start,
                          int64_t end, const auto& fn) {
    if (on_thread == nullptr) return;
    const std::vector<ThreadService>& list = *on_thread;
    auto up = std::upper_bound(list.begin(), list.end(), end,
                               [](int64_t t, const ThreadService& s) { return t < s.start; });
    Served* last = nullptr;
    for (auto s = up; s != list.begin();) {
      --s;
      if (s->max_end < start) break;
      if (s->end < start || s->served == last) continue;
      // A request its payload joined is served so: what its own thread did is not needed.
      if (s->served == &s->state->own && !s->state->joined.services.empty()) continue;
      fn(*s);
      last = s->served;
    }
  };

  absl::flat_hash_map<StringId, LayerType> operator_type, kernel_type;
  auto type_of_operator = [&](StringId name) {
    auto [it, added] = operator_type.try_emplace(name, LayerType::kOther);
    if (added) it->second = ClassifyOperatorName(part.strings.Get(name)).value_or(LayerType::kOther);
    return it->second;
  };
  auto type_of_kernel = [&](StringId name) {
    auto [it, added] = kernel_type.try_emplace(name, LayerType::kOther);
    if (added) it->second = ClassifyKernelName(part.strings.Get(name));
    return it->second;
  };
  auto module_of = [&](int32_t r) -> std::string_view {
    const int32_t m = r < 0 ? -1 : modules.module_of[r];
    if (m < 0 || !modules.names[m]) return "";
    return modules.names[m]->name;
  };
  // Component keys by (kind, operator or kernel name, module range) within the part, so a
  // key's strings are built once per distinct component, not per range or event.
  absl::flat_hash_map<std::tuple<uint8_t, StringId, int32_t>, int32_t> part_keys;
  // Module names as small ids (every instance of a module is one id): -1 none.
  absl::flat_hash_map<std::string_view, int32_t> module_ids;
  std::vector<int32_t> module_id_of(rs.size(), -2);
  auto module_id = [&](int32_t r) {
    const int32_t m = r < 0 ? -1 : modules.module_of[r];
    if (m < 0 || !modules.names[m]) return -1;
    int32_t& id = module_id_of[m];
    if (id == -2) {
      id = module_ids.try_emplace(modules.names[m]->name, static_cast<int32_t>(module_ids.size()))
               .first->second;
    }
    return id;
  };
  // `tag`: the kind, and 0x80 where `name` is an operator's (else a kernel's or none).
  auto cached_key = [&](uint8_t tag, StringId name, int32_t r, const auto& make) {
    auto [it, added] = part_keys.try_emplace({tag, name, module_id(r)}, -1);
    if (added) it->second = make();
    return it->second;
  };
  // The host component of a range of the part (its kind by operator or not, its module).
  std::vector<int32_t> key_of_range(rs.size(), -1);
  const std::function<int32_t(int32_t)> range_key = [&](int32_t ri) {
    int32_t& key = key_of_range[ri];
    if (key >= 0) return key;
    const Range& r = rs[ri];
    if (operators[ri] && !modules.names[ri]) {
      key = cached_key(static_cast<uint8_t>(Kind::kHostOperator) | 0x80, r.name, ri, [&] {
        return KeyIndex(Kind::kHostOperator, LayerTypeName(type_of_operator(r.name)),
                        module_of(ri));
      });
    } else {
      key = cached_key(static_cast<uint8_t>(Kind::kHostGap), kEmptyString, ri,
                       [&] { return KeyIndex(Kind::kHostGap, "", module_of(ri)); });
    }
    return key;
  };

  // A trace given whole: each serving thread's innermost-range segments once, shared by
  // its requests (no range is copied per request), with keys only for the segments some
  // request's host time falls in. A trace in parts holds each request's ranges instead.
  ThreadSegments shared;
  if (ranges == nullptr) {
    struct Span {
      int64_t start, end;
      int32_t index;
    };
    std::vector<Span> spans;
    for (size_t k = 0; k < order.size();) {
      const Range& first = rs[order[k]];
      size_t j = k;
      while (j < order.size() && rs[order[j]].process == first.process &&
             rs[order[j]].thread == first.thread) {
        ++j;
      }
      if (!IsReplayThread(first.thread) && by_thread.contains({first.process, first.thread})) {
        spans.clear();
        spans.reserve(j - k);
        for (size_t m = k; m < j; ++m) {
          const Range& r = rs[order[m]];
          spans.push_back({r.start_ns, r.end_ns(), static_cast<int32_t>(order[m])});
        }
        std::vector<Segment> segs = InnermostSegments(spans);
        for (Segment& seg : segs) seg.range = spans[seg.range].index;
        shared[{first.process, first.thread}] = std::move(segs);
      }
      k = j;
    }
  }

  // Ranges on service threads, each kept once: in the part it ends in, or in the part its
  // request ends in if it goes on past that. In sweep order, so that a request held in
  // one part needs no sort when it closes.
  // `order` groups a thread's ranges: its services and each request's held list are looked
  // up once per thread.
  const std::vector<ThreadService>* on_thread = nullptr;
  std::pair<int64_t, int64_t> thread_of_list = {kNone, kNone};
  absl::flat_hash_map<Served*, std::vector<HeldRange>*> held_on_thread;
  // (A trace given whole keeps no ranges per request: the shared segments serve it.)
  static const std::vector<uint32_t> kNoRanges;
  for (uint32_t i : ranges == nullptr ? kNoRanges : order) {
    const Range& r = rs[i];
    if (IsReplayThread(r.thread)) continue;
    if (std::make_pair(r.process, r.thread) != thread_of_list) {
      thread_of_list = {r.process, r.thread};
      on_thread = services_on(r.process, r.thread);
      held_on_thread.clear();
    }
    int32_t key = -1;
    each_service(on_thread, r.start_ns, r.end_ns(), [&](const ThreadService& s) {
      if (!PartRanges::EndsHere(ranges, i) && !s.state->ending) return;
      if (key < 0) key = range_key(static_cast<int32_t>(i));
      auto [h, added] = held_on_thread.try_emplace(s.served, nullptr);
      if (added) h->second = &s.served->ranges[{r.process, r.thread}];
      std::vector<HeldRange>& held = *h->second;
      const bool again = !held.empty() && held.back().start == r.start_ns &&
                         held.back().end == r.end_ns() && held.back().key == key;
      if (!again) held.push_back({r.start_ns, r.end_ns(), key});
    });
  }
  // GPU events by their launch call's thread and time (an event is in one part only).
  for (size_t e = 0; e < part.gpu_events.size(); ++e) {
    const int32_t la = mapping.events[e].launch_api;
    if (la < 0) continue;
    const ApiCall& call = part.api_calls[la];
    int32_t key = -1;
    each_service(services_on(call.process, call.thread), call.start_ns, call.start_ns,
                 [&](const ThreadService& s) {
      const GpuEvent& g = part.gpu_events[e];
      if (key < 0) {
        const int32_t r = mapping.events[e].range;
        const bool copy = g.kind != GpuEventKind::kKernel;
        const Kind kind = copy ? Kind::kCopy : Kind::kGpu;
        const bool by_operator = r >= 0 && !copy;
        const uint8_t tag = static_cast<uint8_t>(kind) | (by_operator ? 0x80 : 0);
        key = cached_key(tag, by_operator ? rs[r].name : g.name, r, [&] {
          const std::string what =
              by_operator ? "op:" + std::string(part.strings.Get(rs[r].name))
                          : std::string(LayerTypeName(copy ? LayerType::kMemcpy
                                                           : type_of_kernel(g.name)));
          return KeyIndex(kind, what, module_of(r));
        });
      }
      s.served->events.push_back({g.start_ns, g.end_ns(), call.start_ns, key});
    });
  }
  for (State* st : ending) {
    Close(*st, ranges == nullptr ? &shared : nullptr, key_of_range, range_key);
    done_.push_back(std::move(*st));
  }
  for (int32_t i : requests) {
    if (PartRanges::EndsHere(ranges, i)) open_.erase(PartRanges::IdOf(ranges, i));
  }
}

// The sweep over a request's extent, once all of it is held.
void RequestBreakdownAccumulator::Close(State& st, const ThreadSegments* shared,
                                        const std::vector<int32_t>& known_keys,
                                        const std::function<int32_t(int32_t)>& range_key) {
  RequestRecord& rec = st.record;
  rec.joined = !st.joined.services.empty();
  Served& served = rec.joined ? st.joined : st.own;
  const int64_t range_start = st.own.services.front().start;
  std::sort(served.services.begin(), served.services.end(),
            [](const Service& a, const Service& b) { return a.start < b.start; });
  std::stable_sort(served.events.begin(), served.events.end(),
                   [](const HeldEvent& a, const HeldEvent& b) { return a.start < b.start; });
  rec.gpu_events = static_cast<int64_t>(served.events.size());
  int64_t limit = range_start + rec.dur_ns;  // to its last GPU event's end
  for (const HeldEvent& e : served.events) limit = std::max(limit, e.end);
  rec.extent_ns = limit - rec.start_ns;
  const int64_t service_start = served.services.front().start;

  // Each service thread's innermost-range segments: the part's (Segment::range a range of
  // the part, keyed by range_key), or built from the ranges held (Segment::range a key).
  ThreadSegments held_segments;
  const ThreadSegments& segments = shared != nullptr ? *shared : held_segments;
  auto key_of = [&](int32_t range) {
    if (shared == nullptr) return range;
    const int32_t known = known_keys[range];
    return known >= 0 ? known : range_key(range);
  };
  for (auto& [thread, held] : served.ranges) {
    auto before = [](const HeldRange& a, const HeldRange& b) {
      if (a.start != b.start) return a.start < b.start;
      if (a.end != b.end) return a.end > b.end;
      return a.key < b.key;
    };
    // Held in sweep order already when the request lay in one part.
    if (!std::is_sorted(held.begin(), held.end(), before)) {
      std::sort(held.begin(), held.end(), before);
    }
    std::vector<Segment> segs = InnermostSegments(held);
    for (Segment& seg : segs) seg.range = held[seg.range].key;
    held_segments[thread] = std::move(segs);
  }

  if (no_range_ < 0) {
    no_range_ = KeyIndex(Kind::kHostGap, "", "");
    queue_ = KeyIndex(Kind::kQueue, "", "");
    wait_ = KeyIndex(Kind::kGpuWait, "", "");
  }
  const int32_t no_range = no_range_, queue = queue_, wait = wait_;
  std::vector<int64_t> ns(keys_.size(), 0);  // by key (keys made meanwhile grow it)
  auto add = [&](int32_t key, int64_t n) {
    if (n <= 0) return;
    if (static_cast<size_t>(key) >= ns.size()) ns.resize(keys_.size(), 0);
    ns[key] += n;
  };
  // [a, b) with no GPU work of the request running or launched: by the innermost range
  // on the service thread open at each instant.
  auto host = [&](int64_t a, int64_t b) {
    for (const Service& s : served.services) {
      if (a >= b) return;
      if (s.end <= a) continue;
      if (s.start > a) {
        const int64_t to = std::min(b, s.start);
        add(no_range, to - a);
        a = to;
        if (a >= b) return;
      }
      const int64_t until = std::min(b, s.end);
      static const std::vector<Segment> kNoSegments;
      auto found = segments.find({s.process, s.thread});
      const std::vector<Segment>& segs = found != segments.end() ? found->second : kNoSegments;
      auto seg = std::upper_bound(segs.begin(), segs.end(), a,
                                  [](int64_t t, const Segment& x) { return t < x.end; });
      for (; seg != segs.end() && seg->start < until && a < until; ++seg) {
        if (seg->start > a) {
          add(no_range, seg->start - a);
          a = seg->start;
        }
        const int64_t to = std::min(until, seg->end);
        add(key_of(seg->range), to - a);
        a = to;
      }
      if (a < until) {
        add(no_range, until - a);
        a = until;
      }
    }
    if (a < b) add(no_range, b - a);
  };
  // [a, b) with no GPU work of the request running; the earliest pending launch at `launch`.
  auto idle = [&](int64_t a, int64_t b, int64_t launch) {
    if (a < service_start) {
      const int64_t to = std::min(b, service_start);
      add(queue, to - a);
      a = to;
    }
    if (a >= b) return;
    const int64_t host_end = std::clamp(launch, a, b);
    host(a, host_end);
    add(wait, b - host_end);
  };

  // Per event, the earliest launch among it and the events after it: what is pending in
  // the gap before it.
  const std::vector<HeldEvent>& events = served.events;
  std::vector<int64_t> pending(events.size() + 1, kForever);
  for (size_t j = events.size(); j-- > 0;) pending[j] = std::min(pending[j + 1], events[j].launch);
  int64_t cursor = rec.start_ns;
  for (size_t j = 0; j < events.size(); ++j) {
    const HeldEvent& e = events[j];
    if (e.start > cursor) idle(cursor, e.start, pending[j]);
    if (e.end <= cursor) continue;
    add(e.key, e.end - std::max(cursor, e.start));
    cursor = e.end;
  }
  if (limit > cursor) idle(cursor, limit, kForever);
  st.ns.clear();
  for (size_t k = 0; k < ns.size(); ++k) {
    if (ns[k] > 0) st.ns.emplace_back(static_cast<int32_t>(k), ns[k]);
  }
  served = Served();
  (rec.joined ? st.own : st.joined) = Served();
}

RequestBreakdowns RequestBreakdownAccumulator::Finish(
    const std::function<LayerType(std::string_view)>& operator_type) {
  RequestBreakdowns out;
  out.arrival_marks_dropped = arrivals_dropped_;
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
    for (const auto& [k, ns] : st.ns) r.parts.emplace_back(remap[k], ns);
    // Keys that resolved to one component (two operators of one layer type) merge.
    std::sort(r.parts.begin(), r.parts.end());
    size_t w = 0;
    for (size_t i = 0; i < r.parts.size(); ++i) {
      if (w > 0 && r.parts[w - 1].first == r.parts[i].first) {
        r.parts[w - 1].second += r.parts[i].second;
      } else {
        r.parts[w++] = r.parts[i];
      }
    }
    r.parts.resize(w);
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

absl::StatusOr<RequestRecord> FindRequest(const Trace& trace, uint64_t request_id) {
  if (request_id < (uint64_t{1} << 63)) {
    RequestBreakdownAccumulator acc;
    acc.Add(trace, MapGpuEvents(trace));
    RequestBreakdowns all = acc.Finish([](std::string_view) { return LayerType::kOther; });
    for (RequestRecord& r : all.requests) {
      if (r.payload == static_cast<int64_t>(request_id)) return std::move(r);
    }
  }
  return absl::NotFoundError(absl::StrCat("no request range carries payload ", request_id));
}

}  // namespace opmap::analysis
