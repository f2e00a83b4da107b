// What one operation and one SimGrid activity cost the replay engine (Google Benchmark; a
// benchmark, not a test: run `build/replay_bench` by hand).
//
// Each case replays a synthetic step in a child process (SimGrid runs one simulation per
// process): per rank a chain of kernels on one compute stream, a blocking all-reduce over all
// ranks every 16 kernels (TP-like) and a ring send/recv every 64 (PP-like). The iteration time
// is the child's CPU time for simulate() alone (user + system, so a loaded machine does not
// inflate it); the counters say what it buys:
//   ns_per_op        CPU ns per event-graph operation
//   ns_per_activity  CPU ns per SimGrid activity the replay created
//   activities_per_op
//   step_s           the simulated step (the same across fidelities when links are idle)
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <numeric>
#include <stdexcept>
#include <string>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"

namespace {

using namespace racksim;

constexpr uint32_t kGpusPerNode = 8;

EventGraph synthetic_step(uint32_t ranks, size_t ops_per_rank) {
  EventGraph g(ranks);
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const StreamId tp = g.add_stream("comm.tp", StreamKind::kComm);
  const StreamId pp = g.add_stream("comm.pp", StreamKind::kComm);
  std::vector<RankId> all(ranks);
  std::iota(all.begin(), all.end(), 0u);
  const CommId world = g.add_communicator(all);
  std::vector<OpId> last(ranks, kNoOp);
  for (size_t k = 0; k < ops_per_rank; ++k) {
    for (RankId r = 0; r < ranks; ++r) {
      std::vector<OpId> deps;
      if (last[r] != kNoOp) deps.push_back(last[r]);
      if (k % 16 == 15) {
        const OpContext c{r, tp, Phase::kForward, -1, -1};
        last[r] = g.add_collective(c, "all-reduce", CollectiveKind::kAllReduce, world, 16e6,
                                   CommDim::kTp, deps);
      } else if (k % 64 == 31) {
        const OpContext c{r, pp, Phase::kForward, -1, -1};
        const auto tag = static_cast<uint32_t>(k);
        g.add_send(c, "act", (r + 1) % ranks, tag, 8e6, CommDim::kPp, deps);
        last[r] = g.add_recv(c, "act", (r + ranks - 1) % ranks, tag, 8e6, CommDim::kPp, deps);
      } else {
        const OpContext c{r, compute, Phase::kForward, static_cast<int32_t>(k % 8), 0};
        last[r] = g.add_compute(c, "gemm", OpClass::kGemm, 2e11, 5e7, DataType::kBf16, deps);
      }
    }
  }
  return g;
}

struct ChildFigures {
  double cpu_s = 0;
  double step_s = 0;
  uint64_t ops = 0;
  uint64_t activities = 0;
};

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

ChildFigures replay_once(uint32_t ranks, size_t ops_per_rank,
                         config::Simulation::Fidelity fidelity) {
  const EventGraph graph = synthetic_step(ranks, ops_per_rank);
  config::Hardware hw = *topo::hardware_preset("dgx-h100");
  hw.set_nodes(static_cast<int>((ranks + kGpusPerNode - 1) / kGpusPerNode));
  const topo::Topology topology = topo::build_cluster(hw);
  std::vector<uint32_t> gpus(ranks);
  std::iota(gpus.begin(), gpus.end(), 0u);
  sim::SimOptions options = sim::sim_options(hw, {});
  options.fidelity = fidelity;
  const double before = process_cpu_s();
  const auto result =
      sim::simulate(graph, topology, gpus, sim::ComputeModel::from_hardware(hw), options);
  return {process_cpu_s() - before, result.makespan_s, graph.size(), result.activities};
}

// Runs replay_once in a child process and reads its figures back through a pipe.
ChildFigures replay_in_child(uint32_t ranks, size_t ops_per_rank,
                             config::Simulation::Fidelity fidelity) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("replay_bench: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("replay_bench: fork failed");
  if (pid == 0) {
    close(fds[0]);
    const ChildFigures f = replay_once(ranks, ops_per_rank, fidelity);
    const bool written = write(fds[1], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
    _exit(written ? 0 : 1);
  }
  close(fds[1]);
  ChildFigures f;
  const bool read_all = read(fds[0], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!read_all || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("replay_bench: the child replay failed");
  }
  return f;
}

void BM_Replay(benchmark::State& state) {
  const auto ranks = static_cast<uint32_t>(state.range(0));
  const auto ops_per_rank = static_cast<size_t>(state.range(1));
  const auto fidelity = static_cast<config::Simulation::Fidelity>(state.range(2));
  ChildFigures f;
  for (auto _ : state) {
    f = replay_in_child(ranks, ops_per_rank, fidelity);
    state.SetIterationTime(f.cpu_s);
  }
  state.SetLabel(config::Simulation::Fidelity_Name(fidelity));
  state.counters["ops"] = static_cast<double>(f.ops);
  state.counters["activities"] = static_cast<double>(f.activities);
  state.counters["ns_per_op"] = f.cpu_s * 1e9 / static_cast<double>(f.ops);
  state.counters["ns_per_activity"] =
      f.activities > 0 ? f.cpu_s * 1e9 / static_cast<double>(f.activities) : 0.0;
  state.counters["activities_per_op"] =
      static_cast<double>(f.activities) / static_cast<double>(f.ops);
  state.counters["step_s"] = f.step_s;
}

BENCHMARK(BM_Replay)
    ->ArgNames({"ranks", "ops_per_rank", "fidelity"})
    ->Args({8, 20000, racksim::config::Simulation::FULL})
    ->Args({8, 20000, racksim::config::Simulation::AGGREGATED})
    ->Args({8, 20000, racksim::config::Simulation::ANALYTIC})
    ->Args({8, 20000, racksim::config::Simulation::AUTO})
    ->Args({64, 2500, racksim::config::Simulation::FULL})
    ->Args({64, 2500, racksim::config::Simulation::ANALYTIC})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
