// Field-by-field comparison of two event graphs (round trips through trace files).
#pragma once

#include <gtest/gtest.h>

#include "graph/event_graph.h"

namespace racksim::testing {

inline void expect_same_op(const EventGraph& a, const EventGraph& b, OpId id) {
  const Op& x = a.op(id);
  const Op& y = b.op(id);
  SCOPED_TRACE(::testing::Message() << "op " << id << " '" << a.label(x.label) << "'");
  EXPECT_EQ(x.amount, y.amount);
  EXPECT_EQ(x.hbm_bytes, y.hbm_bytes);
  EXPECT_EQ(x.duration_s, y.duration_s);
  EXPECT_EQ(x.rank, y.rank);
  EXPECT_EQ(x.label, y.label);
  EXPECT_EQ(a.label(x.label), b.label(y.label));
  EXPECT_EQ(x.peer, y.peer);
  EXPECT_EQ(x.tag, y.tag);
  EXPECT_EQ(x.weights, y.weights);
  EXPECT_EQ(x.micro_batch, y.micro_batch);
  EXPECT_EQ(x.layer, y.layer);
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.stream, y.stream);
  EXPECT_EQ(x.phase, y.phase);
  EXPECT_EQ(x.op_class, y.op_class);
  EXPECT_EQ(x.dtype, y.dtype);
  EXPECT_EQ(x.collective, y.collective);
  EXPECT_EQ(x.dim, y.dim);
  EXPECT_EQ(x.copy_direction, y.copy_direction);
  const auto da = a.deps(id);
  const auto db = b.deps(id);
  EXPECT_EQ(std::vector<OpId>(da.begin(), da.end()), std::vector<OpId>(db.begin(), db.end()));
}

// Every op field, every dependency, the streams (names and kinds), the communicators and
// the label table.
inline void expect_same_graph(const EventGraph& a, const EventGraph& b) {
  ASSERT_EQ(a.num_ranks(), b.num_ranks());
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.num_deps(), b.num_deps());
  ASSERT_EQ(a.streams().size(), b.streams().size());
  for (size_t s = 0; s < a.streams().size(); ++s) {
    EXPECT_EQ(a.streams()[s].name, b.streams()[s].name);
    EXPECT_EQ(a.streams()[s].kind, b.streams()[s].kind);
  }
  ASSERT_EQ(a.num_communicators(), b.num_communicators());
  for (CommId c = 0; c < a.num_communicators(); ++c)
    EXPECT_EQ(a.communicator(c), b.communicator(c));
  EXPECT_EQ(a.labels(), b.labels());
  ASSERT_EQ(a.num_weights(), b.num_weights());
  for (uint32_t w = 1; w <= a.num_weights(); ++w) EXPECT_EQ(a.weights(w), b.weights(w));
  size_t failures = 0;
  for (OpId id = 0; id < a.size() && failures < 5; ++id) {
    expect_same_op(a, b, id);
    if (::testing::Test::HasFailure()) ++failures;
  }
}

}  // namespace racksim::testing
