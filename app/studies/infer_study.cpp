#include "app/studies/infer_study.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/log_chart.h"
#include "app/studies/point_runner.h"
#include "config/scenario_loader.h"
#include "workloads/inference/inference_ledger.h"

namespace racksim::app {

namespace {

constexpr double kGB = 1e9;
const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

std::vector<MemoryRow> memory_identity(const InferenceAlgebra& a, double micro_batch) {
  std::vector<MemoryRow> rows;
  for (int pp : {1, 2, 4, 8}) {
    const GpuMemory m = gpu_memory(a.weight_bytes, a.kv_bytes_per_sequence, micro_batch, 1, pp);
    rows.push_back(
        {fmt::format("pp={} (batch {:g})", pp, micro_batch * pp), m.weight_bytes, m.kv_bytes});
  }
  for (int ep : {8, 64}) {
    // The same batch spread over E GPUs: weights and cache both divide.
    const GpuMemory m = gpu_memory(a.weight_bytes, a.kv_bytes_per_sequence, micro_batch, ep, 1);
    rows.push_back(
        {fmt::format("ep={} (batch {:g})", ep, micro_batch), m.weight_bytes, m.kv_bytes});
  }
  return rows;
}

InferStudy run_infer_study(const InferStudySpec& spec) {
  const config::LoadedScenario loaded = config::load_scenario(spec.scenario, spec.overrides);
  config::require_inference_section(loaded, "infer");
  InferStudy study;
  study.title = loaded.scenario.name().empty() ? spec.scenario : loaded.scenario.name();
  const InferenceRunPlan plan = resolve_inference_run(loaded);
  study.algebra = inference_algebra(plan);
  study.ep = plan.workload.layout.ep();
  study.pp = plan.workload.layout.pp();
  std::vector<int64_t> contexts = spec.contexts;
  if (contexts.empty()) contexts.push_back(plan.workload.decode.context);
  std::vector<PointJob> jobs;
  for (int64_t context : contexts) {
    for (int64_t batch : spec.batches) {
      PointJob job;
      job.args = {"infer", spec.scenario, "--phase", spec.phase, "--point-out", "{OUT}/point.json"};
      for (const auto& o :
           with(spec.overrides, {fmt::format("inference.batch={}", batch),
                                 fmt::format("inference.context_tokens={}", context)})) {
        job.args.push_back("--set");
        job.args.push_back(o);
      }
      job.output = "point.json";
      // Each point is checked here, so bad input stops before any child starts.
      config::load_scenario(
          spec.scenario,
          with(spec.overrides, {fmt::format("inference.batch={}", batch),
                                fmt::format("inference.context_tokens={}", context)}));
      jobs.push_back(std::move(job));
    }
  }
  const auto outcomes = run_points(jobs, spec.jobs);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].json) {
      study.points.push_back(inference_point_from_json(*outcomes[i].json));
    } else {
      study.failures.push_back(fmt::format("point {}: {}", i, outcomes[i].error));
    }
  }
  const double largest =
      static_cast<double>(*std::max_element(spec.batches.begin(), spec.batches.end()));
  study.memory = memory_identity(study.algebra, largest);
  study.placement = placement_rows(plan);
  return study;
}

// No inference run is in the validation: the README's accuracy table holds training steps.
constexpr const char* kInferenceUnvalidated =
    "How far to trust it: no measured or published inference step checks racksim's decode and "
    "prefill (the README's accuracy table, \"How accurate it is\", holds training steps only)";

std::string infer_table(const InferStudy& s) {
  const InferenceAlgebra& a = s.algebra;
  std::string out = fmt::format("{}\n", s.title);
  out += fmt::format(
      "model: {:.4g} B parameters, {:.4g} B active; weights {:.4g} GB on {} GPUs (ep {}, pp {})\n",
      a.total_params / 1e9, a.active_params / 1e9, a.weight_bytes / kGB, a.gpus, s.ep, s.pp);
  out += fmt::format(
      "weight-read latency floor: {:.4g} ms (each stage's largest per-GPU weights / HBM B/s, "
      "peak)\n",
      a.weight_read_floor_s * 1e3);
  out += fmt::format(
      "compute slope: {:.4g} us per token of batch (2 N_active / all GPUs' peak FLOP/s)\n",
      a.compute_time_per_token_s * 1e6);
  out += fmt::format(
      "break-even batch B* = (FLOP/s / HBM B/s) x (total / active) x (bytes per weight / 2) = "
      "{:.0f}\n",
      a.break_even_batch);
  out +=
      fmt::format("compute-bound cost floor: ${:.4g} per million tokens at ${:.4g} per GPU-hour\n",
                  a.cost_floor_per_mtok, a.price_per_gpu_s * 3600);
  out += fmt::format(
      "KV cache: {:.4g} KB per token of context (all layers), {:.4g} GB per sequence at the "
      "scenario's context\n",
      a.kv_bytes_per_token / 1e3, a.kv_bytes_per_sequence / kGB);
  out += std::string(kInferenceUnvalidated) + "\n\n";
  out += fmt::format("{:>8} {:>8} {:>11} {:>11} {:>12} {:>10} {:>9} {:>10} {:>10} {:>9}\n",
                     "context", "batch", "step ms", "floor ms", "tokens/s", "$/Mtok", "EP ms",
                     "weights GB", "KV GB/GPU", "x-domain");
  for (const auto& p : s.points) {
    out += fmt::format(
        "{:>8} {:>8} {:>11.4g} {:>11.4g} {:>12.5g} {:>10.4g} {:>9.3g} {:>10.4g} {:>10.4g} "
        "{:>8.1f}%\n",
        p.context, p.batch, p.step_time_s * 1e3,
        std::max(p.weight_floor_s, p.compute_floor_s) * 1e3, p.tokens_per_s, p.cost_per_mtok,
        p.ep_time_s * 1e3, p.max_weight_bytes / kGB, p.max_kv_bytes / kGB, 100 * p.crossing_share);
  }
  out +=
      "\nfloor ms: max(weight-read floor, batch x compute slope); weights and KV: the most any GPU "
      "holds.\n";
  out += "\nmemory per GPU (lecture: c_mem = N/(E P) + B L bytes/(E P); the batch grows with P):\n";
  for (const auto& m : s.memory) {
    out += fmt::format("  {:<22} weights {:>9.4g} GB  KV {:>9.4g} GB\n", m.what,
                       m.weight_bytes_per_gpu / kGB, m.kv_bytes_per_gpu / kGB);
  }
  out +=
      "  pipeline stages divide the weights but not the KV cache; expert parallelism divides "
      "both.\n";
  out += placement_table(s.placement);
  for (const auto& f : s.failures) out += fmt::format("failed: {}\n", f);
  return out;
}

