// The debug capture file (OPMAP_CAPTURE_FILE): what libopmap_inject.so writes when it
// captures one window on its own, without an agent. Read it with
// analysis/import/capture_file_parser.h. Explicitly sized types only, little-endian (the producer's
// byte order; opmap runs on x86-64 and aarch64, both little-endian).
//
//   FileHeader        64 bytes: magic "OPMAPCAP", version, pid, created_ns, ring capacity
//   MetadataRecord    the hello metadata ("key=value\n" lines: pid, cmdline, model, ...)
//   record ...        every ring record exactly as it was in the ring (RecordHeader with
//                     size|kCommitBit, fixed part, inline bytes, 8-byte aligned), in ring
//                     order; kPadding is never written
//   TrailerRecord     the ring's counters when the file was closed: drops by cause,
//                     records committed, names truncated, records written to the file
//
// A file without a TrailerRecord was cut short (the process died mid-capture); its
// records up to the cut are still valid. The two file-only record types (0x100, 0x101)
// are outside the ring's RecordType range, so a ring reader never confuses them.
#ifndef OPMAP_ABI_CAPTURE_FILE_FORMAT_H_
#define OPMAP_ABI_CAPTURE_FILE_FORMAT_H_

#include <cstdint>

#include "abi/ring_records.h"

namespace opmap::capfile {

constexpr char kMagic[8] = {'O', 'P', 'M', 'A', 'P', 'C', 'A', 'P'};
constexpr uint32_t kVersion = 1;

struct FileHeader {
  char magic[8];          // kMagic
  uint32_t version;       // kVersion
  uint32_t header_bytes;  // sizeof(FileHeader)
  uint32_t pid;           // the captured process
  uint32_t ring_version;  // ring::kVersion of the records that follow
  int64_t created_ns;     // CLOCK_REALTIME when the file was opened
  uint64_t ring_capacity;
  uint8_t reserved[24];
};
static_assert(sizeof(FileHeader) == 64);

enum FileRecordType : uint16_t {
  kFileMetadata = 0x100,
  kFileTrailer = 0x101,
};

// kFileMetadata, then `text_len` bytes of "key=value\n" lines.
struct MetadataRecord {
  ring::RecordHeader h;
  uint32_t text_len;
  uint32_t reserved;
};
static_assert(sizeof(MetadataRecord) == 16);

// kFileTrailer: the last record of a complete file.
struct TrailerRecord {
  ring::RecordHeader h;
  int64_t closed_ns;
  uint64_t records_written;    // ring records in this file (metadata and trailer not counted)
  uint64_t records_committed;  // RingHeader::records_committed at close
  uint64_t names_truncated;    // RingHeader::names_truncated at close
  uint64_t drops[ring::kDropCauseCount];  // RingHeader::drops at close, by DropCause
  uint64_t write_errors;       // ring records the library could not write to the file
};
static_assert(sizeof(TrailerRecord) == 112);

}  // namespace opmap::capfile

#endif  // OPMAP_ABI_CAPTURE_FILE_FORMAT_H_
