#include "analysis/import/ncu_importer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/import/csv_records.h"
#include "common/base/absl_view.h"
#include "common/base/status_macros.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";
constexpr std::string_view kThroughputSuffix = "throughput.avg.pct_of_peak_sustained_elapsed";
constexpr std::string_view kFlopPrefix = "sm__sass_thread_inst_executed_op_";
constexpr std::string_view kFlopSuffix = "_pred_on.sum";
constexpr std::string_view kSolSection = "GPU Speed Of Light Throughput";

// Where a value sits in the file, for error messages.
struct Cell {
  int64_t line = 0;
  size_t column = 0;  // 1-based
  std::string label;  // the column name, or "Metric Value of <metric>"
};

absl::Status CellError(const Cell& c, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("line %d, column %d (%s): %s", c.line, c.column, c.label, what));
}

// nullopt for "n/a" and empty cells (unavailable); an error for anything else that is not
// a finite number. ncu writes thousands separators in the details page ("5,849.96").
absl::StatusOr<std::optional<double>> ParseValue(std::string_view text, const Cell& cell) {
  std::string s(absl::StripAsciiWhitespace(base::AbslView(text)));
  if (s.empty() || absl::EqualsIgnoreCase(s, "n/a")) return std::optional<double>();
  std::string digits;
  for (char c : s) {
    if (c != ',') digits.push_back(c);
  }
  double v = 0;
  if (!absl::SimpleAtod(digits, &v) || !std::isfinite(v)) {
    return CellError(cell, absl::StrFormat("\"%s\" is not a number", s));
  }
  return std::optional<double>(v);
}

// Multiplier to nanoseconds; empty unit: ncu's base unit (ns).
std::optional<double> TimeScale(std::string_view unit) {
  std::string u = absl::AsciiStrToLower(base::AbslView(unit));
  if (u.empty() || u == "ns" || u == "nsecond" || u == "nsecs" || u == "nsec") return 1.0;
  if (u == "us" || u == "usecond" || u == "usec" || u == "usecs" || u == "\xc2\xb5s") return 1e3;
  if (u == "ms" || u == "msecond" || u == "msec" || u == "msecs") return 1e6;
  if (u == "s" || u == "second" || u == "sec" || u == "secs") return 1e9;
  return std::nullopt;
}

// Multiplier to bytes. ncu's Kbyte/Mbyte/Gbyte are powers of 1000.
std::optional<double> ByteScale(std::string_view unit) {
  std::string u = absl::AsciiStrToLower(base::AbslView(unit));
  if (u.empty() || u == "byte" || u == "bytes" || u == "b") return 1.0;
  if (u == "kbyte" || u == "kb") return 1e3;
  if (u == "mbyte" || u == "mb") return 1e6;
  if (u == "gbyte" || u == "gb") return 1e9;
  if (u == "tbyte" || u == "tb") return 1e12;
  if (u == "kibyte" || u == "kib") return 1024.0;
  if (u == "mibyte" || u == "mib") return 1024.0 * 1024;
  if (u == "gibyte" || u == "gib") return 1024.0 * 1024 * 1024;
  return std::nullopt;
}

// Multiplier to cycles per second.
std::optional<double> RateScale(std::string_view unit) {
  std::string u = absl::AsciiStrToLower(base::AbslView(unit));
  if (u.empty() || u == "cycle/second" || u == "hz" || u == "cycle/s") return 1.0;
  if (u == "cycle/msecond" || u == "khz") return 1e3;
  if (u == "cycle/usecond" || u == "mhz") return 1e6;
  if (u == "cycle/nsecond" || u == "ghz") return 1e9;
  return std::nullopt;
}

