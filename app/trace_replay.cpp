#include "app/trace_replay.h"

#include <chrono>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "config/hardware_loader.h"
#include "config/scenario_loader.h"
#include "sim/compute_model.h"
#include "topologies/ring_topology.h"
#include "topologies/switch_topology.h"
#include "topologies/topology_graph.h"
#include "traces/kineto_reader.h"

namespace racksim::app {

namespace {

InputError option_error(const std::string& option, const std::string& detail) {
  return InputError(SourceLocation{"command line", 0, 0}, option, detail);
}

topo::Topology build_switch(const TraceReplayRequest& request, uint32_t ranks,
                            std::string* platform) {
  const int gpus = request.switch_gpus > 0 ? request.switch_gpus : static_cast<int>(ranks);
  topo::SwitchSpec spec{static_cast<uint32_t>(gpus), request.ring_link_bytes_per_s,
                        request.ring_link_latency_s};
  *platform = fmt::format(
      "{} GPUs behind one switch ({} compute), links {:.4g} GB/s per direction and {:.4g} ns", gpus,
      request.hardware_preset, spec.link_bytes_per_s / 1e9, spec.link_latency_s * 1e9);
  try {
    return topo::build_switch(spec);
  } catch (const std::invalid_argument& e) {
    throw option_error("--topology switch", e.what());
  }
}

topo::Topology build_topology(const TraceReplayRequest& request, const ReplayHardware& hw,
                              uint32_t ranks, std::string* platform) {
  if (request.topology == TraceTopology::kCluster) {
    *platform = fmt::format("{} x {} ({} GPUs)", hw.cluster.nodes, request.hardware_preset,
                            hw.cluster.gpus());
    return topo::build_cluster(hw.cluster);
  }
  if (request.topology == TraceTopology::kSwitch) return build_switch(request, ranks, platform);
  const int gpus = request.ring_gpus > 0 ? request.ring_gpus : static_cast<int>(ranks);
  topo::RingSpec spec{static_cast<uint32_t>(gpus), request.ring_link_bytes_per_s,
                      request.ring_link_latency_s};
  *platform = fmt::format(
      "a ring of {} GPUs ({} compute), links {:.4g} GB/s per direction and "
      "{:.4g} ns",
      gpus, request.hardware_preset, spec.link_bytes_per_s / 1e9, spec.link_latency_s * 1e9);
  try {
    return topo::build_ring(spec);
  } catch (const std::invalid_argument& e) {
    throw option_error("--topology ring", e.what());
  }
}

std::vector<uint32_t> place_ranks(const TraceReplayRequest& request, uint32_t ranks,
                                  uint32_t gpus) {
  if (!request.mapping_file.empty()) return read_rank_mapping(request.mapping_file, ranks, gpus);
  if (ranks > gpus) {
    throw option_error("--nodes", fmt::format("the trace has {} ranks but the cluster only {} "
                                              "GPUs: give more nodes, or a mapping file",
                                              ranks, gpus));
  }
  std::vector<uint32_t> rank_to_gpu(ranks);
  std::iota(rank_to_gpu.begin(), rank_to_gpu.end(), 0u);
  return rank_to_gpu;
}

// Nodes enough for the ranks when the request leaves it open (and the trace is read first).
int nodes_for(const TraceReplayRequest& request, uint32_t ranks) {
  if (request.nodes > 0 || request.topology != TraceTopology::kCluster) {
    return std::max(request.nodes, 1);
  }
  const config::Hardware one = resolve_hardware(request.hardware_preset, 1, request.overrides);
  const int per_node = std::max(one.gpus_per_node(), 1);
  return std::max(1, static_cast<int>((ranks + per_node - 1) / per_node));
}

sim::SimResult simulate_trace(const chakra::ChakraTrace& trace, const topo::Topology& topology,
                              const std::vector<uint32_t>& rank_to_gpu, const ReplayHardware& hw,
                              config::Simulation::Fidelity fidelity, const SimFeedback& feedback) {
  sim::SimOptions options = hw.engine;
  options.fidelity = fidelity;
  options.progress = feedback.progress;
  if (feedback.note) {
    const FullCostEstimate cost = estimate_full_cost(
        trace.graph, engine_flows(trace.graph, topology, rank_to_gpu, options.algorithm));
    const std::string hint = fidelity_hint(cost, fidelity, "--fidelity ANALYTIC");
    if (!hint.empty()) feedback.note(hint);
  }
  try {
    return sim::simulate(trace.graph, topology, rank_to_gpu, hw.compute, options);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.rfind("the replay deadlocked", 0) != 0) throw;
    // The ranks wait for each other: the trace issues collectives (or sends) in orders that
    // cannot all be met, e.g. two process groups' collectives in different orders on two ranks.
    throw InputError(SourceLocation{trace.files.front(), 0, 0}, "",
                     what + " (the ranks' traces wait for each other)");
  }
}

// --compute model for a Kineto trace: a GEMM kernel takes what the kernel model gives its
// shape on the preset's GPU (tiles in waves over the SMs), without launch overhead (a
// recorded kernel's duration has none either).
kineto::GemmTimer gemm_timer(const sim::ComputeModel& model) {
  return [model](const KernelShape& s, DataType dtype) {
    if (model.sm_count <= 0) {
      return s.flops() /
             (model.compute_peak_flops_per_s(dtype) * model.gemm_rate(dtype).efficiency);
    }
    return model.gemm_kernel_s(s.m, s.k, s.n, s.batch, dtype, model.sm_count);
  };
}

// A Kineto trace (files, directories, globs) or a Chakra trace (one prefix or file) into
// `trace`; the Kineto reading is returned for the comparison with the recording.
std::optional<kineto::KinetoTrace> read_trace(const TraceReplayRequest& request,
                                              chakra::ChakraTrace* trace) {
  const std::vector<std::string> args =
      request.traces.empty() ? std::vector<std::string>{request.trace} : request.traces;
  if (kineto::is_kineto_input(args)) {
    kineto::KinetoOptions options{request.step, request.expected_ranks, {}};
    if (request.compute == chakra::ComputeSource::kModel) {
      // The compute model alone: the cluster is built once the trace says how many ranks.
      options.gemm_seconds = gemm_timer(sim::ComputeModel::from_hardware(
          resolve_hardware(request.hardware_preset, 1, request.overrides)));
    }
    kineto::KinetoTrace k = kineto::read_kineto_trace(args, options);
    *trace = std::move(k.trace);
    return k;
  }
  if (request.step >= 0) {
    throw option_error("--step",
                       "profiling steps are for Kineto traces; a Chakra trace is one step");
  }
  *trace = chakra::read_chakra_trace(args.front(), {request.compute, request.expected_ranks});
  return std::nullopt;
}

// --fidelity, unless a `--set sim.fidelity=...` says otherwise (as for `racksim run`).
config::Simulation::Fidelity replay_fidelity(const TraceReplayRequest& request) {
  config::Scenario scenario;
  config::SourceMap sources;
  sources.set_file("command line");
  for (const std::string& assignment : request.overrides) {
    if (assignment.rfind("sim.", 0) != 0) continue;
    if (assignment.rfind("sim.fidelity=", 0) != 0) {
      throw InputError({"--set " + assignment, 0, 0}, "",
                       "a replay takes sim.fidelity only (folding replicas needs a scenario)");
    }
    config::apply_override(assignment, &scenario, &sources);
  }
  return scenario.sim().has_fidelity() ? scenario.sim().fidelity() : request.fidelity;
}

// The hardware section, resolved and checked; its measured table not read.
config::LoadedScenario checked_hardware(const std::string& preset, int nodes,
                                        const std::vector<std::string>& overrides) {
  return config::load_hardware_preset(preset, nodes, overrides, [](const std::string& assignment) {
    if (assignment.rfind("sim.", 0) == 0) return false;  // replay_fidelity() reads those
    if (assignment.rfind("hardware.", 0) != 0) {
      throw InputError({"--set " + assignment, 0, 0}, "",
                       "only hardware.* and sim.fidelity can be set for a replay");
    }
    return true;
  });
}

}  // namespace

