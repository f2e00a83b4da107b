// The replay state machine behind simulate(): dependency counting, one actor per stream,
// collective rendezvous and phases, point-to-point delivery. Internal to sim/.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "graph/event_graph.h"
#include "sim/analytic_model.h"
#include "sim/collective_plan.h"
#include "sim/engine.h"
#include "sim/flow_log.h"
#include "topologies/routing.h"

namespace racksim::sim {

// A flow's size: SimGrid moves whole bytes.
inline uint64_t whole_bytes(double bytes) {
  return static_cast<uint64_t>(std::llround(std::max(bytes, 0.0)));
}

// Where each rank runs: its GPU host, its place in the scale-up domains, and its server's CPU
// sockets (the ends of its host <-> device copies).
struct RankPlacement {
  std::vector<simgrid::s4u::Host*> host;
  std::vector<int> domain;       // scale-up domain (server, NVL72 rack) of the rank
  std::vector<int> local_index;  // GPU index inside the domain
  std::vector<std::vector<simgrid::s4u::Host*>> numa_hosts;  // per rank: its server's sockets
  // Per rank: the host its rate-capped (NVLS) flows leave from (platform.h), or nullptr.
  std::vector<simgrid::s4u::Host*> nvls_host;
  // What the scale-up domains can do (the same for every domain).
  bool nvls = false;
  double nvls_bytes_per_s = 0;
  bool mesh = false;
};

class Replay {
 public:
  Replay(const EventGraph& graph, RankPlacement placement, const ComputeModel& compute,
         const SimOptions& options, FabricView* fabric);
  ~Replay();

  // Creates the actors; call before Engine::run().
  void start();
  // Collects the result after Engine::run(); throws if some operation never ran.
  SimResult finish();

 private:
  struct StreamActor;
  struct CollectiveRun;

  void run_stream(size_t actor);
  void wait_ready(StreamActor& actor, OpId op);
  void mark_lazy_streams();
  size_t execute_compute_run(StreamActor& actor, size_t first, double ready_s);
  // Whether the rank's host issues this stream's kernels ahead of the GPU
  // (ComputeModel::host_runs_ahead, on a GPU compute stream).
  bool host_runs_ahead(const StreamActor& actor) const;
  // The rank's issue clock once its host has issued `op` (ready at `ready_s`); changes nothing.
  double host_clock_after(const StreamActor& actor, OpId op, double ready_s) const;
  // When `op` may start: `ready_s`, or with the host running ahead the later of that and its
  // issue, which advances the rank's issue clock.
  double issued_s(const StreamActor& actor, OpId op, double ready_s);
  // Whether the host waits for the GPU before issuing `op`: the framework synchronizes after a
  // pipeline send or receive and before the optimizer (its gradient-norm and inf checks).
  bool host_syncs_before(OpId op) const;
  double op_duration_s(OpId id) const {
    const Op& op = graph_.op(id);
    return compute_.duration_s(op, graph_.shape(op.shape)) * fault_time_factor(op);
  }
  // A straggler's or slow host's factor on this compute operation (1 without faults).
  double fault_time_factor(const Op& op) const;
  bool has_dependents(OpId op) const;
  // When `op`'s dependencies (and a recv's data) are all done, as far as they are yet.
  double ready_time(OpId op) const;
  // Sleeps until `time_s` when the actor's stream ran ahead of SimGrid's clock; returns the
  // clock after.
  double sleep_until(double time_s);
  void execute_send(OpId op);
  void execute_collective(size_t actor, OpId op, double ready_s);
  double collective_delay_s(const CollectiveRun& run, uint32_t member, RankId rank);
  // Whether `op` is issued right after a kernel that lasted its host's issue time
  // (KernelBound::kHost): its host, not its GPU, sets when it starts.
  bool follows_host_bound_kernel(OpId op) const;
  // hardware.collectives.host_skew_s times E[max of `members` normals], cached per size.
  double host_skew_s(uint32_t members);
  void run_phases(CollectiveRun& run, uint32_t member, StreamActor& actor);
  void log_analytic_traffic(const CollectiveRun& run, uint32_t member, double end_s);
  void arrive(CollectiveRun& run, uint32_t member, int phase);
  CollectiveRun& join(OpId op, uint32_t* member, size_t actor);
  void choose_execution(CollectiveRun& run, const Op& op);
  void time_analytically(CollectiveRun& run, const LinearCost& cost, double now);
  // The measured curve (SimOptions::measured_collectives) that times `op`: its kind and member
  // count are in the table and its members share one scale-up domain. Null otherwise.
  const std::vector<topo::CollectiveSample>* measured_curve(const Op& op) const;
  // After a measured collective's flows: sleeps until `measured_s` after its `start_s`.
  void last_until_measured(double start_s, double measured_s);
  void note_algorithm(const CollectiveRun& run, const Op& op);
  const LinearCost& analytic_cost_of(const Op& op);
  bool simulated(RankId rank) const;
  const CommPlanner& planner_for(CommId comm);
  void execute_copy(OpId op);
  void complete(OpId op, double start_s, double end_s);
  void report_progress();
  void satisfy(OpId op, OpId by);

  const EventGraph& graph_;
  RankPlacement placement_;
  const ComputeModel& compute_;
  SimOptions options_;
  FabricView& fabric_;
  AnalyticCosts analytic_costs_;
  std::unique_ptr<LinkActivity> link_activity_;  // AUTO only
  uint64_t analytic_collectives_ = 0;
  uint64_t measured_table_collectives_ = 0;
  uint64_t flow_collectives_ = 0;
  std::map<std::tuple<CollectiveKind, CommDim, Algorithm>, AlgorithmUse> algorithm_uses_;

  std::vector<int32_t> remaining_;  // unsatisfied dependencies per operation
  std::vector<uint64_t> dependents_end_;
  std::vector<OpId> dependents_;
  std::vector<OpId> matched_recv_;
  std::vector<OpTiming> timing_;
  std::vector<double> host_issued_s_;    // per rank: when its host issued its last kernel
  std::vector<double> skew_by_members_;  // host_skew_s(n) by n, -1 until first asked
  // Per operation: the dependency that ends last so far (its release once all are done).
  std::vector<OpId> released_by_;
  std::vector<std::unique_ptr<StreamActor>> actors_;
  std::vector<int32_t> actor_index_;                    // rank * streams + stream -> actor, or -1
  std::vector<std::unique_ptr<CommPlanner>> planners_;  // per communicator, built on first use
  std::unordered_map<uint64_t, std::unique_ptr<CollectiveRun>> runs_;
  uint64_t activities_ = 0;
  uint64_t flows_ = 0;
  FlowLog flow_log_;  // bytes and busy intervals per rank pair, for the link summary
  size_t completed_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  double next_progress_s_ = 0;  // wall-clock time of the next progress call
};

}  // namespace racksim::sim