// One kernel's metrics as they arrive (one per column, or one per long-form row).
class KernelBuilder {
 public:
  absl::Status Take(std::string_view metric, std::string_view section, std::string_view unit,
                    std::string_view text, const Cell& cell) {
    if (metric == "gpu__time_duration.sum") {
      return Scaled(text, unit, cell, TimeScale, "time", &gpu_time_ns_);
    }
    if (metric == "Duration" && section == kSolSection) {
      return Scaled(text, unit, cell, TimeScale, "time", &sol_duration_ns_);
    }
    if (metric == "sm__cycles_elapsed.avg") return Plain(text, cell, &cycles_);
    if (metric == "sm__cycles_elapsed.avg.per_second") {
      return Scaled(text, unit, cell, RateScale, "rate", &cycles_per_s_);
    }
    if (metric == "dram__bytes_read.sum") {
      return Scaled(text, unit, cell, ByteScale, "byte", &dram_read_);
    }
    if (metric == "dram__bytes_write.sum") {
      return Scaled(text, unit, cell, ByteScale, "byte", &dram_write_);
    }
    if (metric == "dram__bytes.sum") return Scaled(text, unit, cell, ByteScale, "byte", &dram_);
    if (metric.starts_with(kFlopPrefix) && metric.ends_with(kFlopSuffix)) {
      std::string_view op = metric.substr(kFlopPrefix.size(),
                                          metric.size() - kFlopPrefix.size() - kFlopSuffix.size());
      if (op.size() == 4 && (op[0] == 'f' || op[0] == 'd' || op[0] == 'h')) {
        std::string_view kind = op.substr(1);
        if (kind == "add" || kind == "mul" || kind == "fma") {
          std::optional<double> v;
          RETURN_IF_ERROR(Plain(text, cell, &v));
          if (v) flops_ = flops_.value_or(0) + (kind == "fma" ? 2 : 1) * *v;
        }
      }
      return absl::OkStatus();
    }
    if (metric.ends_with(kThroughputSuffix) && metric.find("__") != std::string_view::npos) {
      std::optional<double> v;
      RETURN_IF_ERROR(Plain(text, cell, &v));
      if (v) kernel_.throughput_pct.emplace_back(std::string(metric), *v);
      return absl::OkStatus();
    }
    if (metric.starts_with(kStallPrefix) && metric.ends_with(kStallSuffix)) {
      if (metric.find("_not_issued") != std::string_view::npos) return absl::OkStatus();
      std::optional<double> v;
      RETURN_IF_ERROR(Plain(text, cell, &v));
      if (v) kernel_.stall_ratios.emplace_back(std::string(metric), *v);
      return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  // A stall ratio under an already resolved reason name (the MONAI summary).
  absl::Status TakeStall(std::string reason, std::string_view text, const Cell& cell) {
    std::optional<double> v;
    RETURN_IF_ERROR(Plain(text, cell, &v));
    if (v) kernel_.stall_ratios.emplace_back(std::move(reason), *v);
    return absl::OkStatus();
  }
  absl::Status TakeDurationNs(std::string_view text, const Cell& cell) {
    return Plain(text, cell, &gpu_time_ns_);
  }

  NcuKernel& kernel() { return kernel_; }

  NcuKernel Finish(std::string_view duration_metric = "gpu__time_duration.sum") {
    if (gpu_time_ns_) {
      kernel_.duration_ns = gpu_time_ns_;
      kernel_.duration_source = std::string(duration_metric);
    } else if (sol_duration_ns_) {
      kernel_.duration_ns = sol_duration_ns_;
      kernel_.duration_source = "GPU Speed Of Light Throughput: Duration";
    } else if (cycles_ && cycles_per_s_ && *cycles_per_s_ > 0) {
      kernel_.duration_ns = *cycles_ / *cycles_per_s_ * 1e9;
      kernel_.duration_source = "sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second";
    }
    if (dram_read_ || dram_write_) {
      kernel_.dram_bytes = dram_read_.value_or(0) + dram_write_.value_or(0);
    } else {
      kernel_.dram_bytes = dram_;
    }
    kernel_.flops = flops_;
    return std::move(kernel_);
  }

 private:
  static absl::Status Plain(std::string_view text, const Cell& cell, std::optional<double>* out) {
    ASSIGN_OR_RETURN(*out, ParseValue(text, cell));
    return absl::OkStatus();
  }
  static absl::Status Scaled(std::string_view text, std::string_view unit, const Cell& cell,
                             std::optional<double> (*scale)(std::string_view),
                             const char* kind, std::optional<double>* out) {
    ASSIGN_OR_RETURN(std::optional<double> v, ParseValue(text, cell));
    if (!v) return absl::OkStatus();
    std::optional<double> k = scale(unit);
    if (!k) return CellError(cell, absl::StrFormat("unknown %s unit \"%s\"", kind, unit));
    *out = *v * *k;
    return absl::OkStatus();
  }

  NcuKernel kernel_;
  std::optional<double> gpu_time_ns_, sol_duration_ns_, cycles_, cycles_per_s_;
  std::optional<double> dram_read_, dram_write_, dram_, flops_;
};

// Column index by name, or -1.
int Find(const std::vector<std::string>& header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

absl::Status MissingColumn(const CsvRecord& header, std::string_view name) {
  return absl::InvalidArgumentError(
      absl::StrFormat("line %d: the header has no \"%s\" column", header.line, name));
}

absl::Status FieldCountError(const CsvRecord& row, const CsvRecord& header, size_t expected_min) {
  if (expected_min == header.fields.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("line %d: %d fields where the header (line %d) has %d", row.line,
                        row.fields.size(), header.line, header.fields.size()));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "line %d: %d fields where the header (line %d) has %d (at least %d needed)", row.line,
      row.fields.size(), header.line, header.fields.size(), expected_min));
}

absl::StatusOr<int64_t> ParseId(const CsvRecord& row, int col) {
  int64_t id = 0;
  if (!absl::SimpleAtoi(base::AbslView(row.fields[col]), &id) || id < 0) {
    return CellError(Cell{row.line, static_cast<size_t>(col) + 1, "ID"},
                     absl::StrFormat("\"%s\" is not a kernel ID", row.fields[col]));
  }
  return id;
}

void TakeLaunchColumns(const std::vector<std::string>& header, const CsvRecord& row,
                       NcuKernel& k) {
  // A long-format row may stop before the header does (the trailing rule columns are
  // optional): a column past its end is absent, not read.
  auto cell = [&](std::string_view name) -> const std::string* {
    const int c = Find(header, name);
    return c >= 0 && static_cast<size_t>(c) < row.fields.size() ? &row.fields[c] : nullptr;
  };
  int64_t v = 0;
  if (const std::string* d = cell("Device"); d && absl::SimpleAtoi(base::AbslView(*d), &v)) {
    k.device = static_cast<int32_t>(v);
  }
  if (const std::string* s = cell("Stream"); s && absl::SimpleAtoi(base::AbslView(*s), &v)) {
    k.stream = v;
  }
}

absl::StatusOr<NcuProfile> ImportRaw(const std::vector<CsvRecord>& records) {
  NcuProfile out;
  out.format = "ncu-raw";
  const CsvRecord& header = records[0];
  const std::vector<std::string>& h = header.fields;
  int id_col = 0;
  int name_col = Find(h, "Kernel Name");
  if (name_col < 0) return MissingColumn(header, "Kernel Name");
  size_t first = 1;
  const std::vector<std::string>* units = nullptr;
  // The units row: its ID cell is empty (ncu prints units unless --print-units base... is
  // given with --csv; then it's still there, holding base units).
  if (records.size() > 1 && records[1].fields.size() == h.size() && records[1].fields[0].empty()) {
    units = &records[1].fields;
    first = 2;
  } else {
    out.notes.push_back("no units row: values read in ncu's base units (ns, byte)");
  }
  for (size_t r = first; r < records.size(); ++r) {
    const CsvRecord& row = records[r];
    if (row.fields.size() != h.size()) return FieldCountError(row, header, h.size());
    KernelBuilder b;
    ASSIGN_OR_RETURN(b.kernel().id, ParseId(row, id_col));
    b.kernel().name = row.fields[name_col];
    TakeLaunchColumns(h, row, b.kernel());
    for (size_t c = 0; c < h.size(); ++c) {
      if (h[c].find("__") == std::string::npos) continue;  // not a metric column
      std::string_view unit = units ? std::string_view((*units)[c]) : std::string_view();
      RETURN_IF_ERROR(b.Take(h[c], "", unit, row.fields[c], Cell{row.line, c + 1, h[c]}));
    }
    out.kernels.push_back(b.Finish());
  }
  return out;
}

absl::StatusOr<NcuProfile> ImportLong(const std::vector<CsvRecord>& records) {
  NcuProfile out;
  const CsvRecord& header = records[0];
  const std::vector<std::string>& h = header.fields;
  int name_col = Find(h, "Kernel Name");
  int metric_col = Find(h, "Metric Name");
  int unit_col = Find(h, "Metric Unit");
  int value_col = Find(h, "Metric Value");
  int section_col = Find(h, "Section Name");  // optional
  if (name_col < 0) return MissingColumn(header, "Kernel Name");
  if (unit_col < 0) return MissingColumn(header, "Metric Unit");
  size_t needed = static_cast<size_t>(std::max({name_col, metric_col, unit_col, value_col,
                                                section_col})) + 1;
  std::map<int64_t, size_t> index;  // ID → position in `builders`
  std::vector<KernelBuilder> builders;
  bool speed_of_light = false;
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& row = records[r];
    if (row.fields.size() < needed || row.fields.size() > h.size()) {
      return FieldCountError(row, header, needed);
    }
    ASSIGN_OR_RETURN(int64_t id, ParseId(row, 0));
    auto [it, inserted] = index.try_emplace(id, builders.size());
    if (inserted) {
      KernelBuilder& b = builders.emplace_back();
      b.kernel().id = id;
      b.kernel().name = row.fields[name_col];
      TakeLaunchColumns(h, row, b.kernel());
    }
    const std::string& metric = row.fields[metric_col];
    if (metric.empty()) continue;  // a rule row (Rule Name/Type/Description only)
    std::string_view section = section_col >= 0 ? std::string_view(row.fields[section_col]) : "";
    if (section == kSolSection) speed_of_light = true;
    RETURN_IF_ERROR(builders[it->second].Take(
        metric, section, row.fields[unit_col], row.fields[value_col],
        Cell{row.line, static_cast<size_t>(value_col) + 1, "Metric Value of " + metric}));
  }
  out.format = speed_of_light ? "ncu-details" : "ncu-long";
  for (KernelBuilder& b : builders) out.kernels.push_back(b.Finish());
  return out;
}

