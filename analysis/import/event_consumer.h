// EventConsumer: where an importer that does not keep events (ImportKinetoEvents,
// StreamNsysEvents) hands them, one at a time, as it makes them.
#ifndef OPMAP_ANALYSIS_IMPORT_EVENT_CONSUMER_H_
#define OPMAP_ANALYSIS_IMPORT_EVENT_CONSUMER_H_

#include "analysis/model/trace.h"

namespace opmap::analysis {

class EventConsumer {
 public:
  virtual ~EventConsumer() = default;
  // Once, before the first event: the info known so far (all of it for StreamNsysEvents;
  // a Kineto file may name its GPUs after its events) and the table that names the events
  // (it grows; valid until OnFinish).
  virtual void OnStart(const TraceInfo& info, StringTable* strings) {
    (void)info;
    (void)strings;
  }
  // After the last event of a source read without error, while `strings` is still valid.
  virtual void OnFinish() {}
  // Polled between events: true stops the import (Cancelled status).
  virtual bool Cancelled() const { return false; }
  virtual void OnGpuEvent(const GpuEvent& event) = 0;
  virtual void OnApiCall(const ApiCall& call) = 0;
  virtual void OnRange(const Range& range) = 0;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_EVENT_CONSUMER_H_
