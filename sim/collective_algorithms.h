// The plans beyond plain rings (internal to sim/): NVLS, direct exchanges over a mesh,
// hierarchical all-reduce and the double binary tree. See collective_plan.h for the contract.
#pragma once

#include <memory>

#include "sim/collective_plan.h"

namespace racksim::sim {

// NVLS all-reduce inside one switch domain. Each GPU's port carries (n+1)/n x the buffer in
// each direction (reduce-scatter through the switch, then a multicast all-gather), pipelined:
// modelled as one flow of that size from each member to the next at most `port_bytes_per_s`,
// which loads every port exactly as the switch traffic does. Time ~ S(n+1)/(n B), so
// busbw = 2(n-1)/(n+1) x B.
std::unique_ptr<CollectivePlan> make_nvls_plan(double bytes, const CommShape& shape);

// Every member straight to every other over the mesh's own links: all-reduce is a direct
// reduce-scatter then a direct all-gather (two phases of bytes / n to each peer); all-gather
// and reduce-scatter one such phase.
std::unique_ptr<CollectivePlan> make_direct_plan(CollectiveKind kind, double bytes, uint32_t n);

// Hierarchical all-reduce over domains holding `per_domain` members each: a ring
// reduce-scatter inside each domain (per_domain - 1 steps of bytes / per_domain), a ring
// all-reduce of each shard among the members of equal local rank across the domains (one ring
// per rail: 2(D-1) steps of bytes / (per_domain x D)), a ring all-gather inside each domain.
std::unique_ptr<CollectivePlan> make_hierarchical_plan(double bytes, const CommShape& shape);

// NCCL's double binary tree all-reduce: in each domain a chain of its members; the chains'
// heads form a binary tree over the domains, and a second, mirrored tree (whose inner domains
// are the first one's leaves) carries the other half of the data. Each tree reduces up and
// broadcasts down in pipelined chunks. One such pair per channel (a channel per member of a
// domain), each headed by a different GPU of every domain, so every NIC carries a share.
std::unique_ptr<CollectivePlan> make_tree_plan(double bytes, const CommShape& shape);

}  // namespace racksim::sim
