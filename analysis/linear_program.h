// A small linear program and its minimum, solved by COIN-OR Clp (coinor-libclp-dev, EPL-2.0).
//
// Value types in, values out: the solver stays behind this one file, so the analyses that need
// an exact optimum (analysis/measurement_floor.h) state their problem as data and read the
// optimum back without touching Clp's API.
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace racksim::analysis {

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

struct LinearTerm {
  size_t column = 0;
  double coefficient = 0;
};

// lower <= sum of terms <= upper (either may be +-kUnbounded).
struct LinearRow {
  std::vector<LinearTerm> terms;
  double lower = -kUnbounded;
  double upper = kUnbounded;
};

struct LinearProgram {
  // Per column: the objective's coefficient and the column's bounds.
  std::vector<double> cost;
  std::vector<double> lower;
  std::vector<double> upper;
  std::vector<LinearRow> rows;

  // Adds a column (lower <= x <= upper, costing `cost` per unit) and returns its index.
  size_t add_column(double cost_per_unit, double lower_bound = 0, double upper_bound = kUnbounded);
};

struct LinearOptimum {
  std::vector<double> columns;
  double objective = 0;
};

// The minimum of the program's objective. Throws std::runtime_error, naming `what`, where the
// program is infeasible or unbounded.
LinearOptimum minimise(const LinearProgram& program, const std::string& what);

}  // namespace racksim::analysis
