// Imports Nsight Compute CSV exports into an NcuProfile (analysis/model/ncu_profile.h),
// telling the layouts apart by their header, not the file name:
//   ncu-raw      `ncu --csv --page raw`: a header row starting "ID", a units row, one row
//                per profiled kernel, one column per metric (~1,800 with --set full).
//   ncu-long /   `ncu --csv [--page details]`: one row per (kernel, section, metric) with
//   ncu-details  ID, Kernel Name, Section Name, Metric Name, Metric Unit, Metric Value
//                columns; "ncu-details" when the GPU Speed Of Light section is there,
//                "ncu-long" when only --metrics were collected. ncu writes rows without
//                the trailing Rule/Estimated Speedup columns when they are empty: a row
//                may stop anywhere after Metric Value.
//   monai-summary a derived per-kernel table: kernel_name, gpu_time_duration_ns and
//                stall_<reason>_ratio columns (its spellings branch, dispatch and sleep
//                are Nsight Compute's branch_resolving, dispatch_stall and sleeping).
// `==PROF==`/`==WARNING==` lines and blank lines before or between records are skipped.
//
// Read per kernel: name, device, stream; duration (gpu__time_duration.sum; else the
// SpeedOfLight "Duration"; else sm__cycles_elapsed.avg ÷ sm__cycles_elapsed.avg.per_second),
// unit-aware (ns/nsecond, us/usecond, ms/msecond, s/second); DRAM bytes (dram__bytes_read.sum
// + dram__bytes_write.sum, else dram__bytes.sum; byte/Kbyte/Mbyte/Gbyte are powers of
// 1000 as ncu prints them, KiB-style units powers of 1024); FLOPs from
// sm__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum (an FMA counts 2;
// tensor-core work is not in these counters); every *throughput.avg.pct_of_peak_sustained_elapsed
// metric as given; and the warp-stall ratios
// smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio (kept as spelled;
// `_not_issued` variants are skipped: they are a part of their reason, not another one).
//
// "n/a" (and an empty cell) means unavailable: the metric is left out, never read as 0.
// Errors are kInvalidArgument and name the line and column: not an ncu CSV, no header, a
// row with a different number of fields, a non-numeric value in a metric that is read,
// an unknown unit. No I/O: the caller passes the bytes.
// Fuzzed by tests/fuzz/ncu_csv_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_ANALYSIS_IMPORT_NCU_IMPORTER_H_
#define OPMAP_ANALYSIS_IMPORT_NCU_IMPORTER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "analysis/model/ncu_profile.h"

namespace opmap::analysis {

absl::StatusOr<NcuProfile> ImportNcuCsv(std::string_view bytes);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_NCU_IMPORTER_H_
