// The sweep's ranked table: best first, and every column where its header is, whatever the
// length of a swept value (a '+'-separated list, a file name).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "analysis/sweep_table.h"

namespace racksim::analysis {
namespace {

SweepPoint simulated(const std::string& id, const std::string& value, double tokens_per_s) {
  SweepPoint p;
  p.id = id;
  p.values = {value};
  p.status = PointStatus::kSimulated;
  p.step_time_s = 1;
  p.tokens_per_s_per_gpu = tokens_per_s;
  return p;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(SweepTable, ALongValueKeepsTheColumnsAfterItInPlace) {
  const std::vector<SweepPoint> points = {simulated("p001", "CORE_ATTN", 100),
                                          simulated("p002", "LAYERNORM+MOE_ACT", 200)};
  const std::vector<std::string> lines =
      lines_of(sweep_table({"training.recompute_modules"}, points));
  ASSERT_GE(lines.size(), 3u);
  // The step column ends at the same place on the header and on both rows.
  const size_t end = lines[0].find("step (s)") + std::string("step (s)").size();
  EXPECT_EQ(lines[1].find("1.0000") + 6, end) << lines[0] << "\n" << lines[1];
  EXPECT_EQ(lines[2].find("1.0000") + 6, end) << lines[0] << "\n" << lines[2];
  // Best first: the point with more tokens/s per GPU.
  EXPECT_NE(lines[1].find("p002"), std::string::npos);
}

}  // namespace
}  // namespace racksim::analysis
