#include "workloads/training/pipeline_schedule.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include <fmt/format.h>
#include <limits>

namespace racksim {

namespace {

void check(int stage, int stages, int micro_batches) {
  if (stages < 1 || stage < 0 || stage >= stages || micro_batches < 1) {
    throw std::invalid_argument(
        "pipeline schedule: need 0 <= stage < stages and micro_batches >= 1");
  }
}

PipelinePass pass(PassKind kind, int micro_batch, int local_chunk = 0) {
  return PipelinePass{kind, micro_batch, local_chunk, false};
}

}  // namespace

PassOrder gpipe_order(int stage, int stages, int micro_batches) {
  check(stage, stages, micro_batches);
  PassOrder order;
  for (int mb = 0; mb < micro_batches; ++mb) order.push_back(pass(PassKind::kForward, mb));
  for (int mb = micro_batches; mb-- > 0;) order.push_back(pass(PassKind::kBackward, mb));
  return order;
}

PassOrder one_f_one_b_order(int stage, int stages, int micro_batches) {
  check(stage, stages, micro_batches);
  const int warmup = std::min(stages - stage - 1, micro_batches);
  PassOrder order;
  int next_forward = 0;
  int next_backward = 0;
  for (int i = 0; i < warmup; ++i) order.push_back(pass(PassKind::kForward, next_forward++));
  while (next_forward < micro_batches) {
    order.push_back(pass(PassKind::kForward, next_forward++));
    order.push_back(pass(PassKind::kBackward, next_backward++));
  }
  while (next_backward < micro_batches) order.push_back(pass(PassKind::kBackward, next_backward++));
  return order;
}

PassOrder interleaved_order(int stage, int stages, int virtual_stages, int micro_batches) {
  check(stage, stages, micro_batches);
  const int p = stages;
  const int v = virtual_stages;
  if (v < 1 || micro_batches % p != 0) {
    throw std::invalid_argument(
        fmt::format("interleaved 1F1B: micro-batches ({}) must be a multiple of the stages ({})",
                    micro_batches, p));
  }
  const int total = micro_batches * v;
  // The k-th chunk-pass of a stage: micro-batches advance in groups of p, each group going
  // through the chunks in order (forward) or in reverse (backward).
  auto micro_batch = [&](int k) { return (k / (p * v)) * p + k % p; };
  auto forward_chunk = [&](int k) { return (k % (p * v)) / p; };
  auto backward_chunk = [&](int k) { return v - 1 - forward_chunk(k); };
  int warmup = micro_batches == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  PassOrder order;
  for (int k = 0; k < warmup; ++k)
    order.push_back(pass(PassKind::kForward, micro_batch(k), forward_chunk(k)));
  for (int i = 0; i < total - warmup; ++i) {
    const int f = warmup + i;
    order.push_back(pass(PassKind::kForward, micro_batch(f), forward_chunk(f)));
    order.push_back(pass(PassKind::kBackward, micro_batch(i), backward_chunk(i)));
  }
  for (int i = std::max(total - warmup, 0); i < total; ++i) {
    order.push_back(pass(PassKind::kBackward, micro_batch(i), backward_chunk(i)));
  }
  return order;
}

PassOrder combined_1f1b_order(const PassOrder& order) {
  PassOrder forwards;
  PassOrder backwards;
  for (const PipelinePass& p : order) {
    if (p.kind == PassKind::kForward) {
      forwards.push_back(p);
    } else if (p.kind == PassKind::kBackward) {
      backwards.push_back(p);
    } else {
      throw std::invalid_argument("combined 1F1B: the order splits its backward passes");
    }
  }
  // A 1F1B order opens with its warm-up forwards and the first steady-state forward: that many
  // forwards are the combined schedule's warm-up (one more than the plain one's).
  size_t warmup = 0;
  while (warmup < order.size() && order[warmup].kind == PassKind::kForward) ++warmup;
  PassOrder combined(forwards.begin(), forwards.begin() + static_cast<std::ptrdiff_t>(warmup));
  size_t b = 0;
  for (size_t f = warmup; f < forwards.size(); ++f, ++b) {
    combined.push_back(forwards[f]);
    combined.back().overlaps_next = true;
    combined.push_back(backwards.at(b));
  }
  combined.insert(combined.end(), backwards.begin() + static_cast<std::ptrdiff_t>(b),
                  backwards.end());
  return combined;
}

namespace {

// The play of ZB-H1's greedy rule over time: each free stage starts, in this order of
// preference, a B whose gradient has arrived, an F whose input has arrived (at most p - s
// forwards ahead of its backwards), or a deferred W.
class ZbH1Play {
 public:
  ZbH1Play(int stages, int micro_batches, const PassCosts& costs)
      : p_(stages),
        m_(micro_batches),
        costs_(costs),
        ready_f_(p_, std::vector<double>(m_, kNever)),
        ready_b_(p_, std::vector<double>(m_, kNever)),
        stages_(p_),
        orders_(p_) {
    for (int mb = 0; mb < m_; ++mb) ready_f_[0][mb] = 0;
  }