void write_infer_svg(const InferStudy& s, std::ostream& os) {
  analysis::ChartPanel latency{"latency per token", "batch (sequences)", "ms per token", {}, {}};
  analysis::ChartPanel cost{
      "cost per million tokens", "batch (sequences)", "$ per million tokens", {}, {}};
  std::vector<int64_t> contexts;
  for (const auto& p : s.points) {
    if (std::find(contexts.begin(), contexts.end(), p.context) == contexts.end())
      contexts.push_back(p.context);
  }
  const double price = s.algebra.price_per_gpu_s * s.algebra.gpus;
  analysis::ChartSeries floor{"weight-read floor", "#555", true, {}};
  analysis::ChartSeries compute{"compute bound", "#999", true, {}};
  analysis::ChartSeries cost_floor{"compute cost floor", "#999", true, {}};
  analysis::ChartSeries weight_cost{"weight-read cost", "#555", true, {}};
  for (size_t c = 0; c < contexts.size(); ++c) {
    const std::string color = kPalette[c % std::size(kPalette)];
    analysis::ChartSeries lat{fmt::format("simulated, L={}", contexts[c]), color, false, {}};
    analysis::ChartSeries dollars = lat;
    for (const auto& p : s.points) {
      if (p.context != contexts[c]) continue;
      const double b = static_cast<double>(p.batch);
      lat.points.emplace_back(b, p.latency_per_token_s * 1e3);
      dollars.points.emplace_back(b, p.cost_per_mtok);
      if (c == 0) {
        floor.points.emplace_back(b, s.algebra.weight_read_floor_s * 1e3);
        compute.points.emplace_back(b, p.compute_floor_s * 1e3);
        cost_floor.points.emplace_back(b, s.algebra.cost_floor_per_mtok);
        weight_cost.points.emplace_back(b, price * s.algebra.weight_read_floor_s / b * 1e6);
      }
    }
    latency.series.push_back(std::move(lat));
    if (price > 0) cost.series.push_back(std::move(dollars));
  }
  latency.series.push_back(floor);
  latency.series.push_back(compute);
  cost.series.push_back(cost_floor);
  cost.series.push_back(weight_cost);
  const analysis::ChartMarker b_star{s.algebra.break_even_batch,
                                     fmt::format("B*={:.0f}", s.algebra.break_even_batch)};
  latency.markers.push_back(b_star);
  cost.markers.push_back(b_star);
  analysis::write_log_charts(s.title, {latency, cost}, os);
}

nlohmann::ordered_json infer_json(const InferStudy& s) {
  nlohmann::ordered_json j;
  j["title"] = s.title;
  j["validation"] = {{"checks", nlohmann::ordered_json::array()}, {"note", kInferenceUnvalidated}};
  j["algebra"] = to_json(s.algebra);
  j["points"] = nlohmann::ordered_json::array();
  for (const auto& p : s.points) j["points"].push_back(to_json(p));
  j["memory"] = nlohmann::ordered_json::array();
  for (const auto& m : s.memory) {
    j["memory"].push_back({{"what", m.what},
                           {"weight_bytes_per_gpu", m.weight_bytes_per_gpu},
                           {"kv_bytes_per_gpu", m.kv_bytes_per_gpu}});
  }
  j["placement"] = nlohmann::ordered_json::array();
  for (const auto& p : s.placement) {
    j["placement"].push_back(
        {{"map", p.map},
         {"imbalance", p.imbalance},
         {"slowest_expert_time_s", p.slowest_expert_time_s},
         {"cross_domain_bytes", p.cross_domain_bytes},
         {"cross_domain_share", p.cross_domain_share},
         {"dedup_cross_domain_bytes", p.dedup_cross_domain_bytes
                                          ? nlohmann::ordered_json(*p.dedup_cross_domain_bytes)
                                          : nlohmann::ordered_json()},
         {"remote_domains_per_token", p.remote_domains_per_token
                                          ? nlohmann::ordered_json(*p.remote_domains_per_token)
                                          : nlohmann::ordered_json()}});
  }
  j["failures"] = s.failures;
  return j;
}

}  // namespace racksim::app
