// Imports a PyTorch-profiler (Kineto) Chrome-trace JSON document into a Trace.
//
// Formats handled: 2021 categories (Kernel/Runtime/Operator/Memcpy/Memset, string tids
// such as "stream 7"), 2022+ (kernel/cuda_runtime/cuda_driver/cpu_op/user_annotation/
// gpu_memcpy/gpu_memset/python_function), ROCm (hip* runtime calls), Triton kernels.
// ts/dur are microseconds whatever displayTimeUnit says; they are parsed from the text
// to integer ns exactly.
//
// The document is parsed in place (simdjson On-Demand): the caller's buffer is the only
// copy of the text; the Trace keeps interned names and fixed-size event records.
#ifndef OPMAP_ANALYSIS_IMPORT_KINETO_IMPORTER_H_
#define OPMAP_ANALYSIS_IMPORT_KINETO_IMPORTER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

struct KinetoImportOptions {
  // Called every few thousand events with (bytes parsed, total bytes).
  std::function<void(size_t, size_t)> progress;
};

// Bytes of slack the parser needs past the end of the JSON text (simdjson's padding).
size_t KinetoRequiredPadding();

// `json` must have capacity() >= size() + KinetoRequiredPadding(); Gunzip() produces such
// buffers, and ImportKinetoBytes() arranges it for plain text. Errors are
// InvalidArgument with the byte offset or the event index (traceEvents[i]) and field.
absl::StatusOr<Trace> ImportKinetoJson(std::string& json, const KinetoImportOptions& options = {});

// Accepts gzip or plain JSON bytes (taken by value: a plain buffer is padded in place,
// a gzip one is freed as soon as it is inflated).
absl::StatusOr<Trace> ImportKinetoBytes(std::string bytes, const KinetoImportOptions& options = {});

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_KINETO_IMPORTER_H_