  std::vector<PassOrder> play() {
    const size_t passes = 3 * static_cast<size_t>(p_) * m_;
    size_t done = 0;
    double t = 0;
    while (done < passes) {
      for (int s = 0; s < p_; ++s) done += start_pass(s, t) ? 1 : 0;
      const double next = next_event(t);
      if (next == kNever) {
        if (done < passes) throw std::logic_error("ZB-H1: the greedy play got stuck");
        break;
      }
      t = next;
    }
    return orders_;
  }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  struct Stage {
    int next_f = 0, next_b = 0;
    double free_at = 0;
    std::deque<int> pending_w;
  };

  // Starts the pass stage `s` prefers at time `t`, if it is free and has one to run.
  bool start_pass(int s, double t) {
    Stage& x = stages_[s];
    if (x.free_at > t) return false;
    double cost = 0;
    if (x.next_b < x.next_f && ready_b_[s][x.next_b] <= t) {
      const int mb = x.next_b++;
      orders_[s].push_back(pass(PassKind::kBackwardInput, mb));
      x.pending_w.push_back(mb);
      cost = costs_.backward_input;
      if (s > 0) ready_b_[s - 1][mb] = t + cost;
    } else if (x.next_f < m_ && ready_f_[s][x.next_f] <= t && x.next_f - x.next_b < p_ - s) {
      const int mb = x.next_f++;
      orders_[s].push_back(pass(PassKind::kForward, mb));
      cost = costs_.forward;
      if (s + 1 < p_) ready_f_[s + 1][mb] = t + cost;
      if (s + 1 == p_) ready_b_[s][mb] = t + cost;  // the last stage's loss gradient
    } else if (!x.pending_w.empty()) {
      orders_[s].push_back(pass(PassKind::kBackwardWeight, x.pending_w.front()));
      x.pending_w.pop_front();
      cost = costs_.backward_weight;
    } else {
      return false;  // nothing to do before the next event
    }
    x.free_at = t + cost;
    return true;
  }

  // The next moment something changes: a stage gets free or an input arrives.
  double next_event(double t) const {
    double next = kNever;
    for (int s = 0; s < p_; ++s) {
      if (stages_[s].free_at > t) next = std::min(next, stages_[s].free_at);
      for (int mb = 0; mb < m_; ++mb) {
        if (ready_f_[s][mb] > t) next = std::min(next, ready_f_[s][mb]);
        if (ready_b_[s][mb] > t) next = std::min(next, ready_b_[s][mb]);
      }
    }
    return next;
  }

  int p_, m_;
  PassCosts costs_;
  // ready_f_[s][mb]: when stage s may run F(mb); ready_b_[s][mb]: when its gradient has arrived.
  std::vector<std::vector<double>> ready_f_, ready_b_;
  std::vector<Stage> stages_;
  std::vector<PassOrder> orders_;
};

}  // namespace

std::vector<PassOrder> zb_h1_orders(int stages, int micro_batches, const PassCosts& costs) {
  check(0, stages, micro_batches);
  if (!(costs.forward > 0 && costs.backward_input > 0 && costs.backward_weight >= 0)) {
    throw std::invalid_argument("ZB-H1: pass costs must be positive");
  }
  return ZbH1Play(stages, micro_batches, costs).play();
}

namespace {

// The state of one stage while DualPipe's steps are written out. "Phase 0" is the pipeline in
// which this stage comes early (the first half of the stages are early in the forward
// pipeline, the second half in the reverse one), as in the reference implementation.
class DualPipeWriter {
 public:
  DualPipeWriter(int stage, int stages, int micro_batches)
      : second_half_(stage >= stages / 2), half_batches_(micro_batches / 2) {}

