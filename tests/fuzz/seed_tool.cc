// Seeds from real data for the fuzz targets whose inputs no tool exports: it imports the
// real traces (../shared/traces, Kineto) and Nsight Systems exports (../shared/nsys),
// cuts small slices of them (a run of launch calls, their GPU events and the ranges
// around them), and writes each slice as
//   batch_ingest_fuzzer/   the Batches `opmap import` / the agent would send for it
//                          (one or two sessions, several batches each, with counters and
//                          drops on the last batch), in batch_ingest_fuzzer's format
//   ring_reader_fuzzer/    the ring a producer would have filled with its records
//                          (wrapping at the lap's end, with padding), in
//                          ring_reader_fuzzer's format
//   capture_file_fuzzer/   the capture file libopmap_inject would write (and a copy cut
//                          short in its last record)
// Deterministic: the same data gives the same seeds. The data never enters the repo.
//
// usage: fuzz_seed_tool SHARED_DIR OUTDIR   (run_all.sh runs it)
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "agent/transport/capture_file.h"
#include "abi/ring_records.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"
#include "analysis/wire/batch_codec.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace fs = std::filesystem;
using namespace opmap;
using analysis::Trace;

constexpr size_t kCalls = 12;        // launch calls per slice
constexpr size_t kSlicesPerTrace = 3;
constexpr size_t kMaxFileBytes = 4 << 20;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Launch calls [first, first + kCalls) in start order, the GPU events they launched, and
// the ranges on their threads overlapping them; names re-interned into the slice.
Trace Slice(const Trace& t, size_t first) {
  Trace s;
  s.info.format = t.info.format;
  s.info.gpu_names = t.info.gpu_names;
  auto name = [&](analysis::StringId id) { return s.strings.Intern(t.strings.Get(id)); };
  std::vector<size_t> calls(t.api_calls.size());
  for (size_t i = 0; i < calls.size(); ++i) calls[i] = i;
  std::stable_sort(calls.begin(), calls.end(), [&](size_t a, size_t b) {
    return t.api_calls[a].start_ns < t.api_calls[b].start_ns;
  });
  absl::flat_hash_set<int64_t> correlations, threads;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t k = first; k < calls.size() && k < first + kCalls; ++k) {
    analysis::ApiCall c = t.api_calls[calls[k]];
    correlations.insert(c.correlation);
    threads.insert(c.thread);
    lo = std::min(lo, c.start_ns);
    hi = std::max(hi, c.end_ns());
    c.name = name(c.name);
    s.api_calls.push_back(c);
  }
  for (const analysis::GpuEvent& g : t.gpu_events) {
    if (s.gpu_events.size() >= 3 * kCalls) break;
    // With no launch calls at all, the first GPU events from `first` on.
    const bool take = s.api_calls.empty() ? &g - t.gpu_events.data() >= static_cast<ptrdiff_t>(first)
                                          : correlations.contains(g.correlation);
    if (!take) continue;
    analysis::GpuEvent e = g;
    e.name = name(e.name);
    s.gpu_events.push_back(e);
  }
  for (const analysis::Range& r : t.ranges) {
    if (s.ranges.size() >= 2 * kCalls) break;
    if (!threads.contains(r.thread) || r.end_ns() < lo || r.start_ns > hi) continue;
    analysis::Range x = r;
    x.name = name(x.name);
    x.input_dims = name(x.input_dims);
    x.input_types = name(x.input_types);
    x.concrete_inputs = name(x.concrete_inputs);
    x.input_strides = name(x.input_strides);
    s.ranges.push_back(x);
  }
  return s;
}

// ---- batch_ingest_fuzzer --------------------------------------------------------------

