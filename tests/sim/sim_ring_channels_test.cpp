// Ring channels when the domains hold different numbers of members (256 GPUs in domains of 72:
// 72, 72, 72 and 40): one channel per member of the smallest domain, each a single ring through
// every member whose hops between domains stay on one rail (but the closing one).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "sim/collective_plan.h"

namespace racksim {
namespace {

TEST(RingChannels, PartialLastDomainGetsOneChannelPerRailItHas) {
  // Domains of 4, 4 and 2 members; local index = position inside the domain.
  const std::vector<int> domain{0, 0, 0, 0, 1, 1, 1, 1, 2, 2};
  const std::vector<int> local{0, 1, 2, 3, 0, 1, 2, 3, 0, 1};
  const sim::RingSet rings = sim::build_rings(domain, local);
  ASSERT_EQ(rings.channels(), 2u);
  for (uint32_t c = 0; c < rings.channels(); ++c) {
    std::set<uint32_t> seen;
    uint32_t at = 0;
    int off_rail_hops = 0;
    for (uint32_t step = 0; step < domain.size(); ++step) {
      seen.insert(at);
      const uint32_t next = rings.next[c][at];
      EXPECT_EQ(rings.prev[c][next], at);
      if (domain[next] != domain[at] && local[next] != local[at]) ++off_rail_hops;
      at = next;
    }
    EXPECT_EQ(at, 0u) << "channel " << c << " is not one ring";
    EXPECT_EQ(seen.size(), domain.size());
    EXPECT_LE(off_rail_hops, 1) << "channel " << c;  // an odd number of domains: the closing hop
  }
}

TEST(RingChannels, UniformDomainsKeepOneChannelPerMember) {
  const std::vector<int> domain{0, 0, 1, 1};
  const std::vector<int> local{0, 1, 0, 1};
  EXPECT_EQ(sim::build_rings(domain, local).channels(), 2u);
  EXPECT_EQ(sim::build_rings({0, 0, 1}, {0, 1, 0}).channels(), 1u);  // a one-member domain
  EXPECT_EQ(sim::build_rings({0, 0, 0}, {0, 1, 2}).channels(), 1u);  // one domain
}

}  // namespace
}  // namespace racksim
