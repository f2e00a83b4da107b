// A named scenario for parameterised CLI tests: scenario text, or a file in the source tree, with
// `--set` overrides, run through `racksim run --report-only` (tests/support/run_racksim.h).
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"

namespace racksim::testing {

struct ScenarioCase {
  const char* name;
  std::string scenario;           // scenario text, or a path in the source tree when `file`
  std::vector<std::string> sets;  // the case's own overrides
  bool file = false;
};

// gtest names the cases by `name` (the default printer would dump the struct's bytes).
inline void PrintTo(const ScenarioCase& c, std::ostream* os) {
  *os << c.name;
}

// report.json of `c` with its overrides and then `more` (which win); null when the run failed,
// which fails the test.
inline nlohmann::json report_of(const TempDir& dir, const ScenarioCase& c,
                                const std::vector<std::string>& more) {
  std::vector<std::string> sets = c.sets;
  sets.insert(sets.end(), more.begin(), more.end());
  const auto r =
      c.file ? run_file_report(dir, std::string(RACKSIM_SOURCE_DIR) + "/" + c.scenario, sets)
             : run_scenario_report(dir, c.scenario, sets);
  EXPECT_EQ(r.exit_code, 0) << c.name << ": " << r.err;
  return r.report;
}

}  // namespace racksim::testing