std::vector<v1::Batch> Batches(const Trace& slice, const std::string& session) {
  analysis::BatchingOptions o;
  o.agent_id = "seed-agent";
  o.session_id = session;
  o.resource.set_host("seed-host");
  o.resource.set_pid(4242);
  o.resource.set_model_name("seed-model");
  o.resource.set_model_revision("r1");
  (*o.resource.mutable_labels())["job"] = "fuzz";
  for (size_t i = 0; i < slice.info.gpu_names.size() && i < 2; ++i) {
    v1::Gpu* g = o.resource.add_gpus();
    g->set_device(static_cast<uint32_t>(i));
    g->set_name(slice.info.gpu_names[i]);
    g->set_uuid("GPU-seed-" + std::to_string(i));
  }
  const size_t records = slice.gpu_events.size() + slice.api_calls.size() + slice.ranges.size();
  o.max_records_per_batch = std::max<size_t>(1, (records + 3) / 4);  // ~4 batches
  absl::StatusOr<std::vector<v1::Batch>> b = analysis::TraceToBatches(slice, o);
  if (!b.ok()) return {};
  // The agent's tail on the last batch: counters and drops (window_batches.cc AddTail).
  uint32_t known = 0;
  for (size_t i = 0; i + 1 < b->size(); ++i) known += (*b)[i].strings().strings_size();
  v1::Batch& last = b->back();
  v1::StringTableDelta* d = last.mutable_strings();
  if (d->strings_size() == 0) d->set_base_index(known);
  const uint32_t counter = d->base_index() + d->strings_size();
  d->add_strings("PAPI_TOT_CYC");
  for (int i = 0; i < 2; ++i) {
    v1::CounterSamples* cs = last.mutable_counters();
    cs->add_name_id(counter);
    cs->add_source(v1::COUNTER_SOURCE_PAPI);
    cs->add_ts_ns(1'000'000 * (i + 1));
    cs->add_value(1000 + i);
    cs->add_time_enabled_ns(1'000'000);
    cs->add_time_running_ns(900'000);
  }
  v1::DropCount* drop = last.mutable_drops()->add_counts();
  drop->set_count(3);
  drop->set_reason("ring full");
  v1::Unavailable* u = last.mutable_drops()->add_unavailable();
  u->set_what("cupti");
  u->set_reason("no CUDA driver");
  return *std::move(b);
}

void WriteBatchSeeds(const fs::path& dir, const std::string& stem, const Trace& a,
                     const Trace& b) {
  std::vector<v1::Batch> one = Batches(a, stem + "-a");
  std::vector<v1::Batch> two = Batches(b, stem + "-b");
  if (one.empty()) return;
  std::string single(1, '\x5a');
  for (const v1::Batch& x : one) fuzz::AppendChunk(&single, x.SerializeAsString());
  WriteFile(dir / (stem + ".batches"), single);
  // Two sessions interleaved, as one stream carries them.
  std::string both(1, '\xa3');
  for (size_t i = 0; i < std::max(one.size(), two.size()); ++i) {
    if (i < one.size()) fuzz::AppendChunk(&both, one[i].SerializeAsString());
    if (i < two.size()) fuzz::AppendChunk(&both, two[i].SerializeAsString());
  }
  WriteFile(dir / (stem + "_2sessions.batches"), both);
}

// ---- ring and capture records -----------------------------------------------------------

template <typename T>
void AddRecord(std::vector<std::string>* out, uint16_t type, T fixed, std::string_view text1,
               std::string_view text2 = {}) {
  const uint32_t size = ring::AlignRecord(
      static_cast<uint32_t>(sizeof(T) + text1.size() + text2.size()));
  fixed.h.size_and_commit = size | ring::kCommitBit;
  fixed.h.type = type;
  fixed.h.flags = 0;
  std::string rec(size, '\0');
  std::memcpy(rec.data(), &fixed, sizeof(T));
  std::memcpy(rec.data() + sizeof(T), text1.data(), text1.size());
  std::memcpy(rec.data() + sizeof(T) + text1.size(), text2.data(), text2.size());
  out->push_back(std::move(rec));
}

std::string Cut(std::string_view s, size_t n) { return std::string(s.substr(0, n)); }

// The records libopmap_inject would have written for the slice, in time order.
std::vector<std::string> Records(const Trace& s) {
  std::vector<std::pair<int64_t, std::string>> timed;
  auto add = [&](int64_t t, std::vector<std::string>&& recs) {
    for (std::string& r : recs) timed.emplace_back(t, std::move(r));
  };
  int64_t begin = INT64_MAX, end = 0;
  for (const analysis::ApiCall& c : s.api_calls) {
    ring::ApiRecord r{};
    r.start_ns = c.start_ns;
    r.end_ns = c.end_ns();
    r.correlation_id = static_cast<uint64_t>(std::max<int64_t>(0, c.correlation));
    r.tid = static_cast<uint32_t>(c.thread);
    r.pid = 4242;
    r.domain = c.kind == analysis::ApiKind::kDriver ? ring::kApiDriver : ring::kApiRuntime;
    const std::string n = Cut(s.strings.Get(c.name), 200);
    r.name_len = static_cast<uint16_t>(n.size());
    std::vector<std::string> v;
    AddRecord(&v, ring::kApi, r, n);
    if (c.external_id > 0) {
      ring::ExternalCorrelationRecord x{};
      x.external_id = static_cast<uint64_t>(c.external_id);
      x.correlation_id = r.correlation_id;
      AddRecord(&v, ring::kExternalCorrelation, x, "");
    }
    add(c.end_ns(), std::move(v));
    begin = std::min(begin, c.start_ns);
    end = std::max(end, c.end_ns());
  }
  for (const analysis::GpuEvent& g : s.gpu_events) {
    std::vector<std::string> v;
    const uint64_t corr = static_cast<uint64_t>(std::max<int64_t>(0, g.correlation));
    if (g.kind == analysis::GpuEventKind::kKernel) {
      ring::KernelRecord k{};
      k.start_ns = g.start_ns;
      k.end_ns = g.end_ns();
      k.correlation_id = corr;
      k.device_id = static_cast<uint32_t>(g.device);
      k.stream_id = static_cast<uint32_t>(g.stream);
      k.grid_x = g.grid[0], k.grid_y = g.grid[1], k.grid_z = g.grid[2];
      k.block_x = g.block[0], k.block_y = g.block[1], k.block_z = g.block[2];
      k.registers_per_thread = static_cast<uint16_t>(std::max(0, g.registers_per_thread));
      const std::string n = Cut(s.strings.Get(g.name), 300);
      k.name_len = static_cast<uint16_t>(n.size());
      AddRecord(&v, ring::kKernel, k, n);
    } else if (g.kind == analysis::GpuEventKind::kMemcpy) {
      ring::MemcpyRecord m{};
      m.start_ns = g.start_ns;
      m.end_ns = g.end_ns();
      m.bytes = static_cast<uint64_t>(std::max<int64_t>(0, g.bytes));
      m.correlation_id = corr;
      m.device_id = static_cast<uint32_t>(g.device);
      m.stream_id = static_cast<uint32_t>(g.stream);
      m.copy_kind = 1;
      AddRecord(&v, ring::kMemcpy, m, "");
    } else {
      ring::MemsetRecord m{};
      m.start_ns = g.start_ns;
      m.end_ns = g.end_ns();
      m.bytes = static_cast<uint64_t>(std::max<int64_t>(0, g.bytes));
      m.correlation_id = corr;
      m.device_id = static_cast<uint32_t>(g.device);
      m.stream_id = static_cast<uint32_t>(g.stream);
      AddRecord(&v, ring::kMemset, m, "");
    }
    add(g.end_ns(), std::move(v));
    begin = std::min(begin, g.start_ns);
    end = std::max(end, g.end_ns());
  }
  for (size_t i = 0; i < s.ranges.size(); ++i) {
    const analysis::Range& x = s.ranges[i];
    const std::string n = Cut(s.strings.Get(x.name), 200);
    std::vector<std::string> v;
    if (i % 4 == 3) {  // some as start/end ranges
      ring::RangeStartRecord st{};
      st.range_id = i + 1;
      st.start_ns = x.start_ns;
      st.tid = static_cast<uint32_t>(x.thread);
      st.name_len = static_cast<uint16_t>(n.size());
      AddRecord(&v, ring::kRangeStart, st, n);
      add(x.start_ns, std::move(v));
      v.clear();
      ring::RangeEndRecord e{};
      e.range_id = i + 1;
      e.end_ns = x.end_ns();
      e.tid = st.tid;
      AddRecord(&v, ring::kRangeEnd, e, "");
    } else {
      ring::RangeRecord r{};
      r.start_ns = x.start_ns;
      r.end_ns = x.end_ns();
      r.tid = static_cast<uint32_t>(x.thread);
      r.domain_id = i % 5 == 1 ? 7 : 0;
      r.payload_kind = i % 3 == 0 ? ring::kPayloadUint64 : ring::kPayloadNone;
      r.payload = i;
      r.name_len = static_cast<uint16_t>(n.size());
      AddRecord(&v, ring::kRange, r, n);
    }
    add(x.end_ns(), std::move(v));
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  ring::WindowRecord w{};
  w.window_id = 1;
  w.time_ns = begin == INT64_MAX ? 1 : begin;
  w.mark = ring::kWindowBegin;
  AddRecord(&out, ring::kWindow, w, "");
  ring::DomainRecord dom{};
  dom.domain_id = 7;
  dom.name_len = 5;
  AddRecord(&out, ring::kDomain, dom, "model");
  ring::StatusRecord st{};
  st.time_ns = w.time_ns;
  st.component = ring::kComponentPcSampling;
  st.code = ring::kStatusUnavailable;
  const std::string_view why = "not enabled for this window";
  st.message_len = static_cast<uint16_t>(why.size());
  AddRecord(&out, ring::kStatus, st, why);
  for (auto& [t, r] : timed) out.push_back(std::move(r));
  if (!s.gpu_events.empty()) {
    const std::string fn = Cut(s.strings.Get(s.gpu_events[0].name), 200);
    const std::string_view reason = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
    ring::StallRecord sr{};
    sr.samples = 17;
    sr.function_len = static_cast<uint16_t>(fn.size());
    sr.reason_len = static_cast<uint16_t>(reason.size());
    AddRecord(&out, ring::kStall, sr, fn, reason);
  }
  w.time_ns = std::max(end, w.time_ns);
  w.mark = ring::kWindowEnd;
  AddRecord(&out, ring::kWindow, w, "");
  return out;
}

// ring_reader_fuzzer's input: flags, header, then the data from read_pos's offset on,
// padded at the lap's end as a producer does. Starts `lead` bytes before a lap's end.
void WriteRingSeed(const fs::path& path, const std::vector<std::string>& records,
                   uint64_t lead) {
  constexpr uint64_t kLap = ring::kMinCapacity;
  constexpr size_t kMaxData = 24 * 1024;
  ring::RingHeader h{};
  h.magic = ring::kMagic;
  h.version = ring::kVersion;
  h.header_bytes = ring::kHeaderBytes;
  h.pid = 4242;
  h.capacity = kLap;
  h.created_ns = 1'700'000'000'000'000'000;
  const uint64_t read = 3 * kLap - lead;
  h.read_pos.store(read);
  std::string data;
  uint64_t pos = read;
  uint64_t committed = 0;
  for (const std::string& r : records) {
    const uint64_t to_end = kLap - (pos & (kLap - 1));
    if (r.size() > to_end) {  // the producer pads out the lap
      ring::RecordHeader pad{static_cast<uint32_t>(to_end) | ring::kCommitBit, ring::kPadding, 0};
      std::string p(to_end, '\0');
      std::memcpy(p.data(), &pad, sizeof(pad));
      data += p;
      pos += to_end;
    }
    if (data.size() + r.size() > kMaxData) break;
    data += r;
    pos += r.size();
    ++committed;
  }
  h.write_pos.store(pos);
  h.records_committed.store(committed);
  h.drops[ring::kRingFull].store(2);
  std::string seed(1, '\x0f');  // valid magic/version/header, 64 KiB, write_pos from data
  seed.append(reinterpret_cast<const char*>(&h), sizeof(h));
  seed += data;
  WriteFile(path, seed);
}

void WriteCaptureSeeds(const fs::path& dir, const std::string& stem,
                       const std::vector<std::string>& records) {
  const fs::path path = dir / (stem + ".opmapcap");
  absl::StatusOr<transport::CaptureFileWriter> w = transport::CaptureFileWriter::Create(
      path.string(), 4242, ring::kDefaultCapacity,
      "pid=4242\nmodel=seed-model\nframework=pytorch\ncmdline=python train.py\n");
  if (!w.ok()) return;
  for (const std::string& r : records) {
    (void)w->Append(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r.data()), r.size()));
  }
  capfile::TrailerRecord t{};
  t.closed_ns = 1'700'000'000'000'000'001;
  t.records_committed = records.size();
  t.drops[ring::kRingFull] = 1;
  (void)w->Finish(t);
  std::string bytes = ReadFile(path);
  // A process that died mid-write: the file ends inside its last ring record.
  if (bytes.size() > sizeof(capfile::TrailerRecord) + 20) {
    WriteFile(dir / (stem + "_cut.opmapcap"), bytes.substr(0, bytes.size() - sizeof(capfile::TrailerRecord) - 12));
  }
}

