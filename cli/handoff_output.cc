#include "cli/handoff_output.h"

#include <iostream>
#include <optional>

#include "analysis/handoff/handoff_report.h"
#include "cli/report_inputs.h"
#include "common/version/version.h"

namespace opmap::cli {

absl::Status SetHandoffFlag(std::string_view flag, std::string_view value, HandoffArgs* args) {
  if (value.empty()) return absl::InvalidArgumentError("needs a value");
  const std::string v(value);
  if (flag == "report") {
    std::optional<ReportFormat> f = ParseReportFormat(v);
    if (!f) return absl::InvalidArgumentError("'" + v + "' (expected md, json or html)");
    args->report = true;
    args->format = *f;
  } else if (flag == "output") {
    args->output = v;
  } else if (flag == "profile") {
    args->profile_path = v;
  } else if (flag == "envelope") {
    args->envelope_path = v;
  } else {
    args->gpu = v;
  }
  return absl::OkStatus();
}

std::string HandoffFlagsWithoutReport(const HandoffArgs& args) {
  if (args.report) return "";
  if (args.output.empty() && args.profile_path.empty() && args.envelope_path.empty() &&
      args.gpu.empty()) {
    return "";
  }
  return "--output, --profile, --envelope and --gpu go with --report";
}

int WriteHandoff(const HandoffArgs& args, const std::string& trace_path,
                 const analysis::Trace& trace, const analysis::MappingResult& mapping,
                 const analysis::TraceSummary& summary) {
  analysis::HandoffOptions options;
  options.source = trace_path;
  options.top = args.top;
  std::optional<analysis::WorkloadProfile> profile;
  if (!args.profile_path.empty()) {
    absl::StatusOr<analysis::WorkloadProfile> p = LoadProfile(args.profile_path);
    if (!p.ok()) {
      std::cerr << "opmap analyze: " << p.status().message() << "\n";
      return 2;
    }
    profile = std::move(*p);
    options.profile = &*profile;
    options.profile_source = args.profile_path;
  }
  std::optional<analysis::HardwareEnvelope> envelope;
  if (!args.envelope_path.empty()) {
    absl::StatusOr<analysis::HardwareEnvelope> e = LoadEnvelope(args.envelope_path);
    if (!e.ok()) {
      std::cerr << "opmap analyze: " << e.status().message() << "\n";
      return 2;
    }
    envelope = std::move(*e);
    options.envelope_source = "file " + args.envelope_path;
  } else if (!args.gpu.empty()) {
    absl::StatusOr<analysis::HardwareEnvelope> e = BuiltinEnvelope(args.gpu);
    if (!e.ok()) {
      std::cerr << "opmap analyze: " << e.status().message() << "\n";
      return 2;
    }
    envelope = std::move(*e);
    options.envelope_source = "built-in, --gpu " + args.gpu;
  } else {
    for (const std::string& name : trace.info.gpu_names) {
      if (auto e = analysis::EnvelopeForGpuName(name)) {
        envelope = std::move(*e);
        options.envelope_source = "built-in for the trace's GPU '" + name + "'";
        break;
      }
    }
  }
  if (envelope) options.envelope = &*envelope;

  analysis::HandoffReport report = analysis::BuildHandoff(trace, mapping, summary, options);
  if (!envelope && !trace.info.gpu_names.empty()) {
    // The trace names a GPU with no built-in envelope: say which, and how to give one
    // (rendered "unavailable: no envelope for '<name>'; pass --envelope FILE").
    report.mfu.unavailable = analysis::NoEnvelopeMessage(trace.info.gpu_names.front());
  }
  options.opmap_version = std::string(opmap::Version());
  // JSON is written from the report itself; the document is for Markdown and HTML only.
  const analysis::ReportDocument doc = args.format == ReportFormat::kJson
                                           ? analysis::ReportDocument{}
                                           : analysis::HandoffDocument(report, summary, options);
  const std::string json =
      args.format == ReportFormat::kJson ? analysis::HandoffJson(report, options) : std::string();
  const size_t slash = trace_path.find_last_of('/');
  const ReportMarker marker{"handoff", "",
                            slash == std::string::npos ? trace_path : trace_path.substr(slash + 1),
                            ""};
  if (std::string err = WriteReport(args.output, RenderReport(args.format, doc, json, marker));
      !err.empty()) {
    std::cerr << "opmap analyze: " << err << "\n";
    return 2;
  }
  return 0;
}

}  // namespace opmap::cli
