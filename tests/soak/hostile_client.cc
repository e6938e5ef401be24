// Hostile peers of the collector for the soak (tests/soak/soak.sh): each mode runs for
// SECONDS against ADDRESS and prints one line of what it did and what it was answered.
//
// usage: hostile_client ADDRESS METRICS_ADDRESS TOKEN MODE SECONDS
// modes:
//   forge      batches for agent ids the token may not write (expects PERMISSION_DENIED)
//   malformed  bytes that are not a Batch, and batches that fail validation
//   streams    1,000 Ingest streams opened and held (most refused RESOURCE_EXHAUSTED)
//   metrics    16 connections to /metrics dripping a byte every 100 ms, reconnecting
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/support/sync_stream.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collector/received_batch.h"
#include "opmap/v1/ingest.grpc.pb.h"

namespace {

using opmap::v1::Ack;
using opmap::v1::Batch;
using Clock = std::chrono::steady_clock;

Batch Forged(uint64_t i) {
  Batch b;
  b.set_agent_id("victim-agent");
  b.set_session_id("forged-" + std::to_string(i));
  b.set_seq(1);
  b.mutable_strings()->add_strings("");
  b.mutable_strings()->add_strings("forged_kernel");
  b.mutable_kernels()->add_start_ns(1'700'000'000'000'000'000);
  b.mutable_kernels()->add_dur_ns(1000);
  b.mutable_kernels()->add_name_id(1);
  b.mutable_kernels()->add_device(0);
  b.mutable_kernels()->add_stream(7);
  b.set_last_in_session(true);
  return b;
}

std::map<std::string, int> Forge(const std::shared_ptr<grpc::Channel>& channel,
                                 const std::string& token, Clock::time_point until) {
  std::map<std::string, int> codes;
  auto stub = opmap::v1::Ingest::NewStub(channel);
  for (uint64_t i = 0; Clock::now() < until; ++i) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    auto stream = stub->Ingest(&ctx);
    stream->Write(Forged(i));
    stream->WritesDone();
    Ack ack;
    while (stream->Read(&ack)) {
    }
    ++codes[std::to_string(stream->Finish().error_code())];
  }
  return codes;
}

std::map<std::string, int> Malformed(const std::shared_ptr<grpc::Channel>& channel,
                                     const std::string& token, Clock::time_point until) {
  std::map<std::string, int> codes;
  const grpc::internal::RpcMethod method("/opmap.v1.Ingest/Ingest",
                                         grpc::internal::RpcMethod::BIDI_STREAMING, channel);
  for (uint64_t i = 0; Clock::now() < until; ++i) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    std::unique_ptr<grpc::ClientReaderWriter<opmap::collector::ReceivedBatch, Ack>> stream(
        grpc::internal::ClientReaderWriterFactory<opmap::collector::ReceivedBatch, Ack>::Create(
            channel.get(), method, &ctx));
    opmap::collector::ReceivedBatch garbage;
    if (i % 2 == 0) {
      garbage.bytes.assign(1 + i % 64, static_cast<char>(0xff - i % 7));  // not a Batch
    } else {
      Batch b = Forged(i);  // parses, fails validation: a duration past 2^52 ns
      b.set_agent_id("soak-malformed");
      b.mutable_kernels()->set_dur_ns(0, int64_t{1} << 62);
      garbage.bytes = b.SerializeAsString();
    }
    stream->Write(garbage);
    stream->WritesDone();
    Ack ack;
    int rejected = 0;
    while (stream->Read(&ack)) rejected += ack.rejected_size();
    const grpc::Status st = stream->Finish();
    ++codes[rejected > 0 ? "rejected" : std::to_string(st.error_code())];
  }
  return codes;
}

std::map<std::string, int> Streams(const std::shared_ptr<grpc::Channel>& channel,
                                   const std::string& token, Clock::time_point until) {
  std::map<std::string, int> codes;
  auto stub = opmap::v1::Ingest::NewStub(channel);
  struct Open {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReaderWriter<Batch, Ack>> stream;
  };
  std::vector<std::unique_ptr<Open>> open;
  for (int i = 0; i < 1000; ++i) {
    auto o = std::make_unique<Open>();
    o->ctx.AddMetadata("authorization", "Bearer " + token);
    o->stream = stub->Ingest(&o->ctx);
    open.push_back(std::move(o));
  }
  std::this_thread::sleep_until(until);
  for (auto& o : open) {
    o->stream->WritesDone();
    Ack ack;
    while (o->stream->Read(&ack)) {
    }
    ++codes[std::to_string(o->stream->Finish().error_code())];
  }
  return codes;
}

int Connect(const std::string& address) {
  const size_t colon = address.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::map<std::string, int> SlowMetrics(const std::string& address, Clock::time_point until) {
  std::map<std::string, int> counts;
  std::vector<int> fds;
  while (Clock::now() < until) {
    while (fds.size() < 16) {
      const int fd = Connect(address);
      if (fd < 0) break;
      fds.push_back(fd);
      ++counts["connections"];
    }
    for (int& fd : fds) {
      if (send(fd, "G", 1, MSG_NOSIGNAL) != 1) {  // closed at its deadline: come again
        close(fd);
        fd = -1;
        ++counts["closed_by_server"];
      }
    }
    std::erase(fds, -1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (int fd : fds) close(fd);
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: hostile_client ADDRESS METRICS_ADDRESS TOKEN MODE SECONDS\n");
    return 2;
  }
  const std::string address = argv[1], metrics = argv[2], token = argv[3], mode = argv[4];
  const Clock::time_point until = Clock::now() + std::chrono::seconds(std::atoi(argv[5]));
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  std::map<std::string, int> result;
  if (mode == "forge") {
    result = Forge(channel, token, until);
  } else if (mode == "malformed") {
    result = Malformed(channel, token, until);
  } else if (mode == "streams") {
    result = Streams(channel, token, until);
  } else if (mode == "metrics") {
    result = SlowMetrics(metrics, until);
  } else {
    std::fprintf(stderr, "hostile_client: unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("%s:", mode.c_str());
  for (const auto& [k, v] : result) std::printf(" %s=%d", k.c_str(), v);
  std::printf("\n");
  return 0;
}
