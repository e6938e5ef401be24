#include "agent/inject/ring_memfd.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ctime>

#include "agent/inject/ring_writer.h"

namespace opmap::inject {

bool CreateRing(uint64_t capacity, RingMemory* out) {
  const int fd = memfd_create("opmap-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return false;
  const uint64_t bytes = ring::kHeaderBytes + capacity;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    close(fd);
    return false;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    close(fd);
    return false;
  }
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  ring::InitRing(base, capacity, static_cast<uint32_t>(getpid()),
                 int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec);
  out->fd = fd;
  out->base = base;
  out->capacity = capacity;
  return true;
}

}  // namespace opmap::inject
