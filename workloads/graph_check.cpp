#include "workloads/graph_check.h"

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

std::vector<OpId> match_sends_to_recvs(const EventGraph& graph) {
  using Key = std::tuple<RankId, RankId, uint32_t>;  // (source, destination, tag)
  std::map<Key, std::deque<OpId>> recvs;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kRecv) recvs[{op.peer, op.rank, op.tag}].push_back(id);
  }
  std::vector<OpId> matched(graph.size(), kNoOp);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind != OpKind::kSend) continue;
    auto it = recvs.find({op.rank, op.peer, op.tag});
    if (it == recvs.end() || it->second.empty()) {
      throw std::runtime_error("unmatched send: " + describe(graph, id));
    }
    const OpId recv = it->second.front();
    it->second.pop_front();
    if (!same_bytes(graph.op(recv).amount, op.amount)) {
      throw std::runtime_error(fmt::format("send/recv size mismatch: {} vs {}", describe(graph, id),
                                           describe(graph, recv)));
    }
    matched[id] = recv;
  }
  for (const auto& [key, left] : recvs) {
    if (!left.empty()) throw std::runtime_error("unmatched recv: " + describe(graph, left.front()));
  }
  return matched;
}

void check_collectives(const EventGraph& graph) {
  struct Instance {
    OpId first = kNoOp;
    uint32_t members = 0;
  };
  std::map<std::pair<CommId, uint32_t>, Instance> instances;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind != OpKind::kCollective) continue;
    Instance& inst = instances[{op.peer, op.tag}];
    if (inst.first == kNoOp) {
      inst.first = id;
    } else {
      const Op& first = graph.op(inst.first);
      if (first.collective != op.collective || !same_bytes(first.amount, op.amount)) {
        throw std::runtime_error(fmt::format(
            "collective #{} on communicator {} differs between ranks: {} is {} of {} bytes, {} is "
            "{} of {} bytes",
            op.tag, op.peer, describe(graph, inst.first), to_string(first.collective), first.amount,
            describe(graph, id), to_string(op.collective), op.amount));
      }
    }
    ++inst.members;
  }
  for (const auto& [key, inst] : instances) {
    const size_t expected = graph.communicator(key.first).size();
    if (inst.members != expected) {
      throw std::runtime_error(fmt::format(
          "collective #{} on communicator {} is issued by {} of its {} members (first: {})",
          key.second, key.first, inst.members, expected, describe(graph, inst.first)));
    }
  }
}

}  // namespace racksim
