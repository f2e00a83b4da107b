#include "app/studies/floor_rows.h"

#include <algorithm>
#include <string>

#include "analysis/report.h"
#include "topologies/cluster_spec.h"

namespace racksim::app {

namespace {

// The step's FLOPs per GPU at the GPU's peak, what recompute runs again included and the causal
// half of attention left out: the least time its micro-batches' work takes, whatever the kernels.
double least_work_s(const TrainingPlan& plan) {
  const double capacity = plan.cluster.gpus() * plan.cluster.peak_flops_per_gpu;
  return capacity > 0
             ? analysis::hardware_flops_per_token(plan, true) * plan.tokens_per_step() / capacity
             : 0;
}

// Whether every GEMM dimension the model's width sets is a whole number of 16-byte loads on a
// TP rank, for the narrowest type the step runs (FP8): off that grain a narrower model's GEMMs
// can be slower than a wider one's (measurement_floor.h).
bool on_tensor_core_grain(const config::Model& model, int tp) {
  constexpr int64_t kGrain = 16;
  const int64_t heads = std::max<int64_t>(1, model.num_heads());
  return model.hidden_size() % (kGrain * tp) == 0 && model.ffn_hidden_size() % (kGrain * tp) == 0 &&
         model.hidden_size() % (kGrain * heads) == 0;
}

// The names of the kernels and collectives each layer runs, forward and backward, in order, with
// runs of identical layers written once with their count (a dense model's signature is one
// layer's): two micro-batches that give the same ran the same kernels (a framework that switches
// kernels with the shape, as Megatron's fused softmax does, names them differently).
std::string kernel_names(const TrainingPlan& plan, int layers) {
  std::string names, run;
  int count = 0;
  for (int layer = 0; layer < layers; ++layer) {
    const BlockSteps steps = plan.model.layer_steps(layer, plan.shape);
    std::string this_layer;
    for (const auto* pass : {&steps.forward, &steps.backward}) {
      for (const LayerStep& step : *pass) this_layer += step.name + ' ';
    }
    if (count > 0 && this_layer == run) {
      ++count;
      continue;
    }
    if (count > 0) names += std::to_string(count) + " x " + run + '|';
    run = std::move(this_layer);
    count = 1;
  }
  if (count > 0) names += std::to_string(count) + " x " + run + '|';
  return names;
}

}  // namespace

analysis::MicroBatchRow floor_row(const MeasuredPoint& point, const config::Scenario& scenario,
                                  const TrainingPlan& plan) {
  analysis::MicroBatchRow row;
  auto starts = [](const std::string& o, const char* field) { return o.rfind(field, 0) == 0; };
  for (const auto& o : point.overrides) {
    if (starts(o, "training.micro_batch_size=")) continue;
    row.family += o + " ";
    if (!starts(o, "layout.tp=") && !starts(o, "layout.dp=")) row.siblings += o + " ";
    if (!starts(o, "model.hidden_size=") && !starts(o, "model.ffn_hidden_size=") &&
        !starts(o, "model.num_layers=")) {
      row.model_siblings += o + " ";
    }
  }
  row.tp = plan.layout.tp();
  // Siblings are drawn for dense models only: an expert-parallel layout's TP changes what its
  // all-to-alls carry, which the siblings' bound does not cover.
  const config::Model& model = scenario.model();
  if (model.num_experts() > 1) row.siblings.clear();
  if (model.num_experts() > 1 || !on_tensor_core_grain(model, row.tp)) row.model_siblings.clear();
  row.hidden = static_cast<double>(model.hidden_size());
  row.ffn = static_cast<double>(model.ffn_hidden_size());
  row.layers = static_cast<double>(model.num_layers());
  const int domain = topo::cluster_spec(scenario.hardware()).scale_up.domain_size;
  row.tp_in_domain = domain > 0 && row.tp <= domain && domain % row.tp == 0;
  row.least_work_s = least_work_s(plan);
  const auto& training = scenario.training();
  row.micro_batch = static_cast<double>(training.micro_batch_size());
  row.stages = scenario.layout().pp();
  row.micro_batches = static_cast<double>(training.global_batch_size()) /
                      (static_cast<double>(scenario.layout().dp()) * row.micro_batch);
  // DualPipe feeds micro-batches from both ends: the floor's step formula is not drawn for it.
  row.bounded = training.schedule() != config::Training::DUALPIPE;
  row.measured_s = point.step_time_s;
  // Gradients reduced after the last backward, no pipeline drain to hide them behind: the
  // step's own costs do not change with the micro-batch (measurement_floor.h).
  row.step_costs_fixed = !plan.training.overlap_grad_reduce && row.stages == 1;
  row.kernels = kernel_names(plan, model.num_layers());
  return row;
}

}  // namespace racksim::app
