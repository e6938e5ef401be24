// The records one window drained, back to back in one growing buffer: one allocation per
// doubling instead of one per record, and no per-record header — the agent's memory per
// captured record is the record itself plus an 8-byte offset.
#ifndef OPMAP_AGENT_DAEMON_RECORD_BUFFER_H_
#define OPMAP_AGENT_DAEMON_RECORD_BUFFER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opmap::agent {

class RecordBuffer {
 public:
  void Append(std::span<const uint8_t> record) {
    offsets_.push_back(bytes_.size());
    bytes_.append(reinterpret_cast<const char*>(record.data()), record.size());
  }
  size_t size() const { return offsets_.size(); }
  size_t bytes() const { return bytes_.size(); }
  std::string_view operator[](size_t i) const {
    const size_t end = i + 1 < offsets_.size() ? offsets_[i + 1] : bytes_.size();
    return std::string_view(bytes_).substr(offsets_[i], end - offsets_[i]);
  }
  void Release() {  // empties and returns the memory
    std::string().swap(bytes_);
    std::vector<uint64_t>().swap(offsets_);
  }

 private:
  std::string bytes_;
  std::vector<uint64_t> offsets_;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_RECORD_BUFFER_H_
