// Every hardware preset's GPU memory is the driver's total that data/hbm-capacity.csv records
// with its source, not the datasheet's "GB" read as 1e9 bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "topologies/hardware_presets.h"

namespace racksim {
namespace {

// name -> (datasheet GB, bytes), from the CSV's first four columns.
std::map<std::string, std::pair<double, double>> capacity_table() {
  std::ifstream in(RACKSIM_SOURCE_DIR "/data/hbm-capacity.csv");
  std::map<std::string, std::pair<double, double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("name,", 0) == 0) continue;
    std::istringstream fields(line);
    std::string name, datasheet, mib, bytes;
    std::getline(fields, name, ',');
    std::getline(fields, datasheet, ',');
    std::getline(fields, mib, ',');
    std::getline(fields, bytes, ',');
    rows[name] = {std::stod(datasheet), std::stod(bytes)};
  }
  return rows;
}

// The row a preset's GPU takes its memory from (the rack presets name their GPU by its die).
std::string row_of(const std::string& gpu) {
  if (gpu == "B200-GB200") return "GB200-NVL72";
  if (gpu == "B300-GB300") return "GB300-NVL72";
  return gpu;
}

TEST(HbmCapacity, EveryPresetHasTheDriversTotalFromTheDataFile) {
  const auto table = capacity_table();
  ASSERT_EQ(table.size(), 9u);
  for (const std::string& name : topo::hardware_preset_names()) {
    const auto preset = topo::hardware_preset(name);
    ASSERT_TRUE(preset.has_value()) << name;
    if (!preset->gpu().has_hbm_bytes()) continue;
    const auto row = table.find(row_of(preset->gpu().name()));
    ASSERT_NE(row, table.end()) << name << " " << preset->gpu().name();
    EXPECT_DOUBLE_EQ(preset->gpu().hbm_bytes(), row->second.second) << name;
    // A datasheet's "GB" of HBM is close to GiB: what the driver reports lies within 7 % under
    // the binary reading and above the decimal one.
    const double datasheet = row->second.first;
    EXPECT_GT(preset->gpu().hbm_bytes(), datasheet * 1e9) << name;
    EXPECT_LT(preset->gpu().hbm_bytes(), datasheet * 1073741824.0 * 1.0001) << name;
    EXPECT_GT(preset->gpu().hbm_bytes(), datasheet * 1073741824.0 * 0.93) << name;
  }
}

TEST(HbmCapacity, AnEightyGigabyteH100HasItsDriversTotal) {
  // nvidia-smi: 81,559 MiB.
  EXPECT_DOUBLE_EQ(topo::hardware_preset("dgx-h100")->gpu().hbm_bytes(), 81559.0 * 1048576);
}

}  // namespace
}  // namespace racksim
