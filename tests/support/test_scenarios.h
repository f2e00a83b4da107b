// Scenario texts more than one test file runs.
#pragma once

namespace racksim::testing {

// A 2-layer Mixtral with 16 experts, one per GPU over 2 x DGX H100: the dispatch and combine
// all-to-all cross NVLink and the rails at once (and the replicas: dp 16).
inline constexpr const char* kMoeEp16TwoNodes = R"(
model { preset: "mixtral-8x7b" num_layers: 2 num_experts: 16 }
hardware { preset: "dgx-h100" nodes: 2 }
layout { tp: 1 pp: 1 dp: 16 ep: 16 }
training { global_batch_size: 32 micro_batch_size: 1 seq_length: 4096 routing: BALANCED }
)";

// Llama-3 8B cut to 8 layers on 4 DGX H100 behind a 4:1 oversubscribed spine, the data-parallel
// gradient reduction overlapped with the backward: traffic of several tiers contending.
inline constexpr const char* kOverlappedDpAcrossSpine = R"(
model { preset: "llama3-8b" num_layers: 8 }
hardware {
  preset: "dgx-h100"
  nodes: 4
  scale_out { nodes_per_leaf: 2 spines: 2 oversubscription: 4 }
}
layout { tp: 4 pp: 2 dp: 4 }
training {
  global_batch_size: 16 micro_batch_size: 1 seq_length: 4096 schedule: ONE_F_ONE_B
  overlap_grad_reduce: true
}
)";

// Llama-3 8B cut to 8 layers on one DGX H100 (tp 2, pp 2, dp 2): small enough to simulate in a
// second; bad-input tests break one of its lines (line numbers count from the name, line 1).
inline constexpr const char* kSmallDense = R"(name: "cli test"
model { preset: "llama3-8b" num_layers: 8 }
hardware { preset: "dgx-h100" nodes: 1 }
layout { tp: 2 pp: 2 dp: 2 }
training {
  global_batch_size: 8
  micro_batch_size: 1
  seq_length: 2048
}
)";

}  // namespace racksim::testing
