// Imports a PyTorch-profiler (Kineto) Chrome-trace JSON document into a Trace.
//
// Formats handled: 2021 categories (Kernel/Runtime/Operator/Memcpy/Memset, string tids
// such as "stream 7"), 2022+ (kernel/cuda_runtime/cuda_driver/cpu_op/user_annotation/
// gpu_memcpy/gpu_memset/python_function), ROCm (hip* runtime calls), Triton kernels.
// ts/dur are microseconds whatever displayTimeUnit says; they are parsed from the text
// to integer ns exactly.
//
// The document is streamed (kineto_event_stream.h): gzip input is inflated a few MiB at a
// time and plain input is parsed in place, events in batches with simdjson On-Demand; the
// Trace keeps interned names and fixed-size event records, nothing else grows with the
// file. The whole document's grammar is checked, skipped values included.
// Fuzzed by tests/fuzz/kineto_importer_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_ANALYSIS_IMPORT_KINETO_IMPORTER_H_
#define OPMAP_ANALYSIS_IMPORT_KINETO_IMPORTER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/import/event_consumer.h"
#include "analysis/import/kineto_event_stream.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

struct KinetoImportOptions {
  // Called every MiB or so of text with (bytes parsed, total bytes); for gzip input the
  // total is the trailer's size hint until the last call, (size, size).
  std::function<void(size_t, size_t)> progress;
  // A graph capture trace (analysis/graphs) may hold no GPU event at all: its launches
  // were recorded into a graph, not run. Other traces without one are refused.
  bool allow_no_gpu_events = false;
};

// Spare capacity past the end of the JSON text that lets ImportKinetoJson parse it in
// place (simdjson's padding and a little more).
size_t KinetoRequiredPadding();

// `json` is padded (capacity() >= size() + KinetoRequiredPadding()) if it isn't already
// (one copy); its text is unchanged when this returns. Errors are InvalidArgument with the byte
// offset or the event index (traceEvents[i]) and field; gzip damage is DataLoss.
absl::StatusOr<Trace> ImportKinetoJson(std::string& json, const KinetoImportOptions& options = {});

// The same import with the events handed to `consumer` (in file order) instead of kept: the Trace returned
// holds the source's info and the string table the events' names index, and no events.
// Same errors as ImportKinetoJson (a trace without GPU events is one).
absl::StatusOr<Trace> ImportKinetoEvents(KinetoTextSource& text, EventConsumer& consumer,
                                         const KinetoImportOptions& options = {});

// Accepts gzip or plain JSON bytes (taken by value: a plain buffer is padded in place;
// gzip is inflated a window at a time, never whole).
absl::StatusOr<Trace> ImportKinetoBytes(std::string bytes, const KinetoImportOptions& options = {});

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_KINETO_IMPORTER_H_
