// The CUDA graph recorder (OPMAP_GRAPH_NODES=1): CUPTI resource callbacks for graph node
// creation and cloning and for graph instantiation, recorded into a GraphNodeTable with
// the NVTX ranges open on the creating thread — whenever graphs are built, which for a
// serving process is at start-up, minutes before any window. The decoder writes a node's
// entry into the ring before its first kernel of each window (graph_nodes.h).
//
// It must be running before the graphs are captured, so it starts inside cuInit
// (InitializeInjection, inject_main.cc) and holds CUPTI's one callback subscriber for the
// life of the process; windows then share that subscriber (CuptiCapture::Start) instead
// of taking their own. The cost of holding it: another CUPTI client that subscribes
// later (Kineto's callback API, Nsight tools attaching) is refused by CUPTI — which is
// why this is opt-in.
//
// Thread safety: StartGraphRecording once, from InitializeInjection; the rest from any
// thread.
#ifndef OPMAP_AGENT_INJECT_CUPTI_CUPTI_GRAPHS_H_
#define OPMAP_AGENT_INJECT_CUPTI_CUPTI_GRAPHS_H_

#include <cstdint>
#include <string>

#include "agent/inject/cupti/cupti_api.h"
#include "agent/inject/cupti/graph_nodes.h"
#include "agent/inject/graph_stack.h"

namespace opmap::inject {

// How the callback turns CUPTI's handles into ids: cuptiGetGraphNodeId/cuptiGetGraphId,
// or a test's fakes.
struct GraphIdFns {
  CUptiResult (*node_id)(CUgraphNode node, uint64_t* id) = nullptr;
  CUptiResult (*graph_id)(CUgraph graph, uint32_t* id) = nullptr;
};

// One CUPTI_CB_DOMAIN_RESOURCE callback into `table`: GRAPHNODE_CREATED (with `stack`'s
// ranges, may be null, and thread `tid`), GRAPHNODE_CLONED, GRAPHEXEC_CREATED; other ids
// and callbacks without CUpti_GraphData are ignored. What the recorder's CUPTI callback
// runs, exposed so tests drive it with synthetic callback data.
void RecordGraphCallback(GraphNodeTable* table, const GraphIdFns& ids, GraphStackFn stack,
                         uint32_t tid, CUpti_CallbackId cbid, const void* cbdata);

// The process's recorder: loads CUPTI, subscribes, enables the three resource callbacks.
// False with `*reason` (reported at each window as "graph_nodes: unavailable: <reason>").
// `drops` is the ring where kGraphTableFull is counted.
bool StartGraphRecording(GraphStackFn stack, ring::RingWriter* drops, std::string* reason);

// OPMAP_GRAPH_NODES was set: a window reports what became of the recorder.
void NoteGraphRecordingRequested();
// StartGraphRecording was called and failed.
bool GraphRecordingFailed();

// The recorder's subscriber and table; null when it is not running.
CUpti_SubscriberHandle GraphRecordingSubscriber();
GraphNodeTable* GraphRecordingTable();

// cuptiFinalize is called once per process: CuptiCapture::Finalize notes that it did, and
// FinalizeGraphRecording (process exit) calls it when the recorder subscribed and nobody
// did — CUDA 13 segfaults at exit when a used libcupti is unloaded unfinalized.
void NoteCuptiFinalized();
void FinalizeGraphRecording();

// What a window reports (kComponentGraphNodes): false when recording was not asked for;
// else the status code (ring::StatusCode) and its message — "recording: ...", the reason
// it is unavailable, or an error naming the bound that was reached.
bool GraphRecordingStatus(uint16_t* code, std::string* message);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_CUPTI_CUPTI_GRAPHS_H_
