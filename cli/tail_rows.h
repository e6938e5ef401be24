// The collector's request-breakdown rows (LATENCY_SUBJECT_REQUEST_COMPONENT, docs/metrics.md
// "Tail latency") as latency buckets per group and request key: the request both
// `opmap query tail` and `opmap report` send, and the parse of its answer.
#ifndef OPMAP_CLI_TAIL_ROWS_H_
#define OPMAP_CLI_TAIL_ROWS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/summary/tail_buckets.h"
#include "opmap/v1/query.pb.h"

namespace opmap::cli {

// `group_by` first (the caller's keys), then request, bucket, component and module.
opmap::v1::LatencyRequest TailRowsRequest(const opmap::v1::TimeRange* range,
                                          const opmap::v1::Filter& filter,
                                          const std::vector<opmap::v1::GroupBy>& group_by,
                                          uint32_t limit);

struct TailGroup {
  std::vector<std::string> key;  // the caller's group-by values
  std::string request_key;
  std::vector<analysis::TailBucketRow> buckets;
};

// The exemplar rows' request (LATENCY_SUBJECT_REQUEST_EXEMPLAR): `group_by`, then session,
// request, start and id; the slowest `limit` over all groups.
opmap::v1::LatencyRequest TailExemplarsRequest(const opmap::v1::TimeRange* range,
                                               const opmap::v1::Filter& filter,
                                               const std::vector<opmap::v1::GroupBy>& group_by,
                                               uint32_t limit);
// Exemplars by (the caller's group-by values + request key), slowest first, at most
// kMaxTailExemplars each. Rows that do not parse are left out and counted in `bad_rows`.
std::map<std::vector<std::string>, std::vector<analysis::TailExemplar>> ParseTailExemplars(
    const opmap::v1::LatencyResponse& response, size_t group_keys, int64_t* bad_rows);

// Groups in key order. Rows that are not breakdown rows (wrong key count, a bucket that is
// not a number, an unknown component label) are left out and counted in `bad_rows`.
std::vector<TailGroup> ParseTailRows(const opmap::v1::LatencyResponse& response,
                                     size_t group_keys, int64_t* bad_rows);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_TAIL_ROWS_H_
