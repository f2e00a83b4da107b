#include "app/steady_state.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "app/child_process.h"
#include "common/interrupt.h"
#include "sim/sim_result_io.h"

namespace racksim::app {

namespace {

// The pipeline depth a steady stretch must cover. Interleaved 1F1B fills the pipeline with its
// model chunks in turn: its warm-up spans pp x virtual stages micro-batches (a multiple of pp,
// as its groups need). DualPipe, whose stages hold two chunks, is never extended.
int window_unit(const PipelineMap& map) {
  return std::max(2, map.stages()) * (map.dual() ? 1 : map.chunks_per_stage());
}

TrainingPlan with_micro_batches(const config::Scenario& scenario, int micro_batches) {
  config::Scenario shorter = scenario;
  config::Training* t = shorter.mutable_training();
  t->set_global_batch_size(micro_batches * t->micro_batch_size() * scenario.layout().dp());
  return resolve_training_plan(shorter);
}

// In the child: simulate, write the result (or the error) to `file`, and leave without running
// the parent's exit handlers or flushing its buffers.
[[noreturn]] void simulate_child(const EventGraph& graph, const topo::Topology& topology,
                                 const std::vector<uint32_t>& rank_to_gpu,
                                 const sim::ComputeModel& compute, const sim::SimOptions& options,
                                 const std::string& file) {
  unblock_interrupts_in_child();
  int status = 0;
  try {
    const sim::SimResult result = sim::simulate(graph, topology, rank_to_gpu, compute, options);
    std::ofstream out(file, std::ios::binary);
    sim::write_sim_result(result, out);
    if (!out.flush()) throw std::runtime_error("cannot write the result to " + file);
  } catch (const std::exception& e) {
    std::ofstream(file + ".error") << e.what();
    status = 1;
  }
  _exit(status);
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  unregister_child_process(pid);
  return status;
}

sim::SimResult read_result(const std::string& file, int status, const std::string& what) {
  if (std::filesystem::exists(file + ".error")) {
    throw std::runtime_error(
        fmt::format("simulating the {} failed: {}", what, read_text_file(file + ".error")));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(
        fmt::format("simulating the {} did not finish (status {})", what, status));
  }
  return sim::read_sim_result(in);
}

}  // namespace

std::optional<SteadyStateWindow> steady_state_window(const config::Scenario& scenario,
                                                     const TrainingPlan& full, bool has_faults,
                                                     std::string* why_not) {
  why_not->clear();
  const config::Simulation& sim = scenario.sim();
  const bool on =
      sim.has_steady_state() ? sim.steady_state() : sim.fidelity() != config::Simulation::FULL;
  const int unit = window_unit(full.map);
  // Simulating 3u + 4u micro-batches must save at least half of the step's.
  if (!on || full.micro_batches < 14 * unit) return std::nullopt;
  switch (full.training.schedule) {
    case config::Training::GPIPE:
      *why_not = "GPipe runs every forward before any backward, so no micro-batch is steady";
      return std::nullopt;
    case config::Training::ZB_H1:
      *why_not =
          "ZB-H1 defers weight-gradient passes to fill bubbles, so micro-batches do not "
          "end one period apart";
      return std::nullopt;
    case config::Training::DUALPIPE:
      *why_not = "DualPipe feeds micro-batches from both ends, so they do not end one period apart";
      return std::nullopt;
    default:
      break;
  }
  if (has_faults) {
    *why_not = "the scenario has faults, which the extension does not model";
    return std::nullopt;
  }
  return SteadyStateWindow{with_micro_batches(scenario, 3 * unit),
                           with_micro_batches(scenario, 4 * unit), unit};
}

std::array<sim::SimResult, 2> simulate_in_children(const EventGraph& small, const EventGraph& large,
                                                   const topo::Topology& topology,
                                                   const std::vector<uint32_t>& rank_to_gpu,
                                                   const sim::ComputeModel& compute,
                                                   sim::SimOptions options) {
  options.progress = nullptr;  // two children would interleave their lines
  const ScopedTempDir temp("racksim-steady-state");
  const std::array<const EventGraph*, 2> graphs{&small, &large};
  const std::array<std::string, 2> what{"shorter step", "longer step"};
  std::array<std::string, 2> files;
  std::array<pid_t, 2> pids{};
  std::fflush(nullptr);  // the children must not write the parent's buffered output again
  for (size_t i = 0; i < 2; ++i) {
    files[i] = (temp.path() / fmt::format("step{}.bin", i)).string();
    pids[i] = fork_registered(
        [&] { simulate_child(*graphs[i], topology, rank_to_gpu, compute, options, files[i]); },
        "steady-state step");
  }
  const std::array<int, 2> status{wait_for(pids[0]), wait_for(pids[1])};
  std::array<sim::SimResult, 2> results;
  for (size_t i = 0; i < 2; ++i) results[i] = read_result(files[i], status[i], what[i]);
  return results;
}

}  // namespace racksim::app