// The derived summary's stall column stems that differ from Nsight Compute's names.
std::string MonaiReason(std::string_view stem) {
  if (stem == "branch") return "branch_resolving";
  if (stem == "dispatch") return "dispatch_stall";
  if (stem == "sleep") return "sleeping";
  return std::string(stem);
}

absl::StatusOr<NcuProfile> ImportMonaiSummary(const std::vector<CsvRecord>& records) {
  NcuProfile out;
  out.format = "monai-summary";
  const CsvRecord& header = records[0];
  const std::vector<std::string>& h = header.fields;
  int name_col = Find(h, "kernel_name");
  int dur_col = Find(h, "gpu_time_duration_ns");
  if (dur_col < 0) {
    out.notes.push_back("no gpu_time_duration_ns column: kernels have no duration");
  }
  std::vector<std::pair<int, std::string>> stall_cols;
  std::vector<std::string> ignored;
  for (size_t c = 0; c < h.size(); ++c) {
    std::string_view col = h[c];
    if (col.starts_with("stall_") && col.ends_with("_ratio") && col.size() > 12) {
      stall_cols.emplace_back(static_cast<int>(c),
                              MonaiReason(col.substr(6, col.size() - 6 - 6)));
    } else if (static_cast<int>(c) != name_col && static_cast<int>(c) != dur_col) {
      ignored.push_back(h[c]);
    }
  }
  if (!ignored.empty()) {
    out.notes.push_back("derived summary: only kernel_name, gpu_time_duration_ns and "
                        "stall_<reason>_ratio are read; not read: " +
                        absl::StrJoin(ignored, ", "));
  }
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& row = records[r];
    if (row.fields.size() != h.size()) return FieldCountError(row, header, h.size());
    KernelBuilder b;
    b.kernel().id = static_cast<int64_t>(r - 1);
    b.kernel().name = row.fields[name_col];
    if (dur_col >= 0) {
      RETURN_IF_ERROR(b.TakeDurationNs(row.fields[dur_col],
                                       Cell{row.line, static_cast<size_t>(dur_col) + 1, h[dur_col]}));
    }
    for (const auto& [c, reason] : stall_cols) {
      RETURN_IF_ERROR(b.TakeStall(reason, row.fields[c],
                                  Cell{row.line, static_cast<size_t>(c) + 1, h[c]}));
    }
    out.kernels.push_back(b.Finish("gpu_time_duration_ns"));
  }
  return out;
}

