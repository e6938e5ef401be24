#include "agent/inject/cupti/cupti_graphs.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <new>

namespace opmap::inject {
namespace {

// The recorder. Allocated once and never freed: CUPTI may call back until the process
// ends, and the table is read by the decode worker of every window.
struct Recorder {
  CuptiApi api;
  GraphNodeTable table;
  GraphIdFns ids;
  GraphStackFn stack = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
};

constinit std::atomic<bool> g_requested{false};
constinit std::atomic<bool> g_started{false};  // StartGraphRecording was called
constinit std::atomic<Recorder*> g_recorder{nullptr};
// Why the recorder is not running; written once, before g_failed is set.
std::string* g_reason = nullptr;
constinit std::atomic<bool> g_failed{false};
constinit std::atomic<bool> g_cupti_finalized{false};

constexpr CUpti_CallbackIdResource kResourceCallbacks[] = {
    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
};

void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || userdata == nullptr) return;
  auto* r = static_cast<Recorder*>(userdata);
  // gettid once per callback: graph building is not a hot path.
  RecordGraphCallback(&r->table, r->ids, r->stack, static_cast<uint32_t>(syscall(SYS_gettid)),
                      cbid, cbdata);
}

bool Fail(std::string* reason, std::string why) {
  *reason = std::move(why);
  g_reason = new (std::nothrow) std::string(*reason);
  g_failed.store(true, std::memory_order_release);
  return false;
}

}  // namespace

void RecordGraphCallback(GraphNodeTable* table, const GraphIdFns& ids, GraphStackFn stack,
                         uint32_t tid, CUpti_CallbackId cbid, const void* cbdata) {
  const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
  if (table == nullptr || resource == nullptr) return;
  // For graph callbacks CUPTI passes its CUpti_GraphData as the resource descriptor.
  const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
  if (graph == nullptr || ids.node_id == nullptr) return;
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: {
      uint64_t node = 0;
      if (ids.node_id(graph->node, &node) != CUPTI_SUCCESS || node == 0) return;
      uint32_t graph_id = 0;
      if (ids.graph_id == nullptr || ids.graph_id(graph->graph, &graph_id) != CUPTI_SUCCESS) {
        graph_id = 0;
      }
      GraphStackLevel levels[ring::kMaxGraphNodeLevels];
      const uint32_t depth = stack != nullptr ? stack(levels, ring::kMaxGraphNodeLevels) : 0;
      // The creating API call's correlation id is not known here without API callbacks,
      // which would cost every CUDA call for the life of the process: 0 = unknown.
      table->AddCreated(node, graph_id, /*correlation=*/0, tid, levels, depth);
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: {
      uint64_t clone = 0, original = 0;
      if (ids.node_id(graph->node, &clone) != CUPTI_SUCCESS ||
          ids.node_id(graph->originalNode, &original) != CUPTI_SUCCESS) {
        return;
      }
      table->AddClone(clone, original);
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
      table->NoteExec();
      return;
    default:
      return;
  }
}

void NoteGraphRecordingRequested() { g_requested.store(true, std::memory_order_release); }

bool GraphRecordingFailed() { return g_failed.load(std::memory_order_acquire); }

bool StartGraphRecording(GraphStackFn stack, ring::RingWriter* drops, std::string* reason) {
  NoteGraphRecordingRequested();
  if (g_started.exchange(true, std::memory_order_acq_rel)) {
    *reason = "graph recording was already started";
    return g_recorder.load(std::memory_order_acquire) != nullptr;
  }
  auto* r = new (std::nothrow) Recorder();
  if (r == nullptr) return Fail(reason, "out of memory");
  if (!LoadCuptiApi(&r->api, reason)) return Fail(reason, *reason);
  if (r->api.cuptiEnableCallback == nullptr || r->api.cuptiGetGraphNodeId == nullptr ||
      r->api.cuptiGetGraphId == nullptr) {
    return Fail(reason, r->api.path + " has no graph node API (cuptiGetGraphNodeId; an old CUPTI)");
  }
  if (!r->table.Init(GraphTableLimits{}, drops)) return Fail(reason, "out of memory (graph table)");
  r->ids.node_id = r->api.cuptiGetGraphNodeId;
  r->ids.graph_id = r->api.cuptiGetGraphId;
  r->stack = stack;
  CUptiResult res = r->api.cuptiSubscribe(&r->subscriber, OnCallback, r);
  if (res != CUPTI_SUCCESS) {
    return Fail(reason, res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                            ? "another CUPTI subscriber is active (Nsight Systems or Kineto?)"
                            : CuptiFailure(r->api, "cuptiSubscribe", res));
  }
  for (CUpti_CallbackIdResource cbid : kResourceCallbacks) {
    res = r->api.cuptiEnableCallback(1, r->subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid);
    if (res != CUPTI_SUCCESS) {
      r->api.cuptiUnsubscribe(r->subscriber);
      return Fail(reason, CuptiFailure(r->api, "cuptiEnableCallback(RESOURCE)", res));
    }
  }
  // The Recorder leaks on purpose on every failure path above: CUPTI may hold `r`.
  g_recorder.store(r, std::memory_order_release);
  return true;
}

void NoteCuptiFinalized() { g_cupti_finalized.store(true, std::memory_order_release); }

void FinalizeGraphRecording() {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  if (r == nullptr || g_cupti_finalized.exchange(true, std::memory_order_acq_rel)) return;
  r->api.cuptiFinalize();
}

CUpti_SubscriberHandle GraphRecordingSubscriber() {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  return r != nullptr ? r->subscriber : nullptr;
}

GraphNodeTable* GraphRecordingTable() {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  return r != nullptr ? &r->table : nullptr;
}

bool GraphRecordingStatus(uint16_t* code, std::string* message) {
  if (!g_requested.load(std::memory_order_acquire)) return false;
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) {
    const GraphTableCounts c = r->table.counts();
    const GraphTableLimits& l = r->table.limits();
    *message = "recording: " + std::to_string(c.nodes) + " nodes (" + std::to_string(c.clones) +
               " clones), " + std::to_string(c.ranges) + " ranges, " +
               std::to_string(c.graphs) + " graphs, " + std::to_string(c.execs) +
               " instantiations";
    *code = ring::kStatusOk;
    if (c.nodes_dropped > 0 || c.ranges_dropped > 0) {
      // Every window says so: the loss happened when the graphs were built, usually
      // before any window, so no window's drop counts would show it.
      *code = ring::kStatusError;
      *message = "graph table full (bounds: " + std::to_string(l.max_nodes) + " nodes, " +
                 std::to_string(l.max_ranges) + " ranges, " + std::to_string(l.max_graphs) +
                 " graphs): " + std::to_string(c.nodes_dropped) + " nodes and " +
                 std::to_string(c.ranges_dropped) +
                 " ranges not recorded; their kernels map by graph launch; " + *message;
    }
    return true;
  }
  *code = ring::kStatusUnavailable;
  if (g_failed.load(std::memory_order_acquire)) {
    *message = g_reason != nullptr ? *g_reason : "out of memory";
  } else {
    *message = "not started: cuInit has not called the library's InitializeInjection (no "
               "CUDA in this process yet, CUDA_INJECTION64_PATH names another tool, or cuInit "
               "ran before the library was loaded)";
  }
  return true;
}

}  // namespace opmap::inject
