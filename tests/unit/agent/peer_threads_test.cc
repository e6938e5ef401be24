// PeerThreads: the bound on peers served at once, and joins that never wait on a peer
// still being served unless asked to.
#include "agent/daemon/peer_threads.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "gtest/gtest.h"

namespace opmap::agent {
namespace {

TEST(PeerThreads, RefusesPastItsBoundAndReapsOnlyFinishedOnes) {
  PeerThreads threads(2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> served{0};
  auto slow_peer = [&] {
    gate.wait();
    ++served;
  };
  EXPECT_TRUE(threads.TryStart(slow_peer));
  EXPECT_TRUE(threads.TryStart(slow_peer));
  EXPECT_FALSE(threads.TryStart([&] { ++served; }));  // a third peer: refused, not run
  threads.Reap(/*wait=*/false);                       // returns although both still wait
  EXPECT_EQ(served.load(), 0);
  release.set_value();
  threads.Reap(/*wait=*/true);
  EXPECT_EQ(served.load(), 2);
  EXPECT_TRUE(threads.TryStart([&] { ++served; }));  // room again once they are joined
  threads.Reap(/*wait=*/true);
  EXPECT_EQ(served.load(), 3);
}

}  // namespace
}  // namespace opmap::agent
