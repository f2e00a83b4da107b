// The measurement floor's lines in `racksim calibrate`'s reports (analysis/measurement_floor.h):
// the floor per group, and the floor a row's own framework draws beside the one any framework
// allows.
#pragma once

#include <string>
#include <vector>

#include "app/studies/calibrate.h"

namespace racksim::app {

// "    the floor per group: NAME X % (N points); ..." when the measured set names groups, else "".
std::string floor_per_group_line(const CalibrationSpec& spec, const std::vector<double>& closest_s,
                                 const std::vector<double>& measured_s);

// "    line N: measured X s, at best Y s (+Z %)": row `row` of the measured set and its closest
// step time under a floor.
std::string closest_step_line(const CalibrationSpec& spec, const CalibrationResult& result,
                              size_t row, double closest_s);

// The floor with the step's own costs as each row's framework runs them (result.framework_floor),
// and the rows where it asks more than the floor of any framework (result.floor); "" when
// --floor-only did not draw it or no family held its costs.
std::string framework_floor_lines(const CalibrationSpec& spec, const CalibrationResult& result);

}  // namespace racksim::app
