#include "app/sim_estimate.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>

namespace racksim::app {

namespace {

constexpr double kQuietS = 5;       // a log file sees no progress before this
constexpr double kLogEveryS = 10;   // and then one line this often
constexpr double kChainChunks = 8;  // as sim/collective_plan.cpp's pipelined chains

std::string duration_words(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace

double member_flows(CollectiveKind kind, uint32_t members, sim::Algorithm algorithm,
                    uint32_t channels) {
  const double n = members;
  if (members <= 1 || kind == CollectiveKind::kBarrier) return 0;
  const double steps = kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
  switch (algorithm) {
    case sim::Algorithm::kNvls:
      return 1;
    case sim::Algorithm::kChain:
      return kChainChunks;
    case sim::Algorithm::kDirect:
      return steps;
    default:
      break;
  }
  if (kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce) return kChainChunks;
  if (kind == CollectiveKind::kAllToAll) return n - 1;
  return steps * std::max(channels, 1u);
}

FlowsPerMember engine_flows(const EventGraph& graph, const topo::Topology& topology,
                            const std::vector<uint32_t>& rank_to_gpu, sim::Algorithm requested) {
  // Per communicator: its shape and ring channels, worked out once.
  auto shapes = std::make_shared<std::map<CommId, std::pair<sim::CommShape, uint32_t>>>();
  return [&graph, &topology, rank_to_gpu, requested, shapes](CommId comm, CollectiveKind kind,
                                                             uint32_t members) {
    auto it = shapes->find(comm);
    if (it == shapes->end()) {
      std::vector<uint32_t> gpus;
      for (RankId r : graph.communicator(comm)) gpus.push_back(rank_to_gpu[r]);
      sim::CommShape shape = sim::comm_shape(topology, gpus);
      const uint32_t channels = sim::build_rings(shape.domain, shape.local).channels();
      it = shapes->emplace(comm, std::make_pair(std::move(shape), channels)).first;
    }
    const auto& [shape, channels] = it->second;
    return member_flows(kind, members, sim::choose_algorithm(kind, requested, shape), channels);
  };
}

FullCostEstimate estimate_full_cost(const EventGraph& graph, const FlowsPerMember& flows) {
  FullCostEstimate e;
  e.ops = graph.size();
  for (const Op& op : graph.ops()) {
    if (op.kind == OpKind::kCollective) {
      const auto members = static_cast<uint32_t>(graph.communicator(op.peer).size());
      e.flows += flows ? flows(op.peer, op.collective, members)
                       : member_flows(op.collective, members, sim::Algorithm::kRing, 1);
    } else if (op.kind == OpKind::kSend || op.kind == OpKind::kCopy) {
      e.flows += 1;
    }
  }
  e.cpu_s = static_cast<double>(e.ops) * kFullSecondsPerOp + e.flows * kFullSecondsPerFlow;
  return e;
}

std::string fidelity_hint(const FullCostEstimate& estimate, config::Simulation::Fidelity fidelity,
                          const std::string& switch_to, double above_s) {
  if (fidelity != config::Simulation::FULL || estimate.cpu_s <= above_s) return "";
  return fmt::format(
      "FULL fidelity runs about {:.3g} network flows over {} operations here: roughly {} of CPU "
      "(a rough figure; more with many flows in flight). {} or AGGREGATED gives the step time "
      "far sooner (docs/fidelity.md)",
      estimate.flows, estimate.ops, duration_words(estimate.cpu_s), switch_to);
}

bool progress_due(bool terminal, double wall_s) {
  return wall_s >= (terminal ? 1.0 : kQuietS);
}

std::string progress_line(const sim::SimProgress& p) {
  const double share =
      p.total_ops > 0 ? static_cast<double>(p.done_ops) / static_cast<double>(p.total_ops) : 0;
  std::string line = fmt::format("simulating: {:.0f} % of {} operations, {} wall", 100 * share,
                                 p.total_ops, duration_words(p.wall_s));
  if (share > 0 && share < 1) {
    line += fmt::format(", about {} left", duration_words(p.wall_s * (1 - share) / share));
  }
  return line + fmt::format(" (simulated {:.4g} s)", p.sim_s);
}

void StderrProgress::update(const sim::SimProgress& progress) {
  if (!progress_due(terminal_, progress.wall_s) || progress.wall_s < next_s_) return;
  next_s_ = progress.wall_s + (terminal_ ? 1.0 : kLogEveryS);
  if (terminal_) {
    fmt::print(stderr, "\r\033[Kracksim: {}", progress_line(progress));
    open_line_ = true;
  } else {
    fmt::print(stderr, "racksim: {}\n", progress_line(progress));
  }
  std::fflush(stderr);
}

void StderrProgress::finish() {
  if (open_line_) std::fputs("\n", stderr);
  open_line_ = false;
}

SimFeedback StderrProgress::feedback() {
  SimFeedback f;
  f.progress = [this](const sim::SimProgress& p) { update(p); };
  f.note = [this](const std::string& text) {
    finish();
    fmt::print(stderr, "racksim: note: {}\n", text);
  };
  return f;
}

}  // namespace racksim::app
