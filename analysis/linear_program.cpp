#include "analysis/linear_program.h"

#include <Clp_C_Interface.h>
#include <fmt/format.h>

#include <limits>
#include <memory>
#include <stdexcept>

namespace racksim::analysis {

namespace {

struct ClpDeleter {
  void operator()(Clp_Simplex* model) const { Clp_deleteModel(model); }
};

// Clp takes its matrix column by column (compressed sparse columns).
struct ColumnMajor {
  std::vector<CoinBigIndex> start;
  std::vector<int> row;
  std::vector<double> value;
};

ColumnMajor column_major(const LinearProgram& program) {
  std::vector<std::vector<std::pair<int, double>>> columns(program.cost.size());
  for (size_t r = 0; r < program.rows.size(); ++r) {
    for (const LinearTerm& term : program.rows[r].terms) {
      columns.at(term.column).emplace_back(static_cast<int>(r), term.coefficient);
    }
  }
  ColumnMajor matrix;
  for (const auto& column : columns) {
    matrix.start.push_back(static_cast<CoinBigIndex>(matrix.row.size()));
    for (const auto& [row, value] : column) {
      matrix.row.push_back(row);
      matrix.value.push_back(value);
    }
  }
  matrix.start.push_back(static_cast<CoinBigIndex>(matrix.row.size()));
  return matrix;
}

// Clp's own infinity (COIN_DBL_MAX, the largest double) for a bound that is not there.
double clp_bound(double bound) {
  constexpr double kClpInfinity = std::numeric_limits<double>::max();
  if (bound == kUnbounded) return kClpInfinity;
  if (bound == -kUnbounded) return -kClpInfinity;
  return bound;
}

}  // namespace

size_t LinearProgram::add_column(double cost_per_unit, double lower_bound, double upper_bound) {
  cost.push_back(cost_per_unit);
  lower.push_back(lower_bound);
  upper.push_back(upper_bound);
  return cost.size() - 1;
}

LinearOptimum minimise(const LinearProgram& program, const std::string& what) {
  const ColumnMajor matrix = column_major(program);
  std::vector<double> column_lower, column_upper, row_lower, row_upper;
  for (size_t c = 0; c < program.cost.size(); ++c) {
    column_lower.push_back(clp_bound(program.lower[c]));
    column_upper.push_back(clp_bound(program.upper[c]));
  }
  for (const LinearRow& row : program.rows) {
    row_lower.push_back(clp_bound(row.lower));
    row_upper.push_back(clp_bound(row.upper));
  }
  std::unique_ptr<Clp_Simplex, ClpDeleter> model(Clp_newModel());
  Clp_setLogLevel(model.get(), 0);
  Clp_loadProblem(model.get(), static_cast<int>(program.cost.size()),
                  static_cast<int>(program.rows.size()), matrix.start.data(), matrix.row.data(),
                  matrix.value.data(), column_lower.data(), column_upper.data(),
                  program.cost.data(), row_lower.data(), row_upper.data());
  Clp_initialSolve(model.get());
  // Clp's status: 0 optimal, 1 infeasible, 2 unbounded, 3 stopped on limits, 4 errors.
  if (const int status = Clp_status(model.get()); status != 0) {
    throw std::runtime_error(
        fmt::format("{}: the linear program has no optimum (Clp status {})", what, status));
  }
  const double* solution = Clp_getColSolution(model.get());
  LinearOptimum optimum;
  optimum.columns.assign(solution, solution + program.cost.size());
  optimum.objective = Clp_objectiveValue(model.get());
  return optimum;
}

}  // namespace racksim::analysis
