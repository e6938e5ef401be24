// The Query service's ExportTrace (chunks, truncation, filters, range) and the gRPC
// health service, over a real SQLite store.
#include "collector/query_service.h"

#include <string>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "analysis/import/kineto_importer.h"
#include "tests/unit/collector/collector_fixture.h"

namespace opmap::collector::test_support {
namespace {

TEST_P(CollectorTest, HealthServiceAnswers) {
  Collector c(store_);
  EXPECT_EQ(HealthStatus(c.channel()), 1);  // SERVING
  c.server().GetHealthCheckService()->Shutdown();
  EXPECT_EQ(HealthStatus(c.channel()), 2);  // NOT_SERVING
}

TEST_P(CollectorTest, ExportChunksTruncationAndSessionFilter) {
  Collector c(store_);
  for (const char* session : {"e1", "e2"}) {
    for (const Batch& b : SessionBatches(session)) ASSERT_TRUE(c.ingest().HandleBatch(b).ok());
  }
  auto run = [&](const opmap::v1::ExportTraceRequest& request, size_t chunk_bytes,
                 opmap::v1::TraceChunk* last, int* chunks) {
    QueryOptions options;
    options.chunk_bytes = chunk_bytes;
    std::string json;
    *chunks = 0;
    absl::Status s = ExportTraceChunks(c.store(), request, options,
                                       [&](const opmap::v1::TraceChunk& chunk) {
                                         EXPECT_LE(chunk.data().size(), chunk_bytes);
                                         EXPECT_FALSE(last->last());
                                         json += chunk.data();
                                         *last = chunk;
                                         ++*chunks;
                                         return true;
                                       });
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_TRUE(last->last());
    return json;
  };
  opmap::v1::ExportTraceRequest all;
  opmap::v1::TraceChunk last;
  int chunks = 0;
  std::string json = run(all, 512, &last, &chunks);
  EXPECT_GT(chunks, 5);
  EXPECT_EQ(last.events(), 2u * kRecords);
  EXPECT_FALSE(last.truncated());
  absl::StatusOr<analysis::Trace> t = analysis::ImportKinetoJson(json);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->gpu_events.size(), 12u);
  EXPECT_NE(json.find("host node-1 llama@r1 [agent-1/e2]"), std::string::npos);
  EXPECT_NE(json.find("GPU 0 (NVIDIA H200) node-1 llama@r1 [agent-1/e1]"), std::string::npos);

  opmap::v1::ExportTraceRequest one;
  one.set_session_id("e2");
  last = {};
  json = run(one, 1 << 20, &last, &chunks);
  EXPECT_EQ(chunks, 1);
  EXPECT_EQ(last.events(), static_cast<uint64_t>(kRecords));
  EXPECT_EQ(json.find("[agent-1/e1]"), std::string::npos);

  opmap::v1::ExportTraceRequest few;
  few.set_max_events(20);
  last = {};
  json = run(few, 1 << 20, &last, &chunks);
  EXPECT_EQ(last.events(), 20u);
  EXPECT_TRUE(last.truncated());
  EXPECT_TRUE(analysis::ImportKinetoJson(json).ok());

  // Only events that start in the range: the first session's first 3 records.
  opmap::v1::ExportTraceRequest range;
  range.mutable_range()->set_start_ns(kBase);
  range.mutable_range()->set_end_ns(kBase + 2001);
  range.set_session_id("e1");
  last = {};
  json = run(range, 1 << 20, &last, &chunks);
  EXPECT_EQ(last.events(), 3u);

  opmap::v1::ExportTraceRequest bad;
  bad.mutable_range()->set_start_ns(5);
  bad.mutable_range()->set_end_ns(5);
  absl::Status s = ExportTraceChunks(c.store(), bad, {}, [](const opmap::v1::TraceChunk&) { return true; });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  bad = {};
  bad.set_max_events(1'000'000'000);
  s = ExportTraceChunks(c.store(), bad, {}, [](const opmap::v1::TraceChunk&) { return true; });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "max_events")) << s;
}


}  // namespace
}  // namespace opmap::collector::test_support
