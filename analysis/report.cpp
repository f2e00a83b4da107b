#include "analysis/report.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/algorithm_table.h"
#include "analysis/memory_report.h"
#include "analysis/steady_state.h"
#include "common/units.h"
#include "sim/engine.h"
#include "workloads/model/transformer.h"
#include "workloads/training/layout.h"

namespace racksim::analysis {

namespace {

// Which layers full recompute takes, when not all: " (12 of 32 layers)"; in groups: " (uniform
// groups of 4 layers)".
std::string layer_choice(const TrainingSettings& t) {
  const int recomputed = t.recomputed_layer_count();
  if (static_cast<size_t>(recomputed) == t.recomputed_layers.size()) {
    const int group = t.recomputed_layers.empty() ? 1 : t.recompute_group_at(0);
    return group > 1 ? fmt::format(" (uniform groups of {} layers)", group) : "";
  }
  return fmt::format(" ({} of {} layers)", recomputed, t.recomputed_layers.size());
}

// "SELECTIVE" alone for the attention's core (Megatron-Core's default), else what it runs again.
std::string recompute_name(const TrainingSettings& t) {
  std::string name = config::Training::Recompute_Name(t.recompute);
  if (t.recompute == config::Training::FULL) return name + layer_choice(t);
  if (t.recompute != config::Training::SELECTIVE) return name;
  std::vector<std::string> modules;
  using config::Training;
  auto add = [&](bool on, Training::RecomputeModule module) {
    if (on) modules.push_back(Training::RecomputeModule_Name(module));
  };
  add(t.recomputes_core_attention, Training::CORE_ATTN);
  add(t.recomputes_norms, Training::LAYERNORM);
  add(t.recomputes_moe_activation, Training::MOE_ACT);
  add(t.recomputes_up_projections, Training::MLA_UP_PROJ);
  add(t.recomputes_mlp, Training::MLP);
  add(t.recomputes_moe, Training::MOE);
  add(t.recomputes_shared_experts, Training::SHARED_EXPERTS);
  add(t.recomputes_alternate_matmuls, Training::ALTERNATE_MATMULS);
  if (modules == std::vector{Training::RecomputeModule_Name(Training::CORE_ATTN)}) return name;
  return fmt::format("{} ({})", name, fmt::join(modules, ", "));
}

std::string describe(const TrainingPlan& p) {
  const ClusterFigures& c = p.cluster;
  const ParallelLayout& l = p.layout;
  return fmt::format(
      "{} on {} x {} ({} GPUs), TP{} PP{} CP{} EP{} DP{}{}, {}{}, {} micro-batches of {} x {} "
      "tokens per DP rank, recompute {}{}",
      c.model_name, c.nodes, c.hardware_name, c.gpus(), l.tp(), l.pp(), l.cp(), l.ep(), l.dp(),
      p.shape.sequence_parallel ? " +SP" : "", config::Training::Schedule_Name(p.training.schedule),
      p.training.moe_a2a_overlap ? " (combined 1F1B: all-to-alls under the paired pass)" : "",
      p.micro_batches, p.training.micro_batch_size, p.training.seq_length,
      recompute_name(p.training),
      p.training.framework.empty() ? "" : ", framework " + p.training.framework);
}

// The validation's dtype classes: FP16 and BF16 run at one Tensor Core rate.
std::string dtype_class(DataType dtype) {
  switch (dtype) {
    case DataType::kFp8:
      return "FP8";
    case DataType::kFp32:
      return "FP32";
    default:
      return "16-bit";
  }
}

}  // namespace

double hardware_flops_per_token(const TrainingPlan& plan, bool causal_halving) {
  const TransformerModel& model = plan.model;
  const TrainingSettings& t = plan.training;
  double recompute_per_token = 0;
  if (t.recompute == config::Training::FULL) {
    // The forward of each layer full recompute takes (dense and MoE, full and windowed
    // attention each their own).
    for (int l = 0; l < model.layers(); ++l) {
      if (t.recomputes_layer(l)) {
        recompute_per_token += model.layer_forward_flops_per_token(l, t.seq_length, causal_halving);
      }
    }
  } else {
    if (t.recomputes_core_attention) {
      recompute_per_token +=
          model.attention_coeff(causal_halving) * static_cast<double>(t.seq_length) / 3;
    }
    // Each weight in a matrix multiply runs again: 2 FLOPs a token.
    if (t.recomputes_up_projections) recompute_per_token += 2 * model.up_projection_params();
    if (t.recomputes_mlp) recompute_per_token += 2 * model.dense_mlp_params();
    if (t.recomputes_moe) recompute_per_token += 2 * model.moe_block_active_params();
    if (t.recomputes_shared_experts) recompute_per_token += 2 * model.shared_expert_params();
    if (t.recomputes_alternate_matmuls) recompute_per_token += 2 * model.alternate_matmul_params();
  }
  return model.model_flops_per_token(t.seq_length, causal_halving) + recompute_per_token;
}

MfuFigures mfu_figures(const TrainingPlan& p, double step_time_s) {
  const TransformerModel& model = p.model;
  const TrainingSettings& t = p.training;
  MfuFigures m;
  m.causal_halving = t.flops_causal_halving;
  m.seq_length = t.seq_length;
  m.active_params = model.active_params();
  m.total_params = model.total_params();
  m.attention_coeff = model.attention_coeff(m.causal_halving);
  m.flops_per_token = model.model_flops_per_token(t.seq_length, m.causal_halving);
  m.attention_share = m.attention_coeff * static_cast<double>(t.seq_length) / m.flops_per_token;
  m.hardware_flops_per_token = hardware_flops_per_token(p, m.causal_halving);
  m.dtype = config::DType_Name(t.dtype_name);
  m.peak_flops_per_gpu = p.cluster.peak_flops_per_gpu;
  m.gpus = p.cluster.gpus();
  const double tokens = p.tokens_per_step();
  const double capacity = step_time_s * m.gpus * m.peak_flops_per_gpu;
  if (capacity > 0) {
    m.model = m.flops_per_token * tokens / capacity;
    m.hardware = m.hardware_flops_per_token * tokens / capacity;
  }
  return m;
}

std::string plan_layout_kind(const TrainingPlan& plan) {
  return layout_kind(plan.layout.tp(), plan.layout.pp(), static_cast<int>(plan.cluster.gpus()),
                     plan.cluster.scale_up_domain_gpus);
}

void set_plan_figures(const TrainingPlan& plan, double step_time_s, StepReport* r) {
  r->scenario = plan.name;
  r->description = describe(plan);
  r->step_time_s = step_time_s;
  r->tokens_per_step = plan.tokens_per_step();
  r->tokens_per_s = step_time_s > 0 ? r->tokens_per_step / step_time_s : 0;
  r->ms_per_1k_tokens = r->tokens_per_step > 0 ? step_time_s * 1e6 / r->tokens_per_step : 0;
  r->mfu = mfu_figures(plan, step_time_s);
  r->memory = worst_memory_ledger(plan);
  const ClusterFigures& c = plan.cluster;
  r->validation =
      validation_evidence({c.hardware_preset, c.calibration_file, c.sustained_clock_ratio,
                           dtype_class(plan.training.dtype), plan.model.moe() ? "MoE" : "dense"});
  r->validation.own_model_fields = c.own_model_fields;
  r->validation.nearest =
      nearest_checked_run(r->validation, r->mfu.total_params, static_cast<int>(r->mfu.gpus));
  r->validation.layout_kind = plan_layout_kind(plan);
  r->validation.same_layout_kind = same_layout_kind(r->validation, r->validation.layout_kind);
}

StepReport make_step_report(const TrainingPlan& plan, const TrainingStep& step,
                            const sim::SimResult& result, size_t top_operations) {
  StepReport r;
  set_plan_figures(plan, result.makespan_s, &r);
  const RankId critical = critical_rank(step.graph, result);
  r.breakdown = rank_breakdown(step.graph, result, critical, r.step_time_s);
  const ParallelLayout& layout = plan.layout;
  r.critical_stage = layout.coords(critical).pp;
  r.critical_path = critical_path(step.graph, result);
  r.path_operations = top_path_operations(step.graph, r.critical_path, top_operations);
  r.stage_of_rank.resize(step.graph.num_ranks());
  for (RankId rank = 0; rank < step.graph.num_ranks(); ++rank) {
    r.stage_of_rank[rank] = layout.coords(rank).pp;
  }
  r.sim_events = result.activities;
  r.sim_ops = step.graph.size();
  r.sim_flows = result.flows;
  r.sim_wall_s = result.wall_s;
  r.algorithms = result.algorithms;
  r.fidelity = config::Simulation::Fidelity_Name(result.fidelity);
  r.fidelity_error_budget = sim::fidelity_error_budget(result.fidelity);
  r.analytic_collectives = result.analytic_collectives;
  r.flow_collectives = result.flow_collectives;
  r.measured_table_collectives = result.measured_table_collectives;
  // Folding keeps one data-parallel replica: the others are what the simulated ranks stand for.
  r.folded_replicas = result.simulated_ranks > 0
                          ? static_cast<int>(step.graph.num_ranks() / result.simulated_ranks)
                          : 1;
  r.routes_computed = result.routes_computed;
  r.gpu_pairs = result.gpu_pairs;
  return r;
}

namespace {

constexpr CommDim kReportedDims[] = {CommDim::kTp, CommDim::kCp, CommDim::kEp, CommDim::kPp,
                                     CommDim::kDp};

// The ranks that hold most of the critical path, longest first.
std::vector<std::pair<RankId, double>> path_ranks(const CriticalPath& path, size_t limit) {
  std::vector<std::pair<RankId, double>> ranks;
  for (RankId rank = 0; rank < path.by_rank_s.size(); ++rank) {
    if (path.by_rank_s[rank] > 0) ranks.push_back({rank, path.by_rank_s[rank]});
  }
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (ranks.size() > limit) ranks.resize(limit);
  return ranks;
}

size_t ranks_on_path(const CriticalPath& path) {
  return static_cast<size_t>(
      std::count_if(path.by_rank_s.begin(), path.by_rank_s.end(), [](double s) { return s > 0; }));
}

std::string path_kind_name(PathKind kind, CommDim dim) {
  return kind == PathKind::kComm ? fmt::format("comm {}", to_string(dim))
                                 : std::string(to_string(kind));
}

int stage_of(const StepReport& r, RankId rank) {
  return rank < r.stage_of_rank.size() ? r.stage_of_rank[rank] : 0;
}

nlohmann::ordered_json critical_path_json(const StepReport& r) {
  using nlohmann::ordered_json;
  const CriticalPath& p = r.critical_path;
  ordered_json kinds, comm, ranks = ordered_json::array(), ops = ordered_json::array();
  for (int k = 0; k < kNumPathKinds; ++k) {
    if (static_cast<PathKind>(k) == PathKind::kComm) continue;
    kinds[std::string(to_string(static_cast<PathKind>(k)))] = p.by_kind_s[k];
  }
  for (CommDim d : kReportedDims) comm[std::string(to_string(d))] = p.comm_seconds(d);
  for (const auto& [rank, seconds] : path_ranks(p, 8)) {
    ranks.push_back({{"rank", rank}, {"pp_stage", stage_of(r, rank)}, {"seconds", seconds}});
  }
  for (const PathOperation& op : r.path_operations) {
    ops.push_back({{"label", op.label},
                   {"kind", path_kind_name(op.kind, op.dim)},
                   {"seconds", op.seconds},
                   {"count", op.count}});
  }
  return {{"length_s", p.length_s},
          {"by_kind_s", kinds},
          {"comm_s", comm},
          {"ranks", ranks_on_path(p)},
          {"rank_changes", p.rank_changes},
          {"segments", p.segments.size()},
          {"by_rank_s", ranks},
          {"operations", ops}};
}

nlohmann::ordered_json links_json(const LinkSummary& links) {
  using nlohmann::ordered_json;
  ordered_json top = ordered_json::array();
  for (const LinkUsage& u : links.top) {
    top.push_back({{"link", u.name},
                   {"class", u.link_class},
                   {"busy_fraction", u.busy_fraction},
                   {"busy_s", u.busy_s},
                   {"bytes", u.bytes},
                   {"mean_utilisation", u.mean_utilisation},
                   {"capacity_bytes_per_s", u.capacity_bytes_per_s}});
  }
  return {{"links_used", links.links_used}, {"resolution_s", links.resolution_s}, {"top", top}};
}

nlohmann::ordered_json mfu_json(const MfuFigures& m) {
  return {{"model", m.model},
          {"hardware", m.hardware},
          {"peak_flops_per_gpu", m.peak_flops_per_gpu},
          {"dtype", m.dtype},
          {"gpus", m.gpus},
          {"flops_per_token", m.flops_per_token},
          {"hardware_flops_per_token", m.hardware_flops_per_token},
          {"active_params", m.active_params},
          {"total_params", m.total_params},
          {"attention_coeff", m.attention_coeff},
          {"attention_share", m.attention_share},
          {"causal_halving", m.causal_halving}};
}

nlohmann::ordered_json breakdown_json(const StepReport& r) {
  const Breakdown& b = r.breakdown;
  nlohmann::ordered_json exposed;
  for (CommDim d : {CommDim::kTp, CommDim::kCp, CommDim::kEp, CommDim::kPp, CommDim::kDp}) {
    exposed[std::string(to_string(d))] = b.exposed_comm(d);
  }
  return {{"rank", b.rank},
          {"pp_stage", r.critical_stage},
          {"compute", b.compute_s},
          {"recompute", b.recompute_s},
          {"exposed_comm", exposed},
          {"bubble", b.bubble_s},
          {"optimizer", b.optimizer_s},
          {"offload", b.offload_s},
          {"other", b.other_s}};
}

nlohmann::ordered_json steady_state_json(const SteadyStateUse& s) {
  if (!s.extended) return {{"extended", false}, {"not_extended", s.not_extended}};
  return {{"extended", true},
          {"micro_batches", s.micro_batches},
          {"simulated_micro_batches", {s.small_micro_batches, s.large_micro_batches}},
          {"period_s", s.period_s},
          {"spacing_error", s.spacing_error}};
}

nlohmann::ordered_json sim_json(const StepReport& r) {
  return {{"fidelity", r.fidelity},
          {"fidelity_error_budget", r.fidelity_error_budget},
          {"ops", r.sim_ops},
          {"events", r.sim_events},
          {"flows", r.sim_flows},
          {"wall_s", r.sim_wall_s},
          {"analytic_collectives", r.analytic_collectives},
          {"flow_collectives", r.flow_collectives},
          {"measured_table_collectives", r.measured_table_collectives},
          {"folded_replicas", r.folded_replicas},
          {"routes_computed", r.routes_computed},
          {"gpu_pairs", r.gpu_pairs},
          {"steady_state", steady_state_json(r.steady_state)}};
}

nlohmann::ordered_json kernel_bounds_json(const ComputeBounds& k) {
  nlohmann::ordered_json shares;
  for (int i = 0; i < sim::kNumKernelBounds; ++i) {
    const auto bound = static_cast<sim::KernelBound>(i);
    shares[std::string(sim::json_key(bound))] = k.share(bound);
  }
  nlohmann::ordered_json j = {{"rank", k.rank}, {"kernel_s", k.total_s()}, {"share", shares}};
  if (k.sustained_clock_ratio != 1) j["sustained_clock_ratio"] = k.sustained_clock_ratio;
  return j;
}

}  // namespace

nlohmann::ordered_json report_json(const StepReport& r) {
  const Breakdown& b = r.breakdown;
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["description"] = r.description;
  j["step_time_s"] = r.step_time_s;
  j["tokens_per_step"] = r.tokens_per_step;
  j["tokens_per_s"] = r.tokens_per_s;
  j["tokens_per_s_per_gpu"] = r.mfu.gpus > 0 ? r.tokens_per_s / r.mfu.gpus : 0;
  j["ms_per_1k_tokens"] = r.ms_per_1k_tokens;
  j["mfu"] = mfu_json(r.mfu);
  j["validation"] = validation_evidence_json(r.validation);
  j["breakdown_s"] = breakdown_json(r);
  j["kernel_time_by_bound"] = kernel_bounds_json(r.kernel_bounds);
  j["offload"] = {{"exposed_s", b.offload_s},
                  {"copy_busy_s", b.copy_busy_s},
                  {"hidden_s", b.offload_hidden_s()},
                  {"to_host_bytes", b.copy_to_host_bytes},
                  {"to_device_bytes", b.copy_to_device_bytes}};
  j["memory"] = memory_json(r.memory);
  j["critical_path"] = critical_path_json(r);
  j["links"] = links_json(r.links);
  j["energy"] = energy_json(r.energy);
  j["cost_per_step"] = cost_json(r.cost_model, r.step_cost);
  if (r.faults.active) j["faults"] = faults_json(r.faults);
  j["collective_algorithms"] = algorithms_json(r.algorithms);
  j["sim"] = sim_json(r);
  return j;
}

namespace {

std::string row(const std::string& name, double seconds, double step) {
  return fmt::format("  {:<28}{:>12.4f} s{:>8.1f} %\n", name, seconds,
                     step > 0 ? 100 * seconds / step : 0.0);
}

std::string critical_path_text(const StepReport& r) {
  const CriticalPath& p = r.critical_path;
  std::string out =
      fmt::format("\nCritical path ({:.4f} s over {} ranks, {} moves between ranks):\n", p.length_s,
                  ranks_on_path(p), p.rank_changes);
  for (int k = 0; k < kNumPathKinds; ++k) {
    const auto kind = static_cast<PathKind>(k);
    if (kind == PathKind::kComm) {
      for (CommDim d : kReportedDims) {
        out += row(fmt::format("comm {}", to_string(d)), p.comm_seconds(d), r.step_time_s);
      }
    } else if (p.by_kind_s[k] > 0) {
      out += row(std::string(to_string(kind)), p.by_kind_s[k], r.step_time_s);
    }
  }
  out += "  on ranks:";
  for (const auto& [rank, seconds] : path_ranks(p, 6)) {
    out += fmt::format(" {} (stage {}) {:.3f} s;", rank, stage_of(r, rank), seconds);
  }
  out += "\n  longest operations on it:\n";
  for (const PathOperation& op : r.path_operations) {
    out += fmt::format("    {:<34} {:<16} {:>9.4f} s  ({} x)\n", op.label,
                       path_kind_name(op.kind, op.dim), op.seconds, op.count);
  }
  return out;
}

std::string links_text(const LinkSummary& links) {
  if (links.top.empty()) return "";
  std::string out = fmt::format(
      "\nBusiest links ({} directed links carried traffic; busy = at least one flow in "
      "flight{}):\n",
      links.links_used,
      links.resolution_s > 0 ? fmt::format(", gaps under {:.2g} s merged", links.resolution_s)
                             : "");
  for (const LinkUsage& u : links.top) {
    out += fmt::format("  {:<36} {:<11} busy {:>5.1f} %  mean {:>5.1f} %  {:>10.2f} GB\n", u.name,
                       u.link_class, 100 * u.busy_fraction, 100 * u.mean_utilisation,
                       u.bytes / units::kGB);
  }
  return out;
}

// How far to trust the step: the validation rows of its hardware configuration, or that none
// checks it.
std::string validation_text(const ValidationEvidence& v) {
  const std::string config = describe_configuration(v.configuration);
  if (v.checks.empty()) {
    const std::string& calibration = v.configuration.calibration;
    std::string out = fmt::format(
        "How far to trust it: no row of the README's accuracy table (\"How accurate it is\") "
        "checks {}{}.\n",
        config,
        calibration.empty() ? "" : "; a calibration's fit to its own points is not a check");
    const std::vector<ValidationEvidence> others = same_preset_evidence(v.configuration);
    if (!others.empty()) out += "  These configurations of the same preset are checked:\n";
    for (const ValidationEvidence& other : others) {
      out += fmt::format("    {}: {}\n", describe_configuration(other.configuration),
                         checks_summary(other));
    }
    return out + "\n";
  }
  std::string out = fmt::format(
      "How far to trust it: {} against measured and published steps (predicted / measured - 1; "
      "README, \"How accurate it is\"):\n",
      config);
  for (const ValidationCheck& c : v.checks) {
    out += fmt::format("  {:<66} {:>5} {:<4}  MAPE {:>5.2f} %  worst {:>+6.1f} %{}\n", c.what,
                       c.rows, c.rows == 1 ? "row" : "rows", c.mape_percent, c.worst_percent,
                       c.in_sample ? "  (fitted on them)" : "");
  }
  if (v.nearest) out += fmt::format("  nearest checked run: {}\n", describe_nearest(*v.nearest));
  out += describe_same_layout_kind(v);
  if (!v.own_model_fields.empty()) {
    out += fmt::format(
        "  This scenario sets {} itself: the rows checked the configuration with their own "
        "scenarios' values of these fields, not necessarily these.\n",
        fmt::join(v.own_model_fields, ", "));
  }
  return out + "\n";
}

// Step time, throughput and MFU with its denominator and FLOPs per token.
std::string headline_text(const StepReport& r) {
  const MfuFigures& m = r.mfu;
  std::string out;
  out += fmt::format("racksim: {}\n  {}\n\n", r.scenario.empty() ? "scenario" : r.scenario,
                     r.description);
  out += fmt::format("step time            {:.4f} s\n", r.step_time_s);
  out += fmt::format("tokens per step      {:.0f}\n", r.tokens_per_step);
  out += fmt::format("tokens/s             {:.1f} ({:.1f} per GPU)\n", r.tokens_per_s,
                     m.gpus ? r.tokens_per_s / m.gpus : 0.0);
  out += fmt::format("ms per 1K tokens     {:.3f}\n", r.ms_per_1k_tokens);
  out += fmt::format("MFU A (model)        {:.2f} %  (recompute not counted)\n", 100 * m.model);
  out += fmt::format("MFU B (hardware)     {:.2f} %  (recompute counted)\n", 100 * m.hardware);
  out += fmt::format("  denominator        {:.1f} TFLOP/s per GPU ({} dense peak) x {} GPUs\n",
                     m.peak_flops_per_gpu / 1e12, m.dtype, m.gpus);
  out += fmt::format(
      "  FLOPs per token    6N + aL = 6 x {:.4g} + {:.4g} x {} = {:.4g}  (f = {:.1f} % attention, "
      "{})\n",
      m.active_params, m.attention_coeff, m.seq_length, m.flops_per_token, 100 * m.attention_share,
      m.causal_halving ? "causal halving" : "no causal halving");
  out += fmt::format("  with recompute     {:.4g} FLOPs per token\n\n", m.hardware_flops_per_token);
  return out + validation_text(r.validation);
}

// One line: the shares of the rank's kernel time each bound sets, in the enum's order.
std::string kernel_bounds_text(const ComputeBounds& k) {
  if (k.total_s() <= 0) return "";
  std::string out = "  kernel time, by what sets it:";
  const char* separator = " ";
  for (int i = 0; i < sim::kNumKernelBounds; ++i) {
    const auto bound = static_cast<sim::KernelBound>(i);
    if (k.share(bound) < 0.0005) continue;
    out += fmt::format("{}{} {:.1f} %", separator, to_string(bound), 100 * k.share(bound));
    separator = ", ";
  }
  if (k.sustained_clock_ratio != 1) {
    out += fmt::format(
        "; FLOP-bound work at {:.3g} of the rate its kernels were benchmarked at "
        "(hardware.compute.sustained_clock_ratio)",
        k.sustained_clock_ratio);
  }
  return out + "\n";
}

std::string breakdown_text(const StepReport& r) {
  using units::kGB;
  const Breakdown& b = r.breakdown;
  std::string out = fmt::format("Breakdown of the critical rank {} (pipeline stage {}):\n", b.rank,
                                r.critical_stage);
  out += row("compute", b.compute_s, r.step_time_s);
  out += row("recompute", b.recompute_s, r.step_time_s);
  for (CommDim d : {CommDim::kTp, CommDim::kCp, CommDim::kEp, CommDim::kPp, CommDim::kDp}) {
    out += row(fmt::format("exposed comm {}", to_string(d)), b.exposed_comm(d), r.step_time_s);
  }
  out += row("pipeline bubble", b.bubble_s, r.step_time_s);
  out += row("optimizer", b.optimizer_s, r.step_time_s);
  out += row("offload", b.offload_s, r.step_time_s);
  out += row("other", b.other_s, r.step_time_s);
  out += row("total", b.total_s(), r.step_time_s);
  out += kernel_bounds_text(r.kernel_bounds);
  if (b.copy_busy_s > 0) {
    out += fmt::format(
        "  offload copies: {:.4f} s busy, {:.4f} s exposed, {:.4f} s hidden under compute; "
        "{:.2f} GB to host, {:.2f} GB back\n",
        b.copy_busy_s, b.offload_s, b.offload_hidden_s(), b.copy_to_host_bytes / kGB,
        b.copy_to_device_bytes / kGB);
  }
  return out;
}

std::string steady_state_text(const SteadyStateUse& s) {
  if (!s.extended) {
    return s.not_extended.empty()
               ? ""
               : fmt::format("Steady state: every micro-batch replayed ({})\n", s.not_extended);
  }
  return fmt::format(
      "Steady state: {} micro-batches extended from simulated steps of {} and {} (warm-up, steady "
      "micro-batches, cool-down):\n  each further micro-batch adds {:.6g} s; every rank's "
      "micro-batch spacing agrees with it within {:g}%; the timeline shows the {}-micro-batch "
      "step\n",
      s.micro_batches, s.small_micro_batches, s.large_micro_batches, s.period_s,
      100 * kSpacingTolerance, s.large_micro_batches);
}

// How the simulation ran: its size, fidelity, routes, folding and steady state.
std::string simulation_text(const StepReport& r) {
  const std::string budget =
      r.fidelity_error_budget > 0
          ? fmt::format(" (step within {:g}% of FULL)", 100 * r.fidelity_error_budget)
          : "";
  std::string out = fmt::format(
      "\nSimulation: {} operations, {} SimGrid activities ({} flows), fidelity {}{}, {:.2f} s "
      "wall\n",
      r.sim_ops, r.sim_events, r.sim_flows, r.fidelity, budget, r.sim_wall_s);
  out += fmt::format("Routes: {} computed on demand (an all-pairs table would hold {} GPU pairs)\n",
                     r.routes_computed, r.gpu_pairs);
  if (r.measured_table_collectives > 0) {
    out += fmt::format(
        "Measured: {} collectives inside one scale-up domain timed from "
        "hardware.collectives.measured_table\n",
        r.measured_table_collectives);
  }
  if (r.folded_replicas > 1) {
    out += fmt::format(
        "Folded: one data-parallel replica simulated for {} (cross-replica collectives "
        "analytic on the real fabric)\n",
        r.folded_replicas);
  }
  return out + steady_state_text(r.steady_state);
}

}  // namespace

std::string report_text(const StepReport& r) {
  std::string out = headline_text(r);
  out += breakdown_text(r);
  out += critical_path_text(r);
  out += faults_text(r.faults);
  out += links_text(r.links);
  out += energy_text(r.energy);
  out += fmt::format("Cost per step: ${:.4g} ({}), ${:.4g} per million tokens\n", r.step_cost.usd(),
                     r.cost_model.owned ? "owned: write-off and electricity" : "rented GPU-hours",
                     r.step_cost.usd_per_million_tokens());
  out += memory_text(r.memory);
  out += algorithms_text(r.algorithms);
  out += simulation_text(r);
  return out;
}

}  // namespace racksim::analysis
