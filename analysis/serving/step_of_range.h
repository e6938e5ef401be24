// The serving step each host range ran in: the step annotation range (step_annotation.h)
// that encloses it in time on the thread that ran it. docs/metrics.md ("Serving step
// annotations", "FLOPs, bytes and arithmetic intensity per operator instance") says what
// reads it: a paged-attention instance is costed from its step's per-request sums.
//
// Which thread: an eager trace's operator runs on the thread whose step range encloses it.
// A graph capture merge (analysis/graphs/capture_merge.h) places the capture-time operator
// copies on ReplayThread(t) (analysis/model/trace.h), inside the GraphLaunch call that t
// issued; t's step range encloses that call, so a range on a replay thread takes its step
// from the thread t with ReplayThread(t) == its thread (same process).
//
// Which step: steps nest (vLLM opens `execute_…` just after `ProfilerStep#N` begins; under
// TraceLens' SGLang 0.5.9 patch `execute_…` encloses `step[…]`) and describe the same step
// to different depths, so the innermost enclosing step that carries the attention sums
// (HasAttentionSums) is taken, else the innermost enclosing step.
//
// Example:
//   StepOfRange steps(trace);
//   if (const StepAnnotation* s = steps.StepFor(range_index)) { ... s->decode.query_kv ... }
//
// Thread safety: immutable after construction; the trace must outlive it and not change.
#ifndef OPMAP_ANALYSIS_SERVING_STEP_OF_RANGE_H_
#define OPMAP_ANALYSIS_SERVING_STEP_OF_RANGE_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analysis/model/trace.h"
#include "analysis/serving/step_annotation.h"

namespace opmap::analysis {

class StepOfRange {
 public:
  explicit StepOfRange(const Trace& trace);

  // The index (into trace.ranges) of the step range `range` ran in (see the file comment),
  // or -1 when no step range encloses it. A step range is not in its own step.
  int32_t StepRange(int32_t range) const;

  // The parsed step `range` ran in, or nullptr. Valid as long as this object.
  const StepAnnotation* StepFor(int32_t range) const;

  // Number of step ranges in the trace.
  size_t step_count() const { return steps_.size(); }

 private:
  struct Step {
    int32_t range = -1;
    int32_t parent = -1;  // index into steps_ of the innermost step enclosing this one
    StepAnnotation parsed;
    bool sums = false;    // HasAttentionSums(parsed)
  };

  // Index into steps_ of the step `range` ran in, or -1.
  int32_t StepIndex(int32_t range) const;

  const Trace& trace_;
  std::vector<Step> steps_;
  // (process, thread) → indices into steps_, by start time.
  std::map<std::pair<int64_t, int64_t>, std::vector<int32_t>> by_thread_;
  // (process, ReplayThread(thread)) → the real threads whose copies sit there.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> replay_origin_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SERVING_STEP_OF_RANGE_H_
