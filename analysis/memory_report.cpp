#include "analysis/memory_report.h"

#include <fmt/format.h>

#include "common/units.h"

namespace racksim::analysis {

using units::kGB;

namespace {

std::string entry_line(const std::string& name, double bytes, const std::string& detail) {
  return fmt::format("  {:<28}{:>10.2f} GB  {}\n", name, bytes / kGB, detail);
}

// A peak this close to the capacity fits the ledger but perhaps not the GPU: the CUDA context,
// NCCL's buffers and the allocator's fragmentation are not in the ledger (data/hbm-capacity.csv).
bool marginal(const MemoryLedger& mem) {
  return mem.fits() && !mem.fits_with_headroom();
}

std::string verdict(const MemoryLedger& mem) {
  if (!mem.fits()) return "DOES NOT FIT";
  if (!marginal(mem)) return "fits";
  const double spare = mem.capacity_bytes - mem.peak_bytes();
  return fmt::format(
      "fits with {:.2f} GB to spare, marginal: the CUDA context, NCCL's buffers and the "
      "allocator's fragmentation are not in the ledger",
      spare / kGB);
}

std::string stage_verdict(const MemoryLedger& mem) {
  if (!mem.fits()) return "OOM: " + mem.culprit().name;
  return marginal(mem) ? "fits, marginal" : "fits";
}

}  // namespace

std::string memory_text(const MemoryLedger& mem) {
  std::string out = fmt::format("\nMemory of rank {} (the fullest), GB = 1e9 bytes:\n", mem.rank);
  for (const auto& item : mem.static_items) out += entry_line(item.name, item.bytes, item.detail);
  out += entry_line("activations", mem.activations.bytes, mem.activations.detail);
  out += entry_line("largest transient", mem.largest_transient.bytes, mem.largest_transient.name);
  if (mem.host_bytes > 0) {
    out +=
        fmt::format("  {:<28}{:>10.2f} GB  (not in HBM)\n", "in host memory", mem.host_bytes / kGB);
  }
  out += fmt::format("  {:<28}{:>10.2f} GB of {:.2f} GB: {}\n", "peak", mem.peak_bytes() / kGB,
                     mem.capacity_bytes / kGB, verdict(mem));
  if (!mem.fits()) {
    const MemoryItem& culprit = mem.culprit();
    out += fmt::format("  over by {:.2f} GB; culprit: {} ({:.2f} GB{}{})\n",
                       (mem.peak_bytes() - mem.capacity_bytes) / kGB, culprit.name,
                       culprit.bytes / kGB, culprit.detail.empty() ? "" : ", ", culprit.detail);
  }
  return out;
}

std::string memory_layer_text(const MemoryLedger& mem) {
  if (mem.layer < 0) return "";
  std::string out = fmt::format(
      "\nWhat layer {} keeps for one micro-batch on rank {} (its stage's largest), GB = 1e9 "
      "bytes:\n",
      mem.layer, mem.rank);
  for (const MemoryItem& part : mem.layer_parts) {
    out += fmt::format("  {:<44}{:>9.3f} GB  {}\n", part.name, part.bytes / kGB, part.detail);
  }
  out += fmt::format("  {:<44}{:>9.3f} GB\n", "one layer, one micro-batch",
                     total_bytes(mem.layer_parts) / kGB);
  return out;
}

std::string memory_stages_text(const std::vector<MemoryLedger>& stages) {
  std::string out =
      fmt::format("\n{:<7}{:>7}{:>12}{:>14}{:>12}{:>10}{:>10}  {}\n", "stage", "rank", "static GB",
                  "activations", "transient", "peak GB", "HBM GB", "verdict");
  for (size_t i = 0; i < stages.size(); ++i) {
    const MemoryLedger& m = stages[i];
    out += fmt::format("{:<7}{:>7}{:>12.2f}{:>14.2f}{:>12.2f}{:>10.2f}{:>10.2f}  {}\n", i, m.rank,
                       m.static_bytes() / kGB, m.activations.bytes / kGB,
                       m.largest_transient.bytes / kGB, m.peak_bytes() / kGB,
                       m.capacity_bytes / kGB, stage_verdict(m));
  }
  return out;
}

nlohmann::ordered_json memory_json(const MemoryLedger& mem) {
  using nlohmann::ordered_json;
  ordered_json statics = ordered_json::array();
  for (const auto& item : mem.static_items) {
    statics.push_back({{"name", item.name}, {"bytes", item.bytes}, {"detail", item.detail}});
  }
  ordered_json layer_parts = ordered_json::array();
  for (const auto& part : mem.layer_parts) {
    layer_parts.push_back({{"name", part.name}, {"bytes", part.bytes}, {"detail", part.detail}});
  }
  ordered_json j = {
      {"rank", mem.rank},
      {"capacity_bytes", mem.capacity_bytes},
      {"peak_bytes", mem.peak_bytes()},
      {"fits", mem.fits()},
      {"host_bytes", mem.host_bytes},
      {"static_bytes", mem.static_bytes()},
      {"static", statics},
      {"activations_bytes", mem.activations.bytes},
      {"activations_detail", mem.activations.detail},
      {"layer", mem.layer},
      {"layer_activations", layer_parts},
      {"largest_allocation",
       {{"name", mem.largest_transient.name}, {"bytes", mem.largest_transient.bytes}}}};
  if (!mem.fits()) {
    j["over_bytes"] = mem.peak_bytes() - mem.capacity_bytes;
    j["culprit"] = {{"name", mem.culprit().name}, {"bytes", mem.culprit().bytes}};
  }
  return j;
}

}  // namespace racksim::analysis
