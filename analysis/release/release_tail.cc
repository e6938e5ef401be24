#include "analysis/release/release_tail.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_format.h"

namespace opmap::analysis {
namespace {

const TailExplanation* P99Of(const Arm& arm, const std::string& key) {
  for (const TailExplanation& t : arm.tails) {
    if (t.key == key && t.quantile == 0.99 && t.unavailable.empty()) return &t;
  }
  return nullptr;
}

std::string Describe(const ComponentExcess& c) {
  std::string what(RequestComponentPhrase(c.kind));
  return c.label.empty() ? what : absl::StrFormat("%s in `%s`", what, c.label);
}

}  // namespace

std::vector<TailGrowth> CompareTails(const Arm& baseline, const Arm& candidate,
                                     std::string* unavailable) {
  std::vector<TailGrowth> out;
  for (const TailExplanation& c : candidate.tails) {
    if (c.quantile != 0.99 || !c.unavailable.empty()) continue;
    const TailExplanation* b = P99Of(baseline, c.key);
    if (b == nullptr) continue;
    std::map<std::pair<RequestComponentKind, std::string>, ComponentExcess> rows;
    for (const ComponentExcess& e : c.by_module) {
      ComponentExcess& r = rows[{e.kind, e.label}];
      r.kind = e.kind;
      r.label = e.label;
      r.tail_mean_ns = e.tail_mean_ns;
    }
    for (const ComponentExcess& e : b->by_module) {
      ComponentExcess& r = rows[{e.kind, e.label}];
      r.kind = e.kind;
      r.label = e.label;
      r.band_mean_ns = e.tail_mean_ns;
    }
    TailGrowth g;
    g.key = c.key;
    const double gap = c.tail_mean_ns - b->tail_mean_ns;
    for (auto& [k, r] : rows) {
      r.excess_ns = r.tail_mean_ns - r.band_mean_ns;
      r.share = gap > 0 ? r.excess_ns / gap : 0;
      g.components.push_back(r);
    }
    std::stable_sort(g.components.begin(), g.components.end(),
                     [](const ComponentExcess& x, const ComponentExcess& y) {
                       return x.excess_ns > y.excess_ns;
                     });
    if (g.components.empty()) continue;
    g.largest = g.components.front();
    g.growth_ns = g.largest.excess_ns;
    g.sentence =
        g.growth_ns > 0
            ? absl::StrFormat("%s p99 tail: %s grew most, %+.2f ms per tail request (baseline "
                              "tail %.2f ms, candidate tail %.2f ms); the tails' means differ by "
                              "%+.2f ms",
                              c.key, Describe(g.largest), g.growth_ns / 1e6,
                              g.largest.band_mean_ns / 1e6, g.largest.tail_mean_ns / 1e6,
                              gap / 1e6)
            : absl::StrFormat("%s p99 tail: no component grew in the candidate's tail", c.key);
    out.push_back(std::move(g));
  }
  if (out.empty()) {
    *unavailable = candidate.tails.empty() || baseline.tails.empty()
                       ? "an arm's sessions hold no request breakdowns"
                       : "no request key has a p99 tail (20 requests or more) in both arms";
  }
  return out;
}

DocSection TailGrowthSection(const ReleaseInputs& in) {
  DocSection d;
  d.heading = "Tail latency";
  std::string unavailable;
  const std::vector<TailGrowth> growth = CompareTails(in.baseline, in.candidate, &unavailable);
  for (const auto& [name, arm] : {std::pair{"baseline", &in.baseline},
                                  std::pair{"candidate", &in.candidate}}) {
    for (const TailExplanation& t : arm->tails) {
      if (t.quantile == 0.99 && t.unavailable.empty()) {
        d.paragraphs.push_back(absl::StrFormat("%s: %s %s.", name, t.key, t.sentence));
      }
    }
  }
  if (growth.empty()) {
    d.paragraphs.push_back("unavailable: " + unavailable);
    return d;
  }
  for (const TailGrowth& g : growth) {
    d.paragraphs.push_back(g.sentence + ".");
    DocTable table;
    table.title = g.key + ": p99 tail per component, candidate against baseline";
    table.columns = {"kind", "module", "baseline tail ms", "candidate tail ms", "growth ms"};
    table.align_right = {false, false, true, true, true};
    for (size_t i = 0; i < g.components.size() && i < 8; ++i) {
      const ComponentExcess& c = g.components[i];
      table.rows.push_back({std::string(RequestComponentKindName(c.kind)),
                            c.label.empty() ? "-" : c.label,
                            absl::StrFormat("%.3f", c.band_mean_ns / 1e6),
                            absl::StrFormat("%.3f", c.tail_mean_ns / 1e6),
                            absl::StrFormat("%+.3f", c.excess_ns / 1e6)});
    }
    d.tables.push_back(std::move(table));
  }
  return d;
}

void WriteTailGrowthJson(const ReleaseInputs& in, text::JsonWriter& w) {
  std::string unavailable;
  const std::vector<TailGrowth> growth = CompareTails(in.baseline, in.candidate, &unavailable);
  w.Key("tail").BeginObject();
  if (growth.empty()) w.Field("unavailable", unavailable);
  w.Key("keys").BeginArray();
  for (const TailGrowth& g : growth) {
    w.BeginObject().Field("request", g.key).Field("sentence", g.sentence);
    w.Field("kind", RequestComponentKindName(g.largest.kind)).Field("module", g.largest.label);
    w.Field("baseline_tail_ms", g.largest.band_mean_ns / 1e6, 6);
    w.Field("candidate_tail_ms", g.largest.tail_mean_ns / 1e6, 6);
    w.Field("growth_ms", g.growth_ns / 1e6, 6);
    w.Key("components").BeginArray();
    for (size_t i = 0; i < g.components.size() && i < 8; ++i) {
      const ComponentExcess& c = g.components[i];
      w.BeginObject().Field("kind", RequestComponentKindName(c.kind)).Field("module", c.label);
      w.Field("baseline_tail_ms", c.band_mean_ns / 1e6, 6);
      w.Field("candidate_tail_ms", c.tail_mean_ns / 1e6, 6);
      w.Field("growth_ms", c.excess_ns / 1e6, 6).EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace opmap::analysis
