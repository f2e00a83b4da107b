#include "analysis/fault_report.h"

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

#include <fmt/format.h>

namespace racksim::analysis {
namespace {

bool on_host(const EventGraph& graph, OpId op) {
  return graph.streams()[graph.op(op).stream].kind == StreamKind::kHost;
}

bool is_compute(PathKind kind) {
  return kind != PathKind::kComm && kind != PathKind::kOffload && kind != PathKind::kWait;
}

// Whether a communication operation involves one of `ranks`: a collective through its
// communicator (the path charges it to the last member to arrive), a transfer through either end.
bool involves(const EventGraph& graph, OpId id, const std::vector<RankId>& ranks) {
  const Op& op = graph.op(id);
  const auto touched = [&](RankId r) { return std::count(ranks.begin(), ranks.end(), r) > 0; };
  if (op.kind == OpKind::kCollective) {
    const auto& members = graph.communicator(op.peer);
    return std::any_of(members.begin(), members.end(), touched);
  }
  return touched(op.rank) ||
         ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && touched(op.peer));
}

using SegmentFilter = std::function<bool(const PathSegment&)>;

// Seconds of the path's segments that pass `slows`, by stretch name, largest first.
std::vector<std::pair<std::string, double>> stretches(const CriticalPath& path,
                                                      const SegmentFilter& slows) {
  std::map<std::string, double> by_name;
  for (const PathSegment& s : path.segments) {
    if (s.op == kNoOp || !slows(s)) continue;
    const std::string name = s.kind == PathKind::kComm ? fmt::format("comm.{}", to_string(s.dim))
                                                       : std::string(to_string(s.kind));
    by_name[name] += s.seconds();
  }
  std::vector<std::pair<std::string, double>> out(by_name.begin(), by_name.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::vector<RankId> node_ranks(int node, int gpus_per_node) {
  std::vector<RankId> ranks;
  for (int g = 0; g < gpus_per_node; ++g) ranks.push_back(node * gpus_per_node + g);
  return ranks;
}

bool has_host_work(const EventGraph& graph, const std::vector<RankId>& ranks) {
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kCompute && on_host(graph, id) &&
        std::count(ranks.begin(), ranks.end(), op.rank) > 0) {
      return true;
    }
  }
  return false;
}

// Whether a communication operation leaves the scale-up domain (its traffic crosses NICs): a
// collective whose members span domains, a transfer between domains.
bool crosses_domains(const EventGraph& graph, OpId id, int domain_size) {
  const Op& op = graph.op(id);
  const auto domain = [&](RankId r) { return static_cast<int>(r) / domain_size; };
  if (op.kind == OpKind::kCollective) {
    const auto& members = graph.communicator(op.peer);
    return std::any_of(members.begin(), members.end(),
                       [&](RankId r) { return domain(r) != domain(members.front()); });
  }
  return (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) &&
         domain(op.rank) != domain(op.peer);
}

// A network fault's stretches: communication involving its ranks (only what crosses the
// scale-up domains when the fault is on a NIC).
FaultImpact comm_impact(std::string kind, std::string description, std::vector<RankId> ranks,
                        bool nic, int domain_size, const EventGraph& graph,
                        const CriticalPath& path) {
  FaultImpact f{std::move(kind), std::move(description), std::move(ranks), {}, {}};
  f.stretches = stretches(path, [&](const PathSegment& s) {
    return s.kind == PathKind::kComm && involves(graph, s.op, f.ranks) &&
           (!nic || crosses_domains(graph, s.op, domain_size));
  });
  return f;
}

// The spread's impact: the critical path's GPU kernels on ranks slower than the median (a
// pipeline's path need not pass the slowest GPU of the cluster, which the description names).
FaultImpact spread_impact(const topo::GpuSpread& spread, const EventGraph& graph,
                          const CriticalPath& path) {
  // Each rank's factor drawn once: the path's segments look theirs up.
  std::vector<double> factors(graph.num_ranks());
  for (uint32_t g = 0; g < factors.size(); ++g) factors[g] = spread.factor(g);
  // The first of equals, as a spread of 0 names rank 0 both ways.
  const auto slowest = std::max_element(factors.begin(), factors.end());
  const auto fastest = std::min_element(factors.begin(), factors.end());
  FaultImpact f{"gpu_spread",
                fmt::format("every GPU's kernels x(1 + {:g} z), seed {}: the slowest, rank {}, "
                            "x{:.4f}; the fastest, rank {}, x{:.4f}",
                            spread.relative_sd, spread.seed, slowest - factors.begin(), *slowest,
                            fastest - factors.begin(), *fastest),
                {},
                {},
                {}};
  const auto slowed = [&](const PathSegment& seg) {
    return is_compute(seg.kind) && !on_host(graph, seg.op) && factors[seg.rank] > 1;
  };
  for (const PathSegment& seg : path.segments) {
    if (seg.op != kNoOp && slowed(seg)) f.ranks.push_back(seg.rank);
  }
  std::sort(f.ranks.begin(), f.ranks.end());
  f.ranks.erase(std::unique(f.ranks.begin(), f.ranks.end()), f.ranks.end());
  f.stretches = stretches(path, slowed);
  return f;
}

}  // namespace

