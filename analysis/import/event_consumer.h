// EventConsumer: where an importer that does not keep events (ImportKinetoEvents,
// StreamNsysEvents) hands them, one at a time, as it makes them.
#ifndef OPMAP_ANALYSIS_IMPORT_EVENT_CONSUMER_H_
#define OPMAP_ANALYSIS_IMPORT_EVENT_CONSUMER_H_

#include "analysis/model/trace.h"

namespace opmap::analysis {

class EventConsumer {
 public:
  virtual ~EventConsumer() = default;
  // Once, before the first event, from a source that knows its facts that early
  // (StreamNsysEvents): the info and the table that will name the events (it grows).
  virtual void OnStart(const TraceInfo& info, StringTable* strings) {
    (void)info;
    (void)strings;
  }
  // After the last event from such a source, while `strings` is still valid.
  virtual void OnFinish() {}
  virtual void OnGpuEvent(const GpuEvent& event) = 0;
  virtual void OnApiCall(const ApiCall& call) = 0;
  virtual void OnRange(const Range& range) = 0;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_EVENT_CONSUMER_H_