  void forward(int phase, bool overlaps_next = false) {
    const int dir = direction(phase);
    order_.push_back({PassKind::kForward, micro_batch(dir, next_f_[dir]++), dir, overlaps_next});
  }
  void backward(int phase, bool zero_bubble = false) {
    const int dir = direction(phase);
    const int mb = micro_batch(dir, next_b_[dir]++);
    order_.push_back(
        {zero_bubble ? PassKind::kBackwardInput : PassKind::kBackward, mb, dir, false});
    if (zero_bubble) pending_w_.push_back({PassKind::kBackwardWeight, mb, dir, false});
  }
  void weight() {
    order_.push_back(pending_w_.front());
    pending_w_.pop_front();
  }
  // A forward of one phase overlapped with a (full) backward of the other.
  void forward_backward(int forward_phase, int backward_phase) {
    forward(forward_phase, /*overlaps_next=*/true);
    backward(backward_phase);
  }
  PassOrder take() { return std::move(order_); }

 private:
  int direction(int phase) const { return phase ^ (second_half_ ? 1 : 0); }
  int micro_batch(int dir, int k) const { return dir * half_batches_ + k; }

  bool second_half_;
  int half_batches_;
  int next_f_[2] = {0, 0};
  int next_b_[2] = {0, 0};
  std::deque<PipelinePass> pending_w_;
  PassOrder order_;
};

}  // namespace

PassOrder dualpipe_order(int stage, int stages, int micro_batches) {
  check(stage, stages, micro_batches);
  if (stages % 2 != 0 || micro_batches % 2 != 0 || micro_batches < 2 * (stages - 1)) {
    throw std::invalid_argument(fmt::format(
        "DualPipe: needs an even number of stages ({}) and an even number of micro-batches of at "
        "least 2 (stages - 1) ({})",
        stages, micro_batches));
  }
  const int half_stages = stages / 2;
  const int half_rank = std::min(stage, stages - 1 - stage);
  const int half_batches = micro_batches / 2;
  const bool middle = stage == half_stages - 1 || stage == half_stages;
  DualPipeWriter w(stage, stages, micro_batches);
  // The reference implementation's eight steps.
  for (int i = 0; i < (half_stages - half_rank - 1) * 2; ++i) w.forward(0);  // 1: nF0
  for (int i = 0; i < half_rank + 1; ++i) {                                  // 2: nF0F1
    w.forward(0);
    w.forward(1);
  }
  for (int i = 0; i < half_stages - half_rank - 1; ++i) {  // 3: nB1W1F1, zero bubble
    w.backward(1, /*zero_bubble=*/true);
    w.weight();
    w.forward(1);
  }
  const int main_steps = half_batches - stages + half_rank + 1;  // 4: nF0B1F1B0
  for (int i = 0; i < main_steps; ++i) {
    if (i == 0 && middle) {
      // The middle stages do not overlap this first pair, to shorten the bubble.
      w.forward(0);
      w.backward(1);
    } else {
      w.forward_backward(0, 1);
    }
    w.forward_backward(1, 0);
  }
  for (int i = 0; i < half_stages - half_rank - 1; ++i) {  // 5: nB1F1B0
    w.backward(1);
    w.forward_backward(1, 0);
  }
  const int step6 = half_rank + 1;  // 6: nB1B0, the second half with zero bubble
  bool zero_bubble = false;
  for (int i = 0; i < step6; ++i) {
    if (i == step6 / 2 && half_rank % 2 == 1) zero_bubble = true;
    w.backward(1, zero_bubble);
    if (i == step6 / 2 && half_rank % 2 == 0) zero_bubble = true;
    w.backward(0, zero_bubble);
  }
  for (int i = 0; i < half_stages - half_rank - 1; ++i) {  // 7: nWB0, zero bubble
    w.weight();
    w.backward(0, /*zero_bubble=*/true);
  }
  for (int i = 0; i < half_rank + 1; ++i) w.weight();  // 8: nW
  return w.take();
}

}  // namespace racksim
