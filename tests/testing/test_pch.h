// The headers most test files include, precompiled once for every test target
// (tests/CMakeLists.txt, OPMAP_TEST_PCH): gtest, gmock, gRPC and the generated protos are
// most of a test file's compile time.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "opmap/v1/ingest.grpc.pb.h"
#include "opmap/v1/query.grpc.pb.h"
#include "opmap/v1/telemetry.pb.h"
