#include "cli/trace_loader.h"

#include <utility>

#include "analysis/import/capture_import.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"

namespace opmap::cli {

absl::StatusOr<analysis::Trace> LoadTraceBytes(std::string bytes, const LoadOptions& options) {
  if (analysis::LooksLikeSqlite(bytes)) return analysis::ImportNsysSqlite(std::move(bytes));
  if (analysis::LooksLikeCaptureFile(bytes)) return analysis::ImportCaptureFile(bytes);
  analysis::KinetoImportOptions kineto;
  kineto.progress = options.progress;
  return analysis::ImportKinetoBytes(std::move(bytes), kineto);
}

}  // namespace opmap::cli