void Seeds(const fs::path& out, const std::string& stem, const Trace& t) {
  const size_t n = std::max(t.api_calls.size(), t.gpu_events.size());
  for (size_t k = 0; k < kSlicesPerTrace; ++k) {
    const size_t first = n <= kCalls ? 0 : (n - kCalls) * k / kSlicesPerTrace;
    const Trace a = Slice(t, first);
    if (a.gpu_events.empty() && a.api_calls.empty() && a.ranges.empty()) continue;
    const Trace b = Slice(t, first + kCalls);
    const std::string name = stem + "_" + std::to_string(k);
    WriteBatchSeeds(out / "batch_ingest_fuzzer", name, a, b);
    const std::vector<std::string> records = Records(a);
    WriteRingSeed(out / "ring_reader_fuzzer" / (name + ".ring"), records, 512 + 1024 * k);
    WriteCaptureSeeds(out / "capture_file_fuzzer", name, records);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seed_tool SHARED_DIR OUTDIR\n");
    return 2;
  }
  const fs::path shared = argv[1], out = argv[2];
  for (const char* d : {"batch_ingest_fuzzer", "ring_reader_fuzzer", "capture_file_fuzzer"}) {
    fs::create_directories(out / d);
  }
  std::vector<fs::path> inputs;
  for (const char* sub : {"traces", "nsys"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(shared / sub, ec)) inputs.push_back(e.path());
  }
  std::sort(inputs.begin(), inputs.end());
  int traces = 0;
  for (const fs::path& p : inputs) {
    const std::string name = p.filename().string();
    const bool kineto = name.ends_with(".json") || name.ends_with(".json.gz");
    const bool nsys = name.ends_with(".sqlite");
    if ((!kineto && !nsys) || fs::file_size(p) > kMaxFileBytes) continue;
    absl::StatusOr<Trace> t = kineto ? analysis::ImportKinetoBytes(ReadFile(p))
                                     : analysis::ImportNsysSqlite(ReadFile(p));
    if (!t.ok()) {
      std::fprintf(stderr, "fuzz_seed_tool: skip %s: %s\n", name.c_str(),
                   std::string(t.status().message()).c_str());
      continue;
    }
    Seeds(out, name.substr(0, name.find('.')), *t);
    ++traces;
  }
  std::printf("fuzz_seed_tool: seeds from %d traces in %s\n", traces, out.c_str());
  return traces > 0 ? 0 : 1;
}
