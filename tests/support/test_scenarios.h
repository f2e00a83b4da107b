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

}  // namespace racksim::testing
