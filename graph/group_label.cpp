#include "graph/group_label.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace racksim {

namespace {

constexpr size_t kListedAll = 4;  // up to this many ranks, all are listed

bool regular_stride(const std::vector<RankId>& members) {
  const int64_t stride = static_cast<int64_t>(members[1]) - members[0];
  for (size_t i = 2; i < members.size(); ++i) {
    if (static_cast<int64_t>(members[i]) - members[i - 1] != stride) return false;
  }
  return true;
}

}  // namespace

std::string group_label(const std::vector<RankId>& members) {
  const size_t n = members.size();
  const std::string ranks = fmt::format("group[{} rank{}", n, n == 1 ? "" : "s");
  if (n <= kListedAll) return fmt::format("{}: {}]", ranks, fmt::join(members, ","));
  if (regular_stride(members)) {
    return fmt::format("{}: {},{},..,{}]", ranks, members[0], members[1], members.back());
  }
  return fmt::format("{}: {},{},{},..,{}, irregular]", ranks, members[0], members[1], members[2],
                     members.back());
}

}  // namespace racksim
