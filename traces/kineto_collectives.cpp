#include "traces/kineto_collectives.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace racksim::kineto {

namespace {

std::string normalized(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c != '_' && c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// "ncclKernel_AllGather_RING_LL_Sum_float(...)" -> "AllGather".
std::string_view kernel_collective_token(std::string_view name) {
  if (name.rfind("void ", 0) == 0) name.remove_prefix(5);
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (name.rfind(prefix, 0) == 0) {
      name.remove_prefix(prefix.size());
      return name.substr(0, name.find_first_of("_(<"));
    }
  }
  return {};
}

std::vector<RankId> group_of(const KinetoRank& rank, const CollectiveArgs& args) {
  if (!args.ranks.empty()) return args.ranks;
  for (const ProcessGroupConfig& g : rank.groups) {
    if (!args.group_name.empty() && g.name == args.group_name) return g.ranks;
  }
  return {};
}

// Bytes by the nccl-tests convention from the recorded element counts; < 0 when unknown.
double collective_bytes(CollectiveKind kind, const CollectiveArgs& args, double members) {
  const double eb = args.element_bytes > 0 ? args.element_bytes : 4;
  const double in = args.in_elements, out = args.out_elements;
  switch (kind) {
    case CollectiveKind::kAllGather:
      return out >= 0 ? out * eb : in >= 0 ? in * eb * members : -1;
    case CollectiveKind::kReduceScatter:
      return in >= 0 ? in * eb : out >= 0 ? out * eb * members : -1;
    case CollectiveKind::kBarrier:
      return std::max({in, out, 1.0}) * eb;
    default:
      return in >= 0 ? in * eb : out >= 0 ? out * eb : -1;
  }
}

}  // namespace

bool is_nccl_kernel_name(std::string_view name) {
  if (name.rfind("void ", 0) == 0) name.remove_prefix(5);
  return name.rfind("nccl", 0) == 0;
}

std::optional<CollectiveKind> collective_kind(std::string_view name) {
  const std::string_view token = kernel_collective_token(name);
  const std::string n = normalized(token.empty() ? name : token);
  auto starts = [&n](std::string_view p) { return n.rfind(p, 0) == 0; };
  if (starts("allreduce")) return CollectiveKind::kAllReduce;
  if (starts("allgather")) return CollectiveKind::kAllGather;
  if (starts("reducescatter")) return CollectiveKind::kReduceScatter;
  if (starts("alltoall")) return CollectiveKind::kAllToAll;
  if (starts("broadcast")) return CollectiveKind::kBroadcast;
  if (n == "reduce") return CollectiveKind::kReduce;
  if (starts("barrier")) return CollectiveKind::kBarrier;
  return std::nullopt;
}

bool resolve_collective(const KinetoRank& rank, const Event& kernel, const CollectiveArgs* args,
                        ProgramOp* op) {
  std::optional<CollectiveKind> kind;
  if (args && !args->name.empty()) {
    kind = collective_kind(args->name);
  } else {
    kind = collective_kind(kernel.name);
  }
  if (!kind || !args) return false;
  const std::vector<RankId> group = group_of(rank, *args);
  const std::string where = fmt::format("traceEvents[{}].args.", kernel.index);
  if (args->group_size > 0 && !group.empty() &&
      group.size() != static_cast<size_t>(args->group_size)) {
    throw InputError({rank.file, 0, 0}, where + "Group size",
                     fmt::format("{} but the process group has ranks [{}]", args->group_size,
                                 fmt::join(group, ", ")));
  }
  if (!group.empty() && rank.rank >= 0 &&
      std::find(group.begin(), group.end(), static_cast<RankId>(rank.rank)) == group.end()) {
    throw InputError({rank.file, 0, 0}, where + "Process Group Ranks",
                     fmt::format("[{}] does not hold the trace's own rank {}",
                                 fmt::join(group, ", "), rank.rank));
  }
  const double members = !group.empty()         ? static_cast<double>(group.size())
                         : args->group_size > 0 ? args->group_size
                         : rank.world_size > 0  ? rank.world_size
                                                : 1;
  const double bytes = collective_bytes(*kind, *args, members);
  if (bytes < 0) return false;
  op->kind = ProgramOpKind::kCollective;
  op->collective = *kind;
  op->bytes = bytes;
  op->dtype = args->dtype;
  op->group = group;
  op->group_name = args->group_name;
  return true;
}

}  // namespace racksim::kineto
