#include "analysis/measurement_floor.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "analysis/linear_program.h"

namespace racksim::analysis {

namespace {

// Rows of one family at one micro-batch (repeated measurements share one closest time).
struct Position {
  double micro_batch = 0;
  double micro_batches = 0;
  std::vector<size_t> rows;
  std::string kernels;  // the first row's (MicroBatchRow::kernels)
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

// One family: its rows grouped by micro-batch, in increasing micro-batch.
struct Family {
  std::vector<Position> positions;
  int stages = 1;
  size_t rows = 0;
  bool step_costs_fixed = false;  // its rows' framework fixes c (MicroBatchRow)
};

// Two families that differ only in the TP size (`small`'s is `ratio` times smaller), or only in
// the model's size (`small`'s model is the smaller, `ratio` 1): `small`'s u, v and c are at most
// `ratio` times `large`'s.
struct SiblingLink {
  size_t small = 0, large = 0;
  double ratio = 1;
  bool model = false;
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

// Whether c is held fixed from position i to i + 1 of `family` (measurement_floor.h).
bool holds_costs_fixed(const Family& family, size_t i, FloorOptions options) {
  return options.framework_step_costs && family.step_costs_fixed &&
         family.positions[i].kernels == family.positions[i + 1].kernels;
}

// One family's columns and the rows that bind them across its micro-batches.
std::vector<StepColumns> add_family(LinearProgram& lp, const Family& family,
                                    const std::vector<MicroBatchRow>& rows, FloorOptions options) {
  std::vector<StepColumns> steps;
  for (const Position& p : family.positions) {
    StepColumns s;
    s.u = lp.add_column(0);
    s.v = lp.add_column(0, 0, family.stages > 1 ? kUnbounded : 0);
    s.c = lp.add_column(0);
    s.micro_batches = p.micro_batches;
    add_difference(lp, s.v, s.u, family.stages - 1, -kUnbounded, 0);  // v <= (p - 1) u
    double least_work_s = 0;  // m u >= the step's FLOPs per GPU at peak
    for (size_t r : p.rows) least_work_s = std::max(least_work_s, rows[r].least_work_s);
    lp.rows.push_back({{{s.u, p.micro_batches}}, least_work_s, kUnbounded});
    for (size_t r : p.rows) add_error(lp, s, rows[r].measured_s);
    steps.push_back(s);
  }
  for (size_t i = 0; i + 1 < family.positions.size(); ++i) {
    const double growth = family.positions[i + 1].micro_batch / family.positions[i].micro_batch;
    for (auto column : {&StepColumns::u, &StepColumns::v}) {
      const size_t now = steps[i].*column, next = steps[i + 1].*column;
      add_difference(lp, next, now, 1, 0, kUnbounded);        // does not fall
      add_difference(lp, next, now, growth, -kUnbounded, 0);  // grows no faster than the batch
    }
    const double least = holds_costs_fixed(family, i, options) ? 0 : -kUnbounded;
    add_difference(lp, steps[i + 1].c, steps[i].c, 1, least, 0);  // does not grow (nor fall)
  }
  return steps;
}

// At every micro-batch both ran, `small`'s u, v and c are at most `ratio` times `large`'s
// (measurement_floor.h).
void add_link(LinearProgram& lp, const SiblingLink& link, const std::vector<Family>& families,
              const std::vector<std::vector<StepColumns>>& steps) {
  const Family &small = families[link.small], &large = families[link.large];
  for (size_t i = 0; i < small.positions.size(); ++i) {
    for (size_t j = 0; j < large.positions.size(); ++j) {
      if (small.positions[i].micro_batch != large.positions[j].micro_batch) continue;
      for (auto column : {&StepColumns::u, &StepColumns::v, &StepColumns::c}) {
        add_difference(lp, steps[link.small][i].*column, steps[link.large][j].*column, link.ratio,
                       -kUnbounded, 0);
      }
    }
  }
}

// The closest steps of a set of families bound by their links: per family, per position.
struct Closest {
  std::map<size_t, std::vector<double>> steps;
  double summed_error = 0;  // the sum of the rows' |closest / measured - 1|
};

Closest closest_steps(const std::vector<size_t>& members, const std::vector<SiblingLink>& links,
                      const std::vector<Family>& families, const std::vector<MicroBatchRow>& rows,
                      FloorOptions options) {
  LinearProgram lp;
  std::vector<std::vector<StepColumns>> steps(families.size());
  for (size_t f : members) steps[f] = add_family(lp, families[f], rows, options);
  for (const SiblingLink& link : links) add_link(lp, link, families, steps);
  const size_t first_row = families[members[0]].positions[0].rows[0];
  const LinearOptimum optimum = minimise(lp, "measurement floor of " + rows[first_row].family);
  Closest closest;
  closest.summed_error = optimum.objective;
  for (size_t f : members) {
    for (const StepColumns& s : steps[f]) {
      closest.steps[f].push_back(s.micro_batches * optimum.columns[s.u] + optimum.columns[s.v] +
                                 optimum.columns[s.c]);
    }
  }
  return closest;
}

Family family_of(std::vector<size_t> members, const std::vector<MicroBatchRow>& rows) {
  std::stable_sort(members.begin(), members.end(),
                   [&](size_t a, size_t b) { return rows[a].micro_batch < rows[b].micro_batch; });
  Family family;
  family.stages = rows[members[0]].stages;
  family.rows = members.size();
  family.step_costs_fixed = rows[members[0]].step_costs_fixed;
  for (size_t r : members) {
    std::vector<Position>& positions = family.positions;
    if (positions.empty() || positions.back().micro_batch != rows[r].micro_batch) {
      positions.push_back({rows[r].micro_batch, rows[r].micro_batches, {}, rows[r].kernels});
    }
    positions.back().rows.push_back(r);
  }
  return family;
}

// The bounded rows grouped into families, in the order of their names.
std::vector<Family> families_of(const std::vector<MicroBatchRow>& rows) {
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].bounded && rows[i].measured_s > 0 && rows[i].micro_batches > 0) {
      by_name[rows[i].family].push_back(i);
    }
  }
  std::vector<Family> families;
  for (const auto& [name, members] : by_name) families.push_back(family_of(members, rows));
  return families;
}

bool share_a_micro_batch(const Family& a, const Family& b) {
  for (const Position& p : a.positions) {
    for (const Position& q : b.positions) {
      if (p.micro_batch == q.micro_batch) return true;
    }
  }
  return false;
}

// Whether x's TP, both inside a scale-up domain, divides y's larger one.
bool tp_siblings(const MicroBatchRow& x, const MicroBatchRow& y) {
  if (x.siblings.empty() || x.siblings != y.siblings || x.stages != y.stages) return false;
  return x.tp_in_domain && y.tp_in_domain && x.tp > 0 && x.tp < y.tp && y.tp % x.tp == 0;
}

// Whether x's model is y's made narrower or shallower (not both).
bool model_siblings(const MicroBatchRow& x, const MicroBatchRow& y) {
  if (x.model_siblings.empty() || x.model_siblings != y.model_siblings) return false;
  const bool same_width = x.hidden == y.hidden && x.ffn == y.ffn;
  const bool narrower =
      !same_width && x.hidden <= y.hidden && x.ffn <= y.ffn && x.layers == y.layers;
  const bool shallower = same_width && x.layers < y.layers;
  return narrower || shallower;
}

// Families of the same siblings whose TP sizes, both inside a scale-up domain, divide, and
// families whose models differ only in size.
std::vector<SiblingLink> sibling_links(const std::vector<Family>& families,
                                       const std::vector<MicroBatchRow>& rows) {
  std::vector<SiblingLink> links;
  for (size_t a = 0; a < families.size(); ++a) {
    for (size_t b = 0; b < families.size(); ++b) {
      const MicroBatchRow &x = rows[families[a].positions[0].rows[0]],
                          &y = rows[families[b].positions[0].rows[0]];
      if (!share_a_micro_batch(families[a], families[b])) continue;
      if (tp_siblings(x, y)) links.push_back({a, b, static_cast<double>(y.tp / x.tp)});
      if (model_siblings(x, y)) links.push_back({a, b, 1, true});
    }
  }
  return links;
}

// Families joined by links, each set in increasing family index.
std::vector<std::vector<size_t>> linked_sets(size_t count, const std::vector<SiblingLink>& links) {
  std::vector<size_t> root(count);
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](size_t f) {
    while (root[f] != f) f = root[f] = root[root[f]];
    return f;
  };
  for (const SiblingLink& link : links) root[find(link.small)] = find(link.large);
  std::map<size_t, std::vector<size_t>> sets;
  for (size_t f = 0; f < count; ++f) sets[find(f)].push_back(f);
  std::vector<std::vector<size_t>> out;
  for (auto& [r, members] : sets) out.push_back(std::move(members));
  return out;
}

