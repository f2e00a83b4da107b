// Checks of the training fields that switch framework behaviours on: TP communication overlap,
// deferred embedding gradients, DeepSpeed's pipeline exchange, Megatron-Core's combined 1F1B,
// recompute modules, FP8 activations and parameters, and the data-parallel overlaps.
#include "config/training_features_validate.h"

#include <string>

#include <fmt/format.h>

#include "config/field_path.h"
#include "config/scenario_checker.h"
#include "proto/recompute_modules.h"
#include "workloads/training/framework_presets.h"

namespace racksim::config {
namespace {

// Transformer Engine overlaps TP communication with the GEMMs only under sequence parallelism, and
// its reduce-scatter kernels must leave the GEMM beside them some SMs.
void check_tp_comm_overlap(const config::Scenario& scenario, const Sizes& sizes,
                           const Checker& check) {
  const config::Training& training = scenario.training();
  if (!training.tp_comm_overlap()) return;
  if (sizes.tp > 1 && !scenario.layout().sequence_parallel()) {
    check.fail("training.tp_comm_overlap",
               fmt::format("overlapping TP communication with the GEMMs needs sequence "
                           "parallelism (Megatron-Core refuses --tp-comm-overlap without it); set "
                           "layout.sequence_parallel: true or drop the overlap (tp {})",
                           sizes.tp));
  }
  const int sms = training.tp_comm_overlap_sms();
  const int total = scenario.hardware().gpu().sm_count();
  if (sms < 0 || (total > 0 && sms >= total)) {
    check.fail("training.tp_comm_overlap_sms",
               fmt::format("must be in [0, {}) (hardware.gpu.sm_count), got {}", total, sms));
  }
}

// Megatron-Core defers the output layer's weight gradients into the pipeline's drain only when
// there is a pipeline (ModelParallelConfig refuses the flag at pipeline_model_parallel_size 1).
// Without the flag the limit is inert, as in Megatron-Core (so --set
// training.defer_embedding_wgrad=false turns a scenario's deferral off on its own).
void check_embedding_wgrad_deferral(const config::Scenario& scenario, const Sizes& sizes,
                                    const Checker& check) {
  const config::Training& training = scenario.training();
  if (training.wgrad_deferral_limit() < 0) {
    check.fail("training.wgrad_deferral_limit",
               fmt::format("must be 0 (every micro-batch) or more, got {}",
                           training.wgrad_deferral_limit()));
  }
  if (training.defer_embedding_wgrad() && sizes.pp < 2) {
    check.fail("training.defer_embedding_wgrad",
               fmt::format("defers the output layer's weight gradients into the pipeline's "
                           "drain, which needs layout.pp > 1 (got {}), as Megatron-Core requires",
                           sizes.pp));
  }
}

// DeepSpeed's exchange where it cannot run (deepspeed_exchange_refusal says why).
void check_pipeline_exchange(const config::Scenario& scenario, const Checker& check) {
  if (scenario.training().pipeline_exchange() != config::Training::DEEPSPEED) return;
  if (auto why = deepspeed_exchange_refusal(scenario))
    check.fail("training.pipeline_exchange", *why);
}

// Megatron-Core's combined 1F1B pairs a forward with another micro-batch's backward to hide the
// expert all-to-alls; it refuses to run without them, and with pipeline stages it runs only in
// the interleaved schedule (TransformerConfig's checks; Megatron-Bridge comm_overlap.py).
void check_moe_a2a_overlap(const config::Scenario& scenario, const Sizes& sizes,
                           const Checker& check) {
  const config::Training& training = scenario.training();
  if (!training.moe_a2a_overlap()) return;
  const auto fail = [&](const std::string& why) {
    check.fail("training.moe_a2a_overlap",
               "overlapping the expert all-to-alls (Megatron-Core's combined 1F1B) " + why);
  };
  if (scenario.model().num_experts() <= 1 || sizes.ep < 2) {
    fail(fmt::format("needs an MoE model with layout.ep > 1 (model.num_experts {}, ep {})",
                     scenario.model().num_experts(), sizes.ep));
  }
  const auto schedule = training.schedule();
  const bool interleaved = schedule == config::Training::INTERLEAVED_1F1B && sizes.vp >= 2;
  const bool one_stage = sizes.pp == 1 && (schedule == config::Training::ONE_F_ONE_B ||
                                           schedule == config::Training::INTERLEAVED_1F1B);
  if (!interleaved && !one_stage) {
    fail(
        fmt::format("runs in schedule INTERLEAVED_1F1B with layout.virtual_stages >= 2, or "
                    "without pipeline stages in ONE_F_ONE_B (pp {}, virtual_stages {}, "
                    "schedule {})",
                    sizes.pp, sizes.vp, config::Training::Schedule_Name(schedule)));
  }
  if (training.recompute() == config::Training::FULL) {
    fail("does not run with full recompute, as Megatron-Core refuses it");
  }
  if (training.pipeline_exchange() == config::Training::DEEPSPEED) {
    fail("is Megatron-Core's schedule, not DeepSpeed's (training.pipeline_exchange DEEPSPEED)");
  }
}

// Why `module` cannot be recomputed in `model` (empty when it can).
std::string recompute_module_problem(config::Training::RecomputeModule module,
                                     const config::Model& model) {
  using config::Training;
  const bool moe = model.num_experts() > 0;
  const bool dense_layer = !moe || model.first_dense_layers() > 0;
  switch (module) {
    case Training::MOE_ACT:
      return moe ? "" : "MOE_ACT recomputes the experts' activation, but the model has no experts";
    case Training::MOE:
      return moe ? "" : "MOE recomputes the MoE blocks, but the model has no experts";
    case Training::SHARED_EXPERTS:
      return moe && model.num_shared_experts() > 0
                 ? ""
                 : "SHARED_EXPERTS recomputes the shared experts, but the model has none";
    case Training::MLP:
      return dense_layer ? "" : "MLP recomputes the dense MLPs, but every layer is an MoE block";
    case Training::ALTERNATE_MATMULS:
      if (moe)
        return "ALTERNATE_MATMULS is torchtitan's policy for dense layers, but the model has "
               "experts";
      if (model.kv_lora_rank() > 0 || model.q_lora_rank() > 0) {
        return "ALTERNATE_MATMULS needs separate query, key and value projections, but the model's "
               "attention is latent (model.kv_lora_rank or model.q_lora_rank)";
      }
      return model.has_hybrid() ? "ALTERNATE_MATMULS needs full attention in every layer, but the "
                                  "model has hybrid attention (model.hybrid)"
                                : "";
    case Training::MLA_UP_PROJ:
      return model.kv_lora_rank() > 0 || model.q_lora_rank() > 0
                 ? ""
                 : "MLA_UP_PROJ recomputes a latent attention's up-projections, but the model has "
                   "none (model.kv_lora_rank and model.q_lora_rank are 0)";
    default:
      return "";
  }
}

// Megatron-Core's --recompute-modules apply to selective recompute only, each to the part of the
// model it names; MOE already runs MOE_ACT's and SHARED_EXPERTS' work again.
void check_recompute_modules(const config::Scenario& scenario, const Checker& check) {
  const config::Training& training = scenario.training();
  const auto& modules = training.recompute_modules();
  if (modules.empty()) return;
  const auto fail = [&](const std::string& why) { check.fail("training.recompute_modules", why); };
  if (training.recompute() != config::Training::SELECTIVE) {
    fail(fmt::format("lists what selective recompute runs again, but recompute is {}",
                     config::Training::Recompute_Name(training.recompute())));
  }
  for (int i = 0; i < modules.size(); ++i) {
    const auto module = static_cast<config::Training::RecomputeModule>(modules[i]);
    if (module == config::Training::RECOMPUTE_MODULE_UNSPECIFIED) {
      fail("an entry is RECOMPUTE_MODULE_UNSPECIFIED: name one of " +
           enum_value_names(*config::Training::RecomputeModule_descriptor()));
    } else if (std::count(modules.begin(), modules.begin() + i, module) > 0) {
      fail(fmt::format("{} is listed twice", config::Training::RecomputeModule_Name(module)));
    } else if (const std::string problem = recompute_module_problem(module, scenario.model());
               !problem.empty()) {
      fail(problem);
    }
  }
  const auto listed = [&](config::Training::RecomputeModule m) {
    return lists_recompute_module(training, m);
  };
  if (listed(config::Training::ALTERNATE_MATMULS)) {
    if (modules.size() > 1) {
      fail(
          "ALTERNATE_MATMULS is a whole policy (torchtitan's op-level checkpointing): list it "
          "alone");
    }
    if (scenario.layout().tp() > 1) {
      fail(
          fmt::format("ALTERNATE_MATMULS is modelled without tensor parallelism, but layout.tp "
                      "is {}",
                      scenario.layout().tp()));
    }
    // torchtitan's Llama has neither; what the policy would keep of them is not modelled.
    if (scenario.model().hidden_dropout() > 0) {
      fail(
          fmt::format("ALTERNATE_MATMULS is modelled without hidden dropout, but "
                      "model.hidden_dropout is {}",
                      scenario.model().hidden_dropout()));
    }
    if (training.attention_impl() == config::Training::MATERIALIZED) {
      fail(
          "ALTERNATE_MATMULS keeps the output of a fused attention kernel, but "
          "training.attention_impl is MATERIALIZED");
    }
  }
  if (listed(config::Training::MOE) &&
      (listed(config::Training::MOE_ACT) || listed(config::Training::SHARED_EXPERTS))) {
    fail(
        "MOE runs the whole MoE block again, its activation and shared experts included: list "
        "MOE without MOE_ACT and SHARED_EXPERTS");
  }
}

// Which layers full recompute takes (recompute_method, recompute_num_layers): a choice of layers
// for full recompute only, and BLOCK, EVERY_NTH and UNIFORM need their count.
void check_recompute_method(const config::Training& training, const Checker& check) {
  using config::Training;
  const auto method = training.recompute_method();
  const bool counted =
      method == Training::BLOCK || method == Training::EVERY_NTH || method == Training::UNIFORM;
  if (training.has_recompute_method() && method != Training::RECOMPUTE_METHOD_UNSPECIFIED &&
      training.recompute() != Training::FULL) {
    check.fail("training.recompute_method",
               fmt::format("chooses the layers full recompute runs again, but recompute is {}",
                           Training::Recompute_Name(training.recompute())));
  }
  if (counted && training.recompute_num_layers() < 1) {
    check.fail(
        "training.recompute_num_layers",
        fmt::format("recompute_method {} needs recompute_num_layers >= 1 (it is {})",
                    Training::RecomputeMethod_Name(method), training.recompute_num_layers()));
  }
  if (!counted && training.has_recompute_num_layers()) {
    check.fail("training.recompute_num_layers",
               fmt::format("counts layers for recompute_method BLOCK, EVERY_NTH or UNIFORM, but "
                           "recompute_method is {}",
                           Training::RecomputeMethod_Name(method)));
  }
}

// How the queries and keys are rotated says nothing for a model without rotary embeddings.
void check_rotary_impl(const config::Scenario& scenario, const Checker& check) {
  const config::Model& model = scenario.model();
  if (scenario.training().has_rotary_impl() &&
      scenario.training().rotary_impl() != config::Training::ROTARY_IMPL_UNSPECIFIED &&
      model.position_encoding() != config::Model::ROTARY) {
    check.fail("training.rotary_impl",
               fmt::format("says how rotary embeddings run, but model.position_encoding is {}",
                           config::Model::PositionEncoding_Name(model.position_encoding())));
  }
}

// How FP8 training keeps its activations says nothing for another dtype.
void check_fp8_activations(const config::Training& training, const Checker& check) {
  if (training.fp8_activations() == config::Training::LINEAR_INPUTS &&
      training.dtype() != config::FP8) {
    check.fail("training.fp8_activations",
               fmt::format("LINEAR_INPUTS says how FP8 training keeps its activations, but dtype "
                           "is {}",
                           config::DType_Name(training.dtype())));
  }
}

// The data-parallel overlaps describe Megatron-Core's distributed optimizer and
// DistributedDataParallel: the parameter gather's needs a sharded optimizer below FSDP's stage,
// the buckets are not FSDP's, and aligned reductions are overlapped ones.
void check_data_parallel_overlap(const config::Training& training, const Checker& check) {
  if (training.overlap_param_gather() && (training.zero_stage() < 1 || training.zero_stage() > 2)) {
    check.fail(
        "training.overlap_param_gather",
        fmt::format("overlaps a sharded optimizer's parameter gather (zero_stage 1 or 2), "
                    "but zero_stage is {}{}",
                    training.zero_stage(),
                    training.zero_stage() > 2 ? " (stage 3 gathers every layer anyway)" : ""));
  }
  if (training.bucket_first_chunk_only() && training.zero_stage() > 2) {
    check.fail("training.bucket_first_chunk_only",
               "describes the buckets of Megatron-Core's data parallelism (zero_stage 0 to 2), but "
               "zero_stage 3 gathers and reduces layer by layer");
  }
  if (training.align_grad_reduce() && !training.overlap_grad_reduce()) {
    check.fail("training.align_grad_reduce",
               "aligns the launch of overlapped gradient reductions, but overlap_grad_reduce is "
               "off");
  }
}

// FP8 parameters are FP8 training's, gathered by a sharded optimizer (Megatron-Core asserts the
// distributed one).
void check_fp8_parameters(const config::Training& training, const Checker& check) {
  if (!training.fp8_param_gather()) return;
  if (training.dtype() != config::FP8) {
    check.fail("training.fp8_param_gather",
               fmt::format("FP8 parameters need dtype FP8, but dtype is {}",
                           config::DType_Name(training.dtype())));
  }
  if (training.zero_stage() < 1) {
    check.fail("training.fp8_param_gather",
               "FP8 parameters are gathered by a sharded optimizer: set zero_stage 1 or more "
               "(Megatron's distributed optimizer)");
  }
}

}  // namespace

void check_training_features(const config::Scenario& scenario, const Sizes& sizes,
                             const Checker& check) {
  check_tp_comm_overlap(scenario, sizes, check);
  check_embedding_wgrad_deferral(scenario, sizes, check);
  check_pipeline_exchange(scenario, check);
  check_moe_a2a_overlap(scenario, sizes, check);
  check_recompute_modules(scenario, check);
  check_recompute_method(scenario.training(), check);
  check_rotary_impl(scenario, check);
  check_fp8_activations(scenario.training(), check);
  check_data_parallel_overlap(scenario.training(), check);
  check_fp8_parameters(scenario.training(), check);
}

}  // namespace racksim::config
