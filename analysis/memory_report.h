// The memory ledger as text and JSON: the fullest rank's accounts, whether it fits, and when it
// does not, by how much and which single entry to cut first (the culprit).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/training/memory_ledger.h"

namespace racksim::analysis {

// "Memory of rank R (the fullest) ..." with one line per entry and the verdict.
std::string memory_text(const MemoryLedger& ledger);

// What the fullest rank's largest layer keeps for one micro-batch, one line per part and the
// total (`racksim memory`); empty when its stage holds no layer.
std::string memory_layer_text(const MemoryLedger& ledger);

// One line per pipeline stage: static, activations, transient, peak, fits.
std::string memory_stages_text(const std::vector<MemoryLedger>& stages);

// report.json's `memory` object (rank, capacity_bytes, peak_bytes, fits, host_bytes,
// static_bytes, static[], activations_bytes, activations_detail, layer and layer_activations[]
// (the parts of memory_layer_text), largest_allocation, and,
// when it does not fit, over_bytes and culprit).
nlohmann::ordered_json memory_json(const MemoryLedger& ledger);

}  // namespace racksim::analysis
