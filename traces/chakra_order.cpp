#include "traces/chakra_order.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace racksim::chakra {

namespace {

constexpr size_t kListedIds = 5;          // ids named in a warning
constexpr size_t kListedCycleNodes = 12;  // nodes named in a cycle message

InputError trace_error(const RankTable& table, const std::string& detail) {
  return InputError(SourceLocation{table.file, 0, 0}, "", detail);
}

std::unordered_map<uint64_t, uint32_t> index_ids(const RankTable& table) {
  std::unordered_map<uint64_t, uint32_t> index;
  index.reserve(table.nodes.size());
  for (uint32_t i = 0; i < table.nodes.size(); ++i) {
    auto [it, inserted] = index.try_emplace(table.nodes[i].id, i);
    if (!inserted) {
      throw trace_error(
          table, fmt::format("node id {} appears twice (records {} and {})", table.nodes[i].id,
                             table.nodes[it->second].record, table.nodes[i].record));
    }
  }
  return index;
}

void resolve_deps(const RankTable& table, const std::unordered_map<uint64_t, uint32_t>& index,
                  RankOrder& order, std::vector<std::string>& warnings) {
  std::vector<uint64_t> missing;  // a few of the dangling ids, for the warning
  uint64_t begin = 0;
  order.dep_end.reserve(table.nodes.size());
  for (uint32_t i = 0; i < table.nodes.size(); ++i) {
    const TraceNode& n = table.nodes[i];
    const size_t first = order.deps.size();
    for (uint64_t k = begin; k < n.deps_end; ++k) {
      const auto it = index.find(table.deps[k]);
      if (it == index.end()) {
        ++order.dangling;
        if (missing.size() < kListedIds &&
            std::find(missing.begin(), missing.end(), table.deps[k]) == missing.end()) {
          missing.push_back(table.deps[k]);
        }
        continue;
      }
      if (it->second == i) {
        throw trace_error(table, fmt::format("dependency cycle: node {} depends on itself", n.id));
      }
      order.deps.push_back(it->second);
    }
    remove_repeats(order.deps, first);
    order.dep_end.push_back(order.deps.size());
    begin = n.deps_end;
  }
  if (order.dangling > 0) {
    warnings.push_back(fmt::format(
        "{}: {} data_deps name nodes that are not in the file (e.g. {}); they are ignored",
        table.file, order.dangling, fmt::join(missing, ", ")));
  }
}

// A cycle among the nodes Kahn's algorithm could not order (each has an unordered dependency).
[[noreturn]] void report_cycle(const RankTable& table, const RankOrder& order,
                               const std::vector<uint32_t>& remaining) {
  std::vector<int64_t> position(table.nodes.size(), -1);
  std::vector<uint32_t> path;
  uint32_t node = static_cast<uint32_t>(
      std::find_if(remaining.begin(), remaining.end(), [](uint32_t r) { return r > 0; }) -
      remaining.begin());
  while (position[node] < 0) {
    position[node] = static_cast<int64_t>(path.size());
    path.push_back(node);
    for (uint64_t k = order.deps_begin(node); k < order.dep_end[node]; ++k) {
      if (remaining[order.deps[k]] > 0) {
        node = order.deps[k];
        break;
      }
    }
  }
  std::vector<uint64_t> ids;
  for (size_t k = static_cast<size_t>(position[node]); k < path.size(); ++k) {
    ids.push_back(table.nodes[path[k]].id);
  }
  const size_t length = ids.size();
  if (ids.size() > kListedCycleNodes) ids.resize(kListedCycleNodes);
  throw trace_error(table,
                    fmt::format("dependency cycle of {} nodes: node {} waits for node {}{}, which "
                                "waits for node {} again",
                                length, ids.front(),
                                fmt::join(ids.begin() + 1, ids.end(), ", which waits for node "),
                                length > ids.size() ? ", ..." : "", ids.front()));
}

void topological_order(const RankTable& table, RankOrder& order) {
  const size_t n = table.nodes.size();
  std::vector<uint32_t> remaining(n);  // unordered dependencies per node
  std::vector<uint64_t> children_end(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    remaining[i] = static_cast<uint32_t>(order.dep_end[i] - order.deps_begin(i));
    for (uint64_t k = order.deps_begin(i); k < order.dep_end[i]; ++k) ++children_end[order.deps[k]];
  }
  uint64_t total = 0;
  for (auto& end : children_end) end = total += end;
  std::vector<uint32_t> children(total);
  std::vector<uint64_t> fill(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint64_t k = order.deps_begin(i); k < order.dep_end[i]; ++k) {
      const uint32_t d = order.deps[k];
      children[(d == 0 ? 0 : children_end[d - 1]) + fill[d]++] = i;
    }
  }
  using Entry = std::pair<uint64_t, uint32_t>;  // (id, index): smallest id first
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (uint32_t i = 0; i < n; ++i) {
    if (remaining[i] == 0) ready.emplace(table.nodes[i].id, i);
  }
  order.order.reserve(n);
  while (!ready.empty()) {
    const uint32_t node = ready.top().second;
    ready.pop();
    order.order.push_back(node);
    for (uint64_t k = node == 0 ? 0 : children_end[node - 1]; k < children_end[node]; ++k) {
      if (--remaining[children[k]] == 0) ready.emplace(table.nodes[children[k]].id, children[k]);
    }
  }
  if (order.order.size() < n) report_cycle(table, order, remaining);
}

// ctrl_deps name call-tree parents; Chakra's feeder does not schedule by them, and in traces
// converted from PyTorch they point at ids outside the file and even at the node itself.
void count_dangling_ctrl_deps(const RankTable& table,
                              const std::unordered_map<uint64_t, uint32_t>& index, RankOrder& order,
                              std::vector<std::string>& warnings) {
  std::vector<uint64_t> missing;
  for (uint64_t id : table.ctrl_deps) {
    if (index.count(id) != 0) continue;
    ++order.ctrl_dangling;
    if (missing.size() < kListedIds &&
        std::find(missing.begin(), missing.end(), id) == missing.end()) {
      missing.push_back(id);
    }
  }
  if (order.ctrl_dangling > 0) {
    warnings.push_back(fmt::format(
        "{}: {} of {} ctrl_deps name nodes that are not in the file (call-tree parents, e.g. {}); "
        "ignored: ctrl_deps are not scheduling edges",
        table.file, order.ctrl_dangling, table.ctrl_deps.size(), fmt::join(missing, ", ")));
  }
}

}  // namespace

RankOrder order_rank(const RankTable& table, std::vector<std::string>& warnings) {
  RankOrder order;
  const auto index = index_ids(table);
  resolve_deps(table, index, order, warnings);
  count_dangling_ctrl_deps(table, index, order, warnings);
  topological_order(table, order);
  return order;
}

}  // namespace racksim::chakra