config::LoadedScenario load_replay_hardware(const std::string& preset, int nodes,
                                            const std::vector<std::string>& overrides) {
  config::LoadedScenario loaded = checked_hardware(preset, nodes, overrides);
  loaded.measured_collectives =
      config::read_measured_table(loaded.scenario.hardware(), loaded.sources);
  return loaded;
}

config::Hardware resolve_hardware(const std::string& preset, int nodes,
                                  const std::vector<std::string>& overrides) {
  return checked_hardware(preset, nodes, overrides).scenario.hardware();
}

ReplayHardware resolve_replay_hardware(const config::LoadedScenario& loaded) {
  const config::Hardware& hardware = loaded.scenario.hardware();
  ReplayHardware hw;
  hw.cluster = topo::cluster_spec(hardware);
  hw.compute = sim::ComputeModel::from_hardware(hardware);
  hw.engine = sim::sim_options(hardware, loaded.measured_collectives);
  hw.bf16_flops_per_gpu = hardware.gpu().bf16_flops_per_s();
  return hw;
}

std::vector<uint32_t> read_rank_mapping(const std::string& path, uint32_t ranks, uint32_t gpus) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, "--mapping", "cannot be opened");
  std::vector<uint32_t> rank_to_gpu;
  std::vector<int64_t> rank_of_gpu(gpus, -1);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string text = line.substr(first, last - first + 1);
    const SourceLocation where{path, number, 0};
    if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) {
      throw InputError(where, "--mapping", fmt::format("'{}' is not a GPU index", text));
    }
    const auto gpu = static_cast<uint32_t>(std::stoul(text));
    const auto rank = static_cast<uint32_t>(rank_to_gpu.size());
    if (gpu >= gpus) {
      throw InputError(where, "--mapping",
                       fmt::format("rank {} on GPU {}, but the cluster has "
                                   "GPUs 0..{}",
                                   rank, gpu, gpus - 1));
    }
    if (rank_of_gpu[gpu] >= 0) {
      throw InputError(
          where, "--mapping",
          fmt::format("GPU {} is given to ranks {} and {}", gpu, rank_of_gpu[gpu], rank));
    }
    rank_of_gpu[gpu] = rank;
    rank_to_gpu.push_back(gpu);
  }
  if (rank_to_gpu.size() != ranks) {
    throw InputError({path, 0, 0}, "--mapping",
                     fmt::format("{} GPU indices for a trace of {} ranks: one line per rank",
                                 rank_to_gpu.size(), ranks));
  }
  return rank_to_gpu;
}