// Writes a set's closest steps over the measurements they differ from; returns their summed
// relative error.
double record(const Closest& closest, const std::vector<Family>& families,
              const std::vector<MicroBatchRow>& rows, std::vector<double>& closest_s) {
  double error = 0;
  for (const auto& [f, steps] : closest.steps) {
    for (size_t p = 0; p < steps.size(); ++p) {
      for (size_t r : families[f].positions[p].rows) {
        const double e = std::abs(steps[p] / rows[r].measured_s - 1);
        if (e < kSolverTolerance) continue;  // consistent: keep the measurement itself
        closest_s[r] = steps[p];
        error += e;
      }
    }
  }
  return error;
}

}  // namespace

MicroBatchFloor micro_batch_floor(const std::vector<MicroBatchRow>& rows, FloorOptions options) {
  MicroBatchFloor floor;
  floor.closest_s.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) floor.closest_s[i] = rows[i].measured_s;
  const std::vector<Family> families = families_of(rows);
  const std::vector<SiblingLink> links = sibling_links(families, rows);
  // Each family alone: the error its own micro-batches force (a family of one row: none).
  std::vector<Closest> alone(families.size());
  for (size_t f = 0; f < families.size(); ++f) {
    if (families[f].rows < 2) continue;
    ++floor.families;
    alone[f] = closest_steps({f}, {}, families, rows, options);
    for (size_t i = 0; i + 1 < families[f].positions.size(); ++i) {
      if (holds_costs_fixed(families[f], i, options)) {
        ++floor.fixed_cost_families;
        break;
      }
    }
    if (alone[f].summed_error > kSolverTolerance * static_cast<double>(families[f].rows)) {
      ++floor.families_broken;
    }
  }
  // Each pair of siblings: the error their link adds.
  for (const SiblingLink& link : links) {
    ++(link.model ? floor.model_pairs : floor.sibling_pairs);
    const double both =
        closest_steps({link.small, link.large}, {link}, families, rows, options).summed_error;
    const double rows_in_pair =
        static_cast<double>(families[link.small].rows + families[link.large].rows);
    if (both > alone[link.small].summed_error + alone[link.large].summed_error +
                   kSolverTolerance * rows_in_pair) {
      ++(link.model ? floor.model_pairs_broken : floor.sibling_pairs_broken);
      (link.model ? floor.broken_model_rows : floor.broken_pair_rows)
          .emplace_back(families[link.small].positions[0].rows[0],
                        families[link.large].positions[0].rows[0]);
    }
  }
  double error = 0;
  for (const std::vector<size_t>& set : linked_sets(families.size(), links)) {
    if (set.size() == 1) {  // unlinked: its own optimum, solved above
      error += record(alone[set[0]], families, rows, floor.closest_s);
      continue;
    }
    std::vector<SiblingLink> inside;
    for (const SiblingLink& link : links) {
      if (std::binary_search(set.begin(), set.end(), link.small)) inside.push_back(link);
    }
    error += record(closest_steps(set, inside, families, rows, options), families, rows,
                    floor.closest_s);
  }
  if (!rows.empty()) floor.mean_abs_relative = error / static_cast<double>(rows.size());
  return floor;
}

}  // namespace racksim::analysis
