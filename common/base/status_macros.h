// Two macros for early return on error, as in Perfetto's status_macros.h.
// Abseil 20220623 (Debian 12) ships none.
#ifndef OPMAP_COMMON_BASE_STATUS_MACROS_H_
#define OPMAP_COMMON_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define OPMAP_CONCAT_INNER_(a, b) a##b
#define OPMAP_CONCAT_(a, b) OPMAP_CONCAT_INNER_(a, b)

// RETURN_IF_ERROR(expr): returns the status of `expr` when it is not OK.
#define RETURN_IF_ERROR(expr)                       \
  do {                                              \
    ::absl::Status opmap_status_ = (expr);          \
    if (!opmap_status_.ok()) return opmap_status_;  \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): evaluates a StatusOr; returns its status on error,
// else moves the value into `lhs` (which may be a declaration).
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(OPMAP_CONCAT_(opmap_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()

#endif  // OPMAP_COMMON_BASE_STATUS_MACROS_H_
