// The pipeline's steady state: a step of m micro-batches from two shorter ones.
//
// Once the pipeline is full, every further micro-batch adds the same work to every rank: one
// forward and one backward pass per stage, the same transfers, the same collectives. When the
// schedule is periodic, the step and every figure that adds up over it (the breakdown, the
// critical path by kind, link bytes and busy time, GPU-state seconds for the energy) grow by a
// constant per micro-batch, so a step of m micro-batches follows exactly from two simulated
// steps of m_small < m_large micro-batches, both long enough to hold warm-up, a steady stretch and
// cool-down:  f(m) = f(m_large) + (m - m_large) / (m_large - m_small) x (f(m_large) - f(m_small)).
//
// Periodicity is checked, not assumed: on every rank, the time between the completion of two
// micro-batches in the late steady stretch of the longer step (up to where the shorter one's
// cool-down starts), per micro-batch, must equal the step time each micro-batch adds (the slope)
// within kSpacingTolerance. The caller (app/training_run.cpp) replays every micro-batch instead
// when it does not.
#pragma once

#include <string>

#include "analysis/report.h"

namespace racksim::analysis {

// The relative disagreement between a rank's micro-batch spacing and the slope that still counts
// as periodic: the extension's error on the step stays below it (docs/speed.md).
inline constexpr double kSpacingTolerance = 1e-4;

// The largest relative difference, over the ranks with operations, between
// (end of micro-batch `last` - end of micro-batch `first`) / (last - first) and `period_s`,
// where a micro-batch ends with the last operation tagged with it on that rank.
double micro_batch_spacing_error(const EventGraph& graph, const sim::SimResult& result, int first,
                                 int last, double period_s);

// The rank whose last operation ends last in the extended step (the lowest such rank on ties):
// the rank the breakdown describes.
RankId extended_critical_rank(const EventGraph& small_graph, const sim::SimResult& small,
                              const EventGraph& large_graph, const sim::SimResult& large,
                              const SteadyStateUse& use);

// The step of `plan` (its micro-batches) from the reports of the two shorter steps. `small` must
// describe the same rank as `large` (same breakdown rank) and hold every link and path operation
// (no top-N cut): the result is cut to `top_links` and `top_operations`. Energy and cost are
// left for the caller, which has the cluster: energy.gpu_seconds is extended.
StepReport extend_step_report(const TrainingPlan& plan, const StepReport& small,
                              const StepReport& large, const SteadyStateUse& use, size_t top_links,
                              size_t top_operations);

}  // namespace racksim::analysis
