#include "workloads/training/layout.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim {

ParallelLayout::ParallelLayout(int tp, int cp, int dp, int pp, int ep)
    : tp_(tp), cp_(cp), dp_(dp), pp_(pp), ep_(ep) {
  if (tp < 1 || cp < 1 || dp < 1 || pp < 1 || ep < 1) {
    throw std::invalid_argument(
        fmt::format("layout: tp={} cp={} dp={} pp={} ep={} must all be >= 1", tp, cp, dp, pp, ep));
  }
  if ((tp * cp * dp) % ep != 0) {
    throw std::invalid_argument(
        fmt::format("layout: ep {} does not divide tp x cp x dp = {}", ep, tp * cp * dp));
  }
}

ParallelLayout ParallelLayout::from_config(const config::Layout& layout) {
  return ParallelLayout(layout.tp(), layout.cp(), layout.dp(), layout.pp(),
                        std::max(1, layout.ep()));
}

RankId ParallelLayout::rank(const RankCoords& c) const {
  return static_cast<RankId>(c.tp + tp_ * (c.cp + cp_ * (c.dp + dp_ * c.pp)));
}

RankCoords ParallelLayout::coords(RankId rank) const {
  RankCoords c;
  int r = static_cast<int>(rank);
  c.tp = r % tp_;
  r /= tp_;
  c.cp = r % cp_;
  r /= cp_;
  c.dp = r % dp_;
  c.pp = r / dp_;
  return c;
}

namespace {

// Varies one coordinate over [0, size) keeping the others of `rank`.
template <typename Setter>
std::vector<RankId> group_along(const ParallelLayout& layout, RankId rank, int size, Setter set) {
  std::vector<RankId> members;
  members.reserve(size);
  RankCoords c = layout.coords(rank);
  for (int i = 0; i < size; ++i) {
    set(c, i);
    members.push_back(layout.rank(c));
  }
  return members;
}

// The ranks along two dimensions at once: `set(c, i, j)` places the first coordinate at i and
// the second at j; ascending rank order.
template <typename Setter>
std::vector<RankId> group_along_two(const ParallelLayout& layout, RankId rank, int size_a,
                                    int size_b, Setter set) {
  std::vector<RankId> members;
  for (int i = 0; i < size_a; ++i) {
    RankCoords c = layout.coords(rank);
    set(c, i, 0);
    const auto row =
        group_along(layout, layout.rank(c), size_b, [&](RankCoords& d, int j) { set(d, i, j); });
    members.insert(members.end(), row.begin(), row.end());
  }
  std::sort(members.begin(), members.end());
  return members;
}

}  // namespace

std::vector<RankId> ParallelLayout::tp_group(RankId rank) const {
  return group_along(*this, rank, tp_, [](RankCoords& c, int i) { c.tp = i; });
}

std::vector<RankId> ParallelLayout::cp_group(RankId rank) const {
  return group_along(*this, rank, cp_, [](RankCoords& c, int i) { c.cp = i; });
}

std::vector<RankId> ParallelLayout::dp_group(RankId rank) const {
  return group_along(*this, rank, dp_, [](RankCoords& c, int i) { c.dp = i; });
}

std::vector<RankId> ParallelLayout::pp_group(RankId rank) const {
  return group_along(*this, rank, pp_, [](RankCoords& c, int i) { c.pp = i; });
}

std::vector<RankId> ParallelLayout::model_parallel_group(RankId rank) const {
  return group_along_two(*this, rank, pp_, tp_, [](RankCoords& c, int pp, int tp) {
    c.pp = pp;
    c.tp = tp;
  });
}

std::vector<RankId> ParallelLayout::dp_cp_group(RankId rank) const {
  return group_along_two(*this, rank, dp_, cp_, [](RankCoords& c, int dp, int cp) {
    c.dp = dp;
    c.cp = cp;
  });
}

namespace {

// A rank's place among the tp x cp x dp ranks of its pipeline stage.
int place_in_stage(const ParallelLayout& l, RankId rank) {
  return static_cast<int>(rank) % (l.tp() * l.cp() * l.dp());
}

}  // namespace

int ParallelLayout::ep_index(RankId rank) const {
  return place_in_stage(*this, rank) % ep_;
}

std::vector<RankId> ParallelLayout::ep_group(RankId rank) const {
  const RankId first = rank - static_cast<RankId>(ep_index(rank));
  std::vector<RankId> members;
  for (int i = 0; i < ep_; ++i) members.push_back(first + static_cast<RankId>(i));
  return members;
}

std::vector<RankId> ParallelLayout::expert_dp_group(RankId rank) const {
  const int stage_size = tp_ * cp_ * dp_;
  const RankId stage_first = rank - static_cast<RankId>(place_in_stage(*this, rank));
  std::vector<RankId> members;
  for (int p = ep_index(rank); p < stage_size; p += ep_)
    members.push_back(stage_first + static_cast<RankId>(p));
  return members;
}

}  // namespace racksim
