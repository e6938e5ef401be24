#include "cli/capture_loader.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <utility>

#include "absl/strings/str_format.h"
#include "analysis/graphs/node_id_merge.h"
#include "analysis/graphs/execution_details.h"
#include "analysis/import/kineto_importer.h"
#include "common/io/read_file.h"

namespace opmap::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kIndexName[] = "execution_details.json";

bool LooksLikeTraceName(std::string_view name) {
  return name != kIndexName && (name.ends_with(".json") || name.ends_with(".json.gz"));
}

struct CaptureFile {
  std::string path;
  int64_t batch_size = -1;
  std::string mode;
};

absl::StatusOr<std::vector<CaptureFile>> ListFolder(const std::string& folder) {
  std::vector<CaptureFile> files;
  fs::path index = fs::path(folder) / kIndexName;
  std::error_code ec;
  if (fs::is_regular_file(index, ec)) {
    absl::StatusOr<std::string> text = io::ReadFileBytes(index.string());
    if (!text.ok()) return text.status();
    absl::StatusOr<std::vector<analysis::CaptureFileEntry>> entries =
        analysis::ParseExecutionDetails(*text);
    if (!entries.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: %s", index.string(), entries.status().message()));
    }
    for (const analysis::CaptureFileEntry& e : *entries) {
      files.push_back({(fs::path(folder) / e.file).string(), e.batch_size, e.mode});
    }
    if (files.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: lists no capture file", index.string()));
    }
    return files;
  }
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && LooksLikeTraceName(name)) files.push_back({it->path().string(), -1, ""});
  }
  if (ec) return absl::InvalidArgumentError(absl::StrFormat("%s: %s", folder, ec.message()));
  if (files.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: no capture trace in the folder (*.json, *.json.gz)", folder));
  }
  std::sort(files.begin(), files.end(),
            [](const CaptureFile& a, const CaptureFile& b) { return a.path < b.path; });
  return files;
}

}  // namespace

absl::StatusOr<LoadedCaptures> LoadCaptures(
    const std::vector<std::string>& paths,
    const std::function<void(size_t, size_t, const std::string&)>& progress) {
  std::vector<CaptureFile> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      absl::StatusOr<std::vector<CaptureFile>> listed = ListFolder(path);
      if (!listed.ok()) return listed.status();
      files.insert(files.end(), listed->begin(), listed->end());
    } else {
      files.push_back({path, -1, ""});
    }
  }
  LoadedCaptures out;
  for (size_t i = 0; i < files.size(); ++i) {
    CaptureFile& f = files[i];
    if (progress) progress(i + 1, files.size(), f.path);
    absl::StatusOr<std::string> bytes = io::ReadFileBytes(f.path);
    if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrFormat("%s: %s", f.path, bytes.status().message()));
    analysis::KinetoImportOptions options;
    options.allow_no_gpu_events = true;
    absl::StatusOr<analysis::Trace> trace = analysis::ImportKinetoBytes(std::move(*bytes), options);
    if (!trace.ok()) {
      return absl::Status(trace.status().code(),
                          absl::StrFormat("%s: %s", f.path, trace.status().message()));
    }
    out.traces.push_back(std::make_unique<analysis::Trace>(std::move(*trace)));
    analysis::CaptureInput input;
    input.trace = out.traces.back().get();
    input.source = fs::path(f.path).filename().string();
    input.batch_size = f.batch_size > 0 ? f.batch_size : analysis::BatchSizeFromFileName(input.source);
    input.mode = f.mode;
    out.inputs.push_back(std::move(input));
  }
  return out;
}

namespace {

void SayMerged(const analysis::CaptureMergeReport& report, const std::string& tool,
               const std::string& against) {
  const double share = report.graph_gpu_time_ns > 0
                           ? 100.0 * report.matched_gpu_time_ns / report.graph_gpu_time_ns
                           : 0.0;
  std::cerr << absl::StrFormat(
      "%s: graph capture merge: %d of %d graph launches matched (%d of %d kernels, %.1f%% of "
      "their GPU time) against %s\n",
      tool, report.matched_launches, report.graph_launches, report.matched_events,
      report.graph_events, share, against);
  for (const analysis::UnmatchedGraphs& u : report.unmatched) {
    std::cerr << absl::StrFormat("%s: graph capture merge: %d launches (%d kernels) unmatched: %s\n",
                                 tool, u.launches, u.kernels, u.reason);
  }
}

}  // namespace

absl::StatusOr<analysis::CaptureMergeReport> MergeCaptureFiles(
    const std::vector<std::string>& paths, analysis::Trace& replay, const std::string& tool,
    bool quiet) {
  auto progress = [&](size_t i, size_t n, const std::string& file) {
    if (!quiet && n > 1) std::cerr << absl::StrFormat("%s: reading capture %d of %d: %s\n", tool, i, n, file);
  };
  absl::StatusOr<LoadedCaptures> captures = LoadCaptures(paths, progress);
  if (!captures.ok()) return captures.status();
  absl::StatusOr<analysis::CaptureMergeReport> report =
      analysis::MergeGraphCaptures(replay, captures->inputs);
  if (report.ok() && !quiet) {
    SayMerged(*report, tool, absl::StrFormat("%d captured graphs in %d files",
                                             report->captured_graphs, report->capture_files));
  }
  return report;
}

analysis::CaptureMergeReport MergeGraphNodeIds(analysis::Trace& trace, const std::string& tool,
                                               bool quiet) {
  analysis::CaptureMergeReport report = analysis::MergeGraphNodeIds(trace);
  if (!quiet) {
    SayMerged(report, tool,
              absl::StrFormat("%d graphs captured in the export, by graph node id",
                              report.captured_graphs));
  }
  return report;
}

}  // namespace opmap::cli
