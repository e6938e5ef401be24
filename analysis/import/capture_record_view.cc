#include "analysis/import/capture_record_view.h"

namespace opmap::analysis {
namespace {

template <typename T>
std::optional<std::string_view> NameAfter(std::span<const uint8_t> record) {
  const auto fixed = FixedPart<T>(record);
  if (!fixed) return std::nullopt;
  return InlineText(record, sizeof(T), 0, fixed->name_len);
}

}  // namespace

std::optional<std::string_view> InlineText(std::span<const uint8_t> record, size_t fixed,
                                           size_t offset, size_t len) {
  if (fixed > record.size() || offset > record.size() - fixed ||
      len > record.size() - fixed - offset) {
    return std::nullopt;
  }
  return std::string_view(reinterpret_cast<const char*>(record.data()) + fixed + offset, len);
}

std::optional<std::string_view> RecordName(std::span<const uint8_t> record) {
  switch (RecordTypeOf(record)) {
    case ring::kRange: return NameAfter<ring::RangeRecord>(record);
    case ring::kRangeStart: return NameAfter<ring::RangeStartRecord>(record);
    case ring::kDomain: return NameAfter<ring::DomainRecord>(record);
    case ring::kKernel: return NameAfter<ring::KernelRecord>(record);
    case ring::kApi: return NameAfter<ring::ApiRecord>(record);
    case ring::kStatus: {
      const auto s = FixedPart<ring::StatusRecord>(record);
      if (!s) return std::nullopt;
      return InlineText(record, sizeof(ring::StatusRecord), 0, s->message_len);
    }
    case ring::kStall: {
      const auto s = FixedPart<ring::StallRecord>(record);
      if (!s) return std::nullopt;
      return InlineText(record, sizeof(ring::StallRecord), 0, s->function_len);
    }
    default: return std::string_view();
  }
}

std::optional<std::string_view> StallReason(std::span<const uint8_t> record) {
  if (RecordTypeOf(record) != ring::kStall) return std::nullopt;
  const auto s = FixedPart<ring::StallRecord>(record);
  if (!s) return std::nullopt;
  return InlineText(record, sizeof(ring::StallRecord), s->function_len, s->reason_len);
}

}  // namespace opmap::analysis