TraceReplay replay_trace(const TraceReplayRequest& request) {
  TraceReplay run;
  const auto read_start = std::chrono::steady_clock::now();
  std::optional<kineto::KinetoTrace> kineto_trace = read_trace(request, &run.trace);
  run.read_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
  const uint32_t ranks = run.trace.graph.num_ranks();
  const ReplayHardware hw = resolve_replay_hardware(
      load_replay_hardware(request.hardware_preset, nodes_for(request, ranks), request.overrides));
  analysis::TraceReportContext context;
  context.trace = request.trace;
  const topo::Topology topology = build_topology(request, hw, ranks, &context.platform);
  context.gpus = static_cast<uint32_t>(topology.num_gpus());
  context.peak_flops_per_gpu = hw.bf16_flops_per_gpu;
  const config::Simulation::Fidelity fidelity = replay_fidelity(request);
  context.fidelity = config::Simulation::Fidelity_Name(fidelity);
  const std::vector<uint32_t> rank_to_gpu = place_ranks(request, ranks, context.gpus);
  run.result = simulate_trace(run.trace, topology, rank_to_gpu, hw, fidelity, request.feedback);
  run.report = analysis::make_trace_report(run.trace, run.result, std::move(context));
  if (kineto_trace) {
    run.kineto = analysis::compare_kineto(*kineto_trace, run.trace.graph, run.result);
  }
  return run;
}

}  // namespace racksim::app