bool HasStallRatioColumn(const std::vector<std::string>& h) {
  for (const std::string& c : h) {
    if (absl::StartsWith(c, "stall_") && absl::EndsWith(c, "_ratio")) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<NcuProfile> ImportNcuCsv(std::string_view bytes) {
  constexpr char kExpected[] =
      "expected `ncu --csv --page raw` or `ncu --csv [--page details]` output (a header row "
      "starting \"ID\"), or a summary with kernel_name and stall_<reason>_ratio columns";
  if (bytes.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("not an Nsight Compute CSV: binary data (%s)", kExpected));
  }
  ASSIGN_OR_RETURN(CsvRecords csv, ParseCsvRecords(bytes));
  if (csv.records.empty()) {
    if (csv.skipped_tool_lines > 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "not an Nsight Compute CSV: %d ==PROF==/==WARNING== lines and no header row (did "
          "ncu profile any kernel?)",
          csv.skipped_tool_lines));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("not an Nsight Compute CSV: no header row (%s)", kExpected));
  }
  const CsvRecord& header = csv.records[0];
  const std::vector<std::string>& h = header.fields;
  absl::StatusOr<NcuProfile> out;
  if (!h.empty() && h[0] == "ID") {
    if (Find(h, "Metric Name") >= 0 || Find(h, "Metric Value") >= 0) {
      if (Find(h, "Metric Name") < 0) return MissingColumn(header, "Metric Name");
      if (Find(h, "Metric Value") < 0) return MissingColumn(header, "Metric Value");
      out = ImportLong(csv.records);
    } else {
      out = ImportRaw(csv.records);
    }
  } else if (Find(h, "kernel_name") >= 0 && HasStallRatioColumn(h)) {
    out = ImportMonaiSummary(csv.records);
  } else {
    // The file's own bytes, shown escaped and shortened (never cut inside a character).
    const std::string first = text::PrintableCell(h.empty() ? std::string() : h[0], 43);
    return absl::InvalidArgumentError(absl::StrFormat(
        "not an Nsight Compute CSV: the first row (line %d) starts with \"%s\"; %s",
        header.line, first, kExpected));
  }
  if (out.ok() && out->kernels.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "line %d: a header but no kernel rows", header.line));
  }
  return out;
}

}  // namespace opmap::analysis
