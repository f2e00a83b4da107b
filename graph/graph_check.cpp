#include "graph/graph_check.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace racksim {

namespace {

std::string describe(const EventGraph& g, OpId id) {
  const Op& op = g.op(id);
  return fmt::format("op {} ('{}', {} on rank {}, peer {}, tag {}, {} bytes)", id,
                     g.label(op.label), to_string(op.kind), op.rank, op.peer, op.tag, op.amount);
}

bool same_bytes(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), 1.0);
}

}  // namespace

PointToPointMatch match_point_to_point(const EventGraph& graph) {
  using Key = std::tuple<RankId, RankId, uint32_t>;  // (source, destination, tag)
  std::map<Key, std::deque<OpId>> recvs;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kRecv) recvs[{op.peer, op.rank, op.tag}].push_back(id);
  }
  PointToPointMatch match;
  match.recv_of_send.assign(graph.size(), kNoOp);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind != OpKind::kSend) continue;
    auto it = recvs.find({op.rank, op.peer, op.tag});
    if (it == recvs.end() || it->second.empty()) {
      match.unmatched.push_back(id);
      continue;
    }
    const OpId recv = it->second.front();
    it->second.pop_front();
    if (!same_bytes(graph.op(recv).amount, op.amount)) match.size_mismatches.emplace_back(id, recv);
    match.recv_of_send[id] = recv;
  }
  for (const auto& [key, left] : recvs)
    match.unmatched.insert(match.unmatched.end(), left.begin(), left.end());
  std::sort(match.unmatched.begin(), match.unmatched.end());
  return match;
}

std::vector<OpId> match_sends_to_recvs(const EventGraph& graph) {
  PointToPointMatch match = match_point_to_point(graph);
  if (!match.unmatched.empty()) {
    const OpId first = match.unmatched.front();
    throw std::runtime_error(fmt::format("unmatched {}: {}",
                                         graph.op(first).kind == OpKind::kSend ? "send" : "recv",
                                         describe(graph, first)));
  }
  if (!match.size_mismatches.empty()) {
    const auto [send, recv] = match.size_mismatches.front();
    throw std::runtime_error(fmt::format("send/recv size mismatch: {} vs {}", describe(graph, send),
                                         describe(graph, recv)));
  }
  return std::move(match.recv_of_send);
}

std::vector<CollectiveProblem> collective_problems(const EventGraph& graph) {
  struct Instance {
    OpId first = kNoOp;
    uint32_t members = 0;
  };
  std::map<std::pair<CommId, uint32_t>, Instance> instances;
  std::vector<CollectiveProblem> problems;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind != OpKind::kCollective) continue;
    Instance& inst = instances[{op.peer, op.tag}];
    if (inst.first == kNoOp) {
      inst.first = id;
    } else {
      const Op& first = graph.op(inst.first);
      if (first.collective != op.collective || !same_bytes(first.amount, op.amount)) {
        problems.push_back({inst.first, id, 0, 0});
      }
    }
    ++inst.members;
  }
  for (const auto& [key, inst] : instances) {
    const size_t expected = graph.communicator(key.first).size();
    if (inst.members != expected) problems.push_back({inst.first, kNoOp, inst.members, expected});
  }
  return problems;
}

void check_collectives(const EventGraph& graph) {
  const std::vector<CollectiveProblem> problems = collective_problems(graph);
  if (problems.empty()) return;
  const CollectiveProblem& p = problems.front();
  const Op& first = graph.op(p.first);
  if (p.other != kNoOp) {
    const Op& op = graph.op(p.other);
    throw std::runtime_error(fmt::format(
        "collective #{} on communicator {} differs between ranks: {} is {} of {} bytes, {} is "
        "{} of {} bytes",
        op.tag, op.peer, describe(graph, p.first), to_string(first.collective), first.amount,
        describe(graph, p.other), to_string(op.collective), op.amount));
  }
  throw std::runtime_error(
      fmt::format("collective #{} on communicator {} is issued by {} of its {} members (first: {})",
                  first.tag, first.peer, p.issued, p.members, describe(graph, p.first)));
}

}  // namespace racksim
