// Two reports side by side: every numeric field a user acts on (step time, throughput, MFU,
// each breakdown and critical-path entry, memory, the busiest links...) with its value in A
// and B, the difference B - A and the relative difference (B - A) / A.
//
// Fields are flattened to dotted paths ("breakdown_s.exposed_comm.tp"); lists of objects are
// keyed by their "name", "label", "link" or "rank" member ("memory.static[weights].bytes"), so
// the same item is compared even when the lists differ in order. A field only one report has
// is shown with "-" on the other side.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racksim::analysis {

struct ComparedField {
  std::string path;
  std::optional<double> a;
  std::optional<double> b;
  double difference() const { return a && b ? *b - *a : 0; }
  std::optional<double> relative() const;  // (B - A) / |A|; none when A is 0 or missing
};

// The numeric fields of two report.json documents, in A's order then B's extra ones. Fields
// that say how the simulation ran rather than what it predicts (sim.wall_s) are left out.
std::vector<ComparedField> compare_reports(const nlohmann::json& a, const nlohmann::json& b);

// The table; `changed_only` leaves out fields equal in both.
std::string comparison_table(const std::vector<ComparedField>& fields, const std::string& name_a,
                             const std::string& name_b, bool changed_only);

}  // namespace racksim::analysis
