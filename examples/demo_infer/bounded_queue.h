// A bounded multi-producer multi-consumer FIFO. A full queue makes the producer wait (the
// server pushes back on its clients instead of dropping requests, so every request is
// served and the wait shows up in its latency); Push reports whether it had to wait.
#ifndef OPMAP_EXAMPLES_DEMO_INFER_BOUNDED_QUEUE_H_
#define OPMAP_EXAMPLES_DEMO_INFER_BOUNDED_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace opmap::demo {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  // Returns true when the queue was full and the caller had to wait.
  bool Push(T item) {
    std::unique_lock<std::mutex> lock(mu_);
    const bool waited = items_.size() >= capacity_;
    not_full_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return waited;
  }

  // Blocks until an item arrives; nullopt once Close() was called and the queue drained.
  std::optional<T> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // No more pushes will come; wakes every waiting consumer.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace opmap::demo

#endif  // OPMAP_EXAMPLES_DEMO_INFER_BOUNDED_QUEUE_H_
