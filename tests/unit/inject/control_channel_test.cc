// The agent end of the control socket (agent/transport/control_channel.h) against a fake
// library written with raw syscalls: the hello with its memfd over SCM_RIGHTS, window
// commands, and refusal of peers with another uid and of malformed hellos.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "agent/transport/control_channel.h"

namespace opmap::transport {
namespace {

int Connect(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

// Sends a framed message with `fds` attached.
void SendRaw(int sock, uint16_t type, const std::string& body, const std::vector<int>& fds,
             uint32_t magic = ring::kControlMagic) {
  ring::ControlHeader h{};
  h.magic = magic;
  h.type = type;
  h.body_len = static_cast<uint32_t>(body.size());
  std::string frame(reinterpret_cast<const char*>(&h), sizeof(h));
  frame += body;
  iovec iov{frame.data(), frame.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (fds.empty() ? 1 : fds.size())));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ASSERT_EQ(sendmsg(sock, &msg, MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
}

std::string HelloBody(const std::string& metadata, uint32_t version = ring::kVersion) {
  ring::HelloBody b{};
  b.version = version;
  b.pid = static_cast<uint32_t>(getpid());
  b.ring_capacity = 1 << 16;
  b.capabilities = ring::kCaptureNvtx;
  b.metadata_len = static_cast<uint32_t>(metadata.size());
  return std::string(reinterpret_cast<const char*>(&b), sizeof(b)) + metadata;
}

class ControlChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto l = ControlListener::Listen(path_);
    ASSERT_TRUE(l.ok()) << l.status();
    listener_ = std::move(*l);
    memfd_ = memfd_create("test-ring", MFD_CLOEXEC);
  }
  void TearDown() override { close(memfd_); }

  std::string path_ = "/tmp/opmap_cc_test_" + std::to_string(getpid()) + ".sock";
  std::unique_ptr<ControlListener> listener_;
  int memfd_ = -1;
};

TEST_F(ControlChannelTest, HelloWithMemfdThenWindowCommands) {
  const int lib = Connect(path_);
  SendRaw(lib, ring::kHello, HelloBody("pid=1\nmodel=bert\nnoequals\nmodel=gpt\n"), {memfd_});
  auto ch = listener_->Accept(absl::Seconds(5));
  ASSERT_TRUE(ch.ok()) << ch.status();
  const Hello& hello = (*ch)->hello();
  EXPECT_EQ(hello.peer_pid, getpid());
  EXPECT_EQ(hello.peer_uid, geteuid());
  EXPECT_EQ(hello.body.ring_capacity, 1u << 16);
  EXPECT_EQ(hello.metadata.at("model"), "gpt");  // last one wins
  EXPECT_EQ(hello.metadata.count("noequals"), 0u);
  const int fd = (*ch)->TakeRingFd();
  EXPECT_GE(fd, 0);
  EXPECT_EQ((*ch)->TakeRingFd(), -1);
  close(fd);

  ring::ControlHeader h{};
  ASSERT_EQ(recv(lib, &h, sizeof(h), MSG_WAITALL), static_cast<ssize_t>(sizeof(h)));
  EXPECT_EQ(h.type, ring::kWelcome);
  ASSERT_TRUE((*ch)->StartWindow(9, absl::Seconds(2), ring::kCaptureNvtx).ok());
  ring::StartWindowBody start{};
  ASSERT_EQ(recv(lib, &h, sizeof(h), MSG_WAITALL), static_cast<ssize_t>(sizeof(h)));
  ASSERT_EQ(h.type, ring::kStartWindow);
  ASSERT_EQ(h.body_len, sizeof(start));
  ASSERT_EQ(recv(lib, &start, sizeof(start), MSG_WAITALL), static_cast<ssize_t>(sizeof(start)));
  EXPECT_EQ(start.window_id, 9u);
  EXPECT_EQ(start.duration_ns, 2'000'000'000);

  // The library's answers.
  ring::WindowDoneBody done{9, 1, 2, 3, 4};
  SendRaw(lib, ring::kWindowDone, std::string(reinterpret_cast<char*>(&done), sizeof(done)), {});
  auto m = (*ch)->Read(absl::Seconds(5));
  ASSERT_TRUE(m.ok() && m->has_value());
  auto parsed = ControlChannel::ParseWindowDone(**m);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->records, 3u);
  EXPECT_EQ(parsed->drops, 4u);
  auto none = (*ch)->Read(absl::Milliseconds(20));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());  // a timeout is not an error
  close(lib);
  auto closed = (*ch)->Read(absl::Seconds(5));
  EXPECT_FALSE(closed.ok());
}

TEST_F(ControlChannelTest, RefusesMalformedHellos) {
  auto expect_refused = [&](auto send, const char* what) {
    const int lib = Connect(path_);
    send(lib);
    auto ch = listener_->Accept(absl::Seconds(5));
    EXPECT_FALSE(ch.ok()) << what;
    close(lib);
  };
  expect_refused([&](int s) { SendRaw(s, ring::kHello, HelloBody("a=b\n"), {}); }, "no fd");
  expect_refused([&](int s) { SendRaw(s, ring::kHello, HelloBody(""), {memfd_, memfd_}); },
                 "two fds");
  expect_refused(
      [&](int s) { SendRaw(s, ring::kHello, HelloBody("", ring::kVersion + 1), {memfd_}); },
      "other version");
  expect_refused([&](int s) { SendRaw(s, ring::kHello, "short", {memfd_}); }, "short body");
  expect_refused([&](int s) { SendRaw(s, ring::kStartWindow, HelloBody(""), {memfd_}); },
                 "not a hello");
  expect_refused([&](int s) { SendRaw(s, ring::kHello, HelloBody(""), {memfd_}, 0xBAD); },
                 "bad magic");
  expect_refused(
      [&](int s) {
        std::string body = HelloBody("x=y\n");
        reinterpret_cast<ring::HelloBody*>(body.data())->metadata_len = 100;
        SendRaw(s, ring::kHello, body, {memfd_});
      },
      "metadata_len disagrees");
  expect_refused(
      [&](int s) {
        ring::ControlHeader h{ring::kControlMagic, ring::kHello, 0, ring::kMaxControlBody + 1, 0};
        ASSERT_EQ(send(s, &h, sizeof(h), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(h)));
      },
      "oversized body");
  EXPECT_EQ(listener_->Accept(absl::Milliseconds(20)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST_F(ControlChannelTest, RefusesAPeerWithAnotherUid) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  const pid_t child = fork();
  if (child == 0) {
    if (setresuid(65534, 65534, 65534) != 0) _exit(3);
    const int s = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) _exit(4);
    char c;
    (void)!read(s, &c, 1);  // until the agent hangs up
    _exit(0);
  }
  auto ch = listener_->Accept(absl::Seconds(5));
  EXPECT_EQ(ch.status().code(), absl::StatusCode::kPermissionDenied) << ch.status();
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(ControlListenerTest, NeverReplacesAFileThatIsNotASocket) {
  const std::string path = "/tmp/opmap_cc_plain_" + std::to_string(getpid());
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  EXPECT_EQ(ControlListener::Listen(path).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
  unlink(path.c_str());
}

}  // namespace
}  // namespace opmap::transport