std::string FaultImpact::lands_on() const {
  return stretches.empty() ? "off the critical path" : stretches.front().first;
}

FaultsReport fault_report(const topo::Faults& faults, int gpus_per_node, int domain_size,
                          const EventGraph& graph, const CriticalPath& path, double step_time_s,
                          const BaselineStep& baseline) {
  FaultsReport r{true, baseline, step_time_s, path.by_kind_s, {}};
  const auto on_ranks = [](const std::vector<RankId>& ranks, RankId rank) {
    return std::count(ranks.begin(), ranks.end(), rank) > 0;
  };
  for (const auto& s : faults.stragglers) {
    FaultImpact f{"straggler",
                  fmt::format("rank {}: GPU kernels x{:g}", s.gpu, 1 + s.slowdown),
                  {s.gpu},
                  {},
                  {}};
    f.stretches = stretches(path, [&](const PathSegment& seg) {
      return is_compute(seg.kind) && seg.rank == s.gpu && !on_host(graph, seg.op);
    });
    r.faults.push_back(std::move(f));
  }
  for (const auto& d : faults.degraded_links) {
    const char* port = d.port == topo::FaultPort::kScaleUp ? "NVLink (scale-up) port" : "NICs";
    r.faults.push_back(
        comm_impact("degraded_link",
                    fmt::format("rank {}: {} at {:g} of the rate", d.gpu, port, d.bandwidth_factor),
                    {d.gpu}, d.port == topo::FaultPort::kNic, domain_size, graph, path));
  }
  for (const auto& n : faults.dead_nics) {
    r.faults.push_back(comm_impact(
        "dead_nic",
        fmt::format("node {} port {} down: its GPUs send through the nearest other port", n.node,
                    n.port),
        node_ranks(n.node, gpus_per_node), true, domain_size, graph, path));
  }
  for (const auto& h : faults.slow_hosts) {
    FaultImpact f{"slow_host",
                  fmt::format("node {}: host work x{:g}", h.node, h.factor),
                  node_ranks(h.node, gpus_per_node),
                  {},
                  {}};
    f.stretches = stretches(path, [&](const PathSegment& seg) {
      return is_compute(seg.kind) && on_ranks(f.ranks, seg.rank) && on_host(graph, seg.op);
    });
    if (!has_host_work(graph, f.ranks)) {
      f.note =
          "no host work on this node in this step (the model has host work only with "
          "training.offload_optimizer): the fault changes nothing";
    }
    r.faults.push_back(std::move(f));
  }
  if (faults.spread) r.faults.push_back(spread_impact(*faults.spread, graph, path));
  return r;
}

nlohmann::ordered_json faults_json(const FaultsReport& r) {
  nlohmann::ordered_json j;
  j["baseline"] = "simulated without the faults";
  j["baseline_step_time_s"] = r.baseline.step_time_s;
  j["step_time_s"] = r.step_time_s;
  j["cost_s"] = r.cost_s();
  j["cost_fraction"] = r.baseline.step_time_s > 0 ? r.cost_s() / r.baseline.step_time_s : 0;
  nlohmann::ordered_json delta;
  for (int k = 0; k < kNumPathKinds; ++k) {
    delta[std::string(to_string(static_cast<PathKind>(k)))] = r.path_s[k] - r.baseline.path_s[k];
  }
  j["critical_path_delta_s"] = delta;
  j["list"] = nlohmann::ordered_json::array();
  for (const FaultImpact& f : r.faults) {
    nlohmann::ordered_json e;
    e["kind"] = f.kind;
    e["description"] = f.description;
    e["ranks"] = f.ranks;
    e["lands_on"] = f.lands_on();
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    for (const auto& [name, seconds] : f.stretches) s[name] = seconds;
    e["critical_path_s"] = s;
    if (!f.note.empty()) e["note"] = f.note;
    j["list"].push_back(e);
  }
  return j;
}

std::string faults_text(const FaultsReport& r) {
  if (!r.active) return "";
  const double fraction = r.baseline.step_time_s > 0 ? r.cost_s() / r.baseline.step_time_s : 0;
  std::string out = fmt::format(
      "\nFaults (what-if): step {:.4f} s against {:.4f} s simulated without them ({:+.4f} s, "
      "{:+.2f}%)\n",
      r.step_time_s, r.baseline.step_time_s, r.cost_s(), 100 * fraction);
  for (const FaultImpact& f : r.faults) {
    const double seconds = f.stretches.empty() ? 0 : f.stretches.front().second;
    out += fmt::format("  {:<14} {}\n  {:<14} lands on {} ({:.4f} s of the critical path)\n",
                       f.kind, f.description, "", f.lands_on(), seconds);
    if (!f.note.empty()) out += fmt::format("  {:<14} note: {}\n", "", f.note);
  }
  return out;
}

}  // namespace racksim::analysis
