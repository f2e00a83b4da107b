#include "analysis/measurement_floor.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/linear_program.h"

namespace racksim::analysis {

namespace {

// Rows of one family at one micro-batch (repeated measurements share one closest time).
struct Position {
  double micro_batch = 0;
  double micro_batches = 0;
  std::vector<size_t> rows;
};

// A relative error below this is the solver's tolerance (Clp's primal tolerance is 1e-7 in
// the columns' units), not a broken family.
constexpr double kSolverTolerance = 1e-6;

// The columns of one micro-batch: u, v, c (measurement_floor.h) and its step m u + v + c.
struct StepColumns {
  size_t u = 0, v = 0, c = 0;
  double micro_batches = 0;
  std::vector<LinearTerm> step() const { return {{u, micro_batches}, {v, 1}, {c, 1}}; }
};

// lower <= a - ratio * b <= upper
void add_difference(LinearProgram& lp, size_t a, size_t b, double ratio, double lower,
                    double upper) {
  lp.rows.push_back({{{a, 1}, {b, -ratio}}, lower, upper});
}

// |step / measured - 1| <= e for one measured row; the objective sums the rows' e.
void add_error(LinearProgram& lp, const StepColumns& step, double measured_s) {
  const size_t e = lp.add_column(1.0);
  std::vector<LinearTerm> above = step.step(), below = step.step();
  above.push_back({e, -measured_s});  // step - measured e <= measured
  below.push_back({e, measured_s});   // step + measured e >= measured
  lp.rows.push_back({above, -kUnbounded, measured_s});
  lp.rows.push_back({below, measured_s, kUnbounded});
}

std::vector<double> closest_steps(const std::vector<Position>& positions, int stages,
                                  const std::vector<MicroBatchRow>& rows) {
  LinearProgram lp;
  std::vector<StepColumns> steps;
  for (const Position& p : positions) {
    StepColumns s;
    s.u = lp.add_column(0);
    s.v = lp.add_column(0, 0, stages > 1 ? kUnbounded : 0);
    s.c = lp.add_column(0);
    s.micro_batches = p.micro_batches;
    add_difference(lp, s.v, s.u, stages - 1, -kUnbounded, 0);  // v <= (p - 1) u
    for (size_t r : p.rows) add_error(lp, s, rows[r].measured_s);
    steps.push_back(s);
  }
  for (size_t i = 0; i + 1 < positions.size(); ++i) {
    const double growth = positions[i + 1].micro_batch / positions[i].micro_batch;
    for (auto column : {&StepColumns::u, &StepColumns::v}) {
      const size_t now = steps[i].*column, next = steps[i + 1].*column;
      add_difference(lp, next, now, 1, 0, kUnbounded);        // does not fall
      add_difference(lp, next, now, growth, -kUnbounded, 0);  // grows no faster than the batch
    }
    add_difference(lp, steps[i + 1].c, steps[i].c, 1, -kUnbounded, 0);  // does not grow
  }
  const LinearOptimum optimum =
      minimise(lp, "measurement floor of " + rows[positions[0].rows[0]].family);
  std::vector<double> closest;
  for (const StepColumns& s : steps) {
    closest.push_back(s.micro_batches * optimum.columns[s.u] + optimum.columns[s.v] +
                      optimum.columns[s.c]);
  }
  return closest;
}

std::vector<Position> positions_of(std::vector<size_t> family,
                                   const std::vector<MicroBatchRow>& rows) {
  std::stable_sort(family.begin(), family.end(),
                   [&](size_t a, size_t b) { return rows[a].micro_batch < rows[b].micro_batch; });
  std::vector<Position> positions;
  for (size_t r : family) {
    if (positions.empty() || positions.back().micro_batch != rows[r].micro_batch) {
      positions.push_back({rows[r].micro_batch, rows[r].micro_batches, {}});
    }
    positions.back().rows.push_back(r);
  }
  return positions;
}

double relative_error(double closest_s, double measured_s) {
  return std::abs(closest_s / measured_s - 1);
}

}  // namespace

MicroBatchFloor micro_batch_floor(const std::vector<MicroBatchRow>& rows) {
  MicroBatchFloor floor;
  floor.closest_s.resize(rows.size());
  std::map<std::string, std::vector<size_t>> families;
  for (size_t i = 0; i < rows.size(); ++i) {
    floor.closest_s[i] = rows[i].measured_s;
    if (rows[i].bounded && rows[i].measured_s > 0 && rows[i].micro_batches > 0) {
      families[rows[i].family].push_back(i);
    }
  }
  double error = 0;
  for (const auto& [name, members] : families) {
    if (members.size() < 2) continue;
    const std::vector<Position> positions = positions_of(members, rows);
    ++floor.families;
    const std::vector<double> closest = closest_steps(positions, rows[members[0]].stages, rows);
    bool broken = false;
    for (size_t p = 0; p < positions.size(); ++p) {
      for (size_t r : positions[p].rows) {
        const double e = relative_error(closest[p], rows[r].measured_s);
        if (e < kSolverTolerance) continue;  // consistent: keep the measurement itself
        floor.closest_s[r] = closest[p];
        error += e;
        broken = true;
      }
    }
    if (broken) ++floor.families_broken;
  }
  if (!rows.empty()) floor.mean_abs_relative = error / static_cast<double>(rows.size());
  return floor;
}

}  // namespace racksim::analysis
