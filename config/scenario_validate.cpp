// The checks that make a resolved scenario one we can simulate. Each failure names the field a
// user would change and points at the line where it (or the section holding it) is written.
#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "config/experts_validate.h"
#include "config/faults_validate.h"
#include "config/field_path.h"
#include "config/hardware_validate.h"
#include "config/pipeline_layout_validate.h"
#include "config/power_cost_validate.h"
#include "config/scenario_checker.h"
#include "config/scenario_limits.h"
#include "config/scenario_loader.h"
#include "config/symmetry_fold.h"
#include "proto/recompute_modules.h"
#include "topologies/measured_collectives.h"
#include "workloads/model/attention_ledger.h"
#include "workloads/training/framework_presets.h"

namespace racksim::config {
namespace {

void check_model(const config::Model& model, const Checker& check) {
  check.positive("model.hidden_size", model.has_hidden_size(), model.hidden_size());
  check.positive("model.num_layers", model.has_num_layers(), model.num_layers());
  check.positive("model.num_heads", model.has_num_heads(), model.num_heads());
  // Every layer of an all-MoE model has experts instead of a dense MLP.
  const bool dense_layers = model.num_experts() <= 0 || model.first_dense_layers() > 0;
  if (dense_layers) {
    check.positive("model.ffn_hidden_size", model.has_ffn_hidden_size(), model.ffn_hidden_size());
  }
  check.positive("model.vocab_size", model.has_vocab_size(), model.vocab_size());
  if (!(model.hidden_dropout() >= 0 && model.hidden_dropout() < 1)) {
    check.fail("model.hidden_dropout",
               fmt::format("must be a probability in [0, 1), got {}", model.hidden_dropout()));
  }
  check.positive_if_set("model.num_kv_heads", model.has_num_kv_heads(), model.num_kv_heads());
  const int64_t kv_heads = model.has_num_kv_heads() ? model.num_kv_heads() : model.num_heads();
  if (model.num_heads() % kv_heads != 0) {
    check.fail(check.blame("model.num_kv_heads", {"model.num_heads"}),
               fmt::format("num_heads {} is not a multiple of num_kv_heads {}: each KV head "
                           "must serve the same number of query heads",
                           model.num_heads(), kv_heads));
  }
  if (model.has_head_dim()) {
    check.positive("model.head_dim", true, model.head_dim());
  } else if (model.hidden_size() % model.num_heads() != 0) {
    check.fail(check.blame("model.hidden_size", {"model.num_heads"}),
               fmt::format("hidden_size {} is not divisible by num_heads {}; set model.head_dim "
                           "if the heads are not hidden_size / num_heads wide",
                           model.hidden_size(), model.num_heads()));
  }
}

void check_training(const config::Training& training, const Checker& check) {
  check.positive("training.global_batch_size", training.has_global_batch_size(),
                 training.global_batch_size());
  check.positive("training.micro_batch_size", training.has_micro_batch_size(),
                 training.micro_batch_size());
  check.positive("training.seq_length", training.has_seq_length(), training.seq_length());
}

// The layout sizes, with the defaults for the ones an unresolved scenario leaves unset.
Sizes check_layout_values(const config::Scenario& scenario, const Checker& check) {
  const config::Layout& layout = scenario.layout();
  auto size = [&](const char* name, bool present, int32_t value) -> int64_t {
    if (!present) return 1;
    if (value < 1)
      check.fail(fmt::format("layout.{}", name), fmt::format("must be >= 1, got {}", value));
    return value;
  };
  Sizes sizes{};
  sizes.tp = size("tp", layout.has_tp(), layout.tp());
  sizes.pp = size("pp", layout.has_pp(), layout.pp());
  sizes.cp = size("cp", layout.has_cp(), layout.cp());
  sizes.ep = size("ep", layout.has_ep(), layout.ep());
  sizes.vp = size("virtual_stages", layout.has_virtual_stages(), layout.virtual_stages());
  sizes.dp = size("dp", layout.has_dp(), layout.dp());
  sizes.gpus = int64_t{scenario.hardware().nodes()} * scenario.hardware().gpus_per_node();

  const int64_t model_parallel = sizes.tp * sizes.pp * sizes.cp;
  const int32_t nodes = scenario.hardware().nodes();
  const std::string cluster =
      fmt::format("{} GPUs ({} node{} x {} GPUs per node)", sizes.gpus, nodes,
                  nodes == 1 ? "" : "s", scenario.hardware().gpus_per_node());
  // The product's fields as the error should name them: the one an override changed, if any.
  const auto blamed = [&](const char* field) {
    return check.blame(field, {"layout.tp", "layout.pp", "layout.cp", "layout.dp", "hardware.nodes",
                               "hardware.gpus_per_node"});
  };
  if (!layout.has_dp()) {
    // Resolution leaves dp unset only when no data-parallel size fits.
    if (sizes.gpus % model_parallel != 0) {
      check.fail(blamed("layout.tp"),
                 fmt::format("tp x pp x cp = {} x {} x {} = {} does not divide the {}, so no "
                             "data-parallel size dp gives tp x pp x cp x dp = GPUs",
                             sizes.tp, sizes.pp, sizes.cp, model_parallel, cluster));
    }
    sizes.dp = sizes.gpus / model_parallel;
  } else if (model_parallel * sizes.dp != sizes.gpus) {
    // Resolution sets dp only where the product fits, so a mismatch means the user wrote dp.
    check.fail(
        blamed("layout.dp"),
        fmt::format("tp x pp x cp x dp = {} x {} x {} x {} = {}, but the cluster has {}", sizes.tp,
                    sizes.pp, sizes.cp, sizes.dp, model_parallel * sizes.dp, cluster));
  }
  return sizes;
}

// The layers the pipeline split counts: the model's, plus the embedding, the loss and the
// multi-token-prediction modules where the layout counts them as layers.
int64_t counted_layers(const config::Scenario& scenario) {
  const config::Layout& layout = scenario.layout();
  return scenario.model().num_layers() + (layout.account_for_embedding_in_split() ? 1 : 0) +
         (layout.account_for_loss_in_split() ? 1 : 0) +
         (layout.account_for_mtp_in_split() ? scenario.model().mtp_depth() : 0);
}

// How the layers split over the pipeline: MTP modules count as layers only where the model has
// them; layout.first_stage_layers pins the first stage of a plain pipeline (the other stages
// share the rest) and does not combine with layers counted for the embedding, the loss or MTP.
void check_pipeline_split(const config::Scenario& scenario, const Sizes& sizes,
                          const Checker& check) {
  const config::Layout& layout = scenario.layout();
  if (layout.account_for_mtp_in_split() && scenario.model().mtp_depth() == 0) {
    check.fail("layout.account_for_mtp_in_split",
               "counts the multi-token-prediction modules as layers, but model.mtp_depth is 0");
  }
  if (layout.first_stage_layers() <= 0) return;
  if (counted_layers(scenario) != scenario.model().num_layers()) {
    check.fail(layout.account_for_embedding_in_split() ? "layout.account_for_embedding_in_split"
               : layout.account_for_loss_in_split()    ? "layout.account_for_loss_in_split"
                                                       : "layout.account_for_mtp_in_split",
               "counting the embedding, the loss or the MTP modules as layers does not combine "
               "with layout.first_stage_layers");
  }
  const auto schedule = scenario.training().schedule();
  if (sizes.pp > 1 &&
      (schedule == config::Training::DUALPIPE ||
       (schedule == config::Training::INTERLEAVED_1F1B && layout.virtual_stages() > 1))) {
    check.fail("layout.first_stage_layers",
               "pins the first stage of a plain pipeline; DualPipe and virtual stages split the "
               "layers into equal chunks (count the embedding, loss or MTP modules as layers "
               "instead)");
  }
}

// Whether the layers split over the pipeline stages: an explicit layout, a pinned first stage, or
// equal stages.
void check_stage_layers(const config::Scenario& scenario, const Sizes& sizes,
                        const Checker& check) {
  const config::Model& model = scenario.model();
  const int first_stage = scenario.layout().first_stage_layers();
  const int64_t counted = counted_layers(scenario);
  check_pipeline_layout(scenario, sizes, check);
  check_pipeline_split(scenario, sizes, check);
  if (!scenario.layout().pipeline_layout().empty()) {
    // The explicit layout placed every layer; check_pipeline_layout checked it.
  } else if (first_stage > 0 && sizes.pp > 1) {
    if (first_stage >= model.num_layers() ||
        (model.num_layers() - first_stage) % (sizes.pp - 1) != 0) {
      check.fail("layout.first_stage_layers",
                 fmt::format("{} layers on the first stage leave {} for the other {} stages, "
                             "which do not hold equal numbers of layers",
                             first_stage, model.num_layers() - first_stage, sizes.pp - 1));
    }
  } else {
    check_divisible(check, "layout.pp", counted, sizes.pp,
                    counted == model.num_layers()
                        ? "num_layers {} is not divisible by pp {}: pipeline stages hold equal "
                          "numbers of layers (or set layout.first_stage_layers)"
                        : "num_layers with the embedding, loss or MTP modules counted, {}, is not "
                          "divisible by pp {}: pipeline stages hold equal numbers of layers",
                    "model.num_layers");
  }
}

// Whether some layer's attention has key/value heads of its own, which tensor parallelism
// splits (own_kv_heads). A bad hybrid pattern is check_context_parallel's to report.
bool has_kv_heads(const config::Model& model) {
  try {
    const std::vector<AttentionKind> kinds = attention_kinds(model);
    return std::any_of(kinds.begin(), kinds.end(), own_kv_heads);
  } catch (const std::invalid_argument&) {
    return false;
  }
}

void check_layout_fits(const config::Scenario& scenario, const Sizes& sizes, const Checker& check) {
  const config::Model& model = scenario.model();
  const config::Training& training = scenario.training();
  const int64_t kv_heads = model.has_num_kv_heads() ? model.num_kv_heads() : model.num_heads();
  check_divisible(check, "layout.tp", model.num_heads(), sizes.tp,
                  "num_heads {} is not divisible by tp {}: each tensor-parallel rank needs "
                  "whole attention heads",
                  "model.num_heads");
  if (has_kv_heads(model)) {
    check_divisible(check, "layout.tp", kv_heads, sizes.tp,
                    "num_kv_heads {} is not divisible by tp {}: each tensor-parallel rank needs "
                    "whole KV heads",
                    "model.num_kv_heads");
  }
  if (model.ffn_hidden_size() > 0) {
    check_divisible(check, "layout.tp", model.ffn_hidden_size(), sizes.tp,
                    "ffn_hidden_size {} is not divisible by tp {}", "model.ffn_hidden_size");
  }
  check_stage_layers(scenario, sizes, check);
  const int64_t per_step = training.micro_batch_size() * sizes.dp;
  if (training.global_batch_size() % per_step != 0) {
    check.fail(
        check.blame("training.global_batch_size",
                    {"training.micro_batch_size", "layout.dp", "layout.tp", "layout.pp",
                     "layout.cp", "hardware.nodes", "hardware.gpus_per_node"}),
        fmt::format("global_batch_size {} is not a multiple of micro_batch_size x dp = "
                    "{} x {} = {}",
                    training.global_batch_size(), training.micro_batch_size(), sizes.dp, per_step));
  }
  check_divisible(check, "layout.cp", training.seq_length(), sizes.cp,
                  "seq_length {} is not divisible by cp {}", "training.seq_length");
  if (scenario.layout().sequence_parallel()) {
    check_divisible(check, "layout.sequence_parallel", training.seq_length(), sizes.tp,
                    "sequence parallelism splits seq_length {} over tp {} ranks, which does not "
                    "divide it",
                    "training.seq_length");
  }
}

// Context parallelism and the attention kinds.
void check_context_parallel(const config::Scenario& scenario, const Sizes& sizes,
                            const Checker& check) {
  const config::Model& model = scenario.model();
  try {
    const std::vector<AttentionKind> kinds = attention_kinds(model);
    if (std::any_of(kinds.begin(), kinds.end(), windowed) && model.hybrid().window_tokens() <= 0) {
      check.fail("model.hybrid.window_tokens",
                 "sliding-window layers (S or W) attend to the last window_tokens tokens; set "
                 "it above 0");
    }
  } catch (const std::invalid_argument& e) {
    check.fail("model.hybrid", e.what());
  }
  if (sizes.cp > 1 && scenario.training().attention_impl() == config::Training::MATERIALIZED) {
    check.fail(check.blame("layout.cp", {"training.attention_impl", "training.framework"}),
               fmt::format("context parallelism (cp {}) runs fused ring attention, but "
                           "training.attention_impl is MATERIALIZED{}: set attention_impl FLASH "
                           "or cp 1",
                           sizes.cp,
                           check.inherited("training.attention_impl")
                               ? fmt::format(" (training.framework '{}' sets it)",
                                             scenario.training().framework())
                               : ""));
  }
  if (sizes.cp > 1 && scenario.layout().cp_algorithm() == config::Layout::ULYSSES &&
      (model.num_heads() / sizes.tp) % sizes.cp != 0) {
    check.fail("layout.cp",
               fmt::format("Ulysses splits the {} heads of a TP rank over cp {}, which "
                           "does not divide them",
                           model.num_heads() / sizes.tp, sizes.cp));
  }
}

// Where the embedding, the loss or MTP modules count as layers, the first and the last chunk
// still hold a transformer layer each (the pipeline map refuses an empty chunk).
void check_counted_chunks(const config::Scenario& scenario, const Sizes& sizes,
                          const Checker& check) {
  const config::Layout& layout = scenario.layout();
  const int64_t counted = counted_layers(scenario);
  const bool interleaved = scenario.training().schedule() == config::Training::INTERLEAVED_1F1B;
  const int64_t chunks = int64_t{sizes.pp} * (interleaved ? sizes.vp : 1);
  if (layout.first_stage_layers() > 0 || counted == scenario.model().num_layers() ||
      counted % chunks != 0) {
    return;  // nothing counted, or an uneven split that the other checks name
  }
  const int64_t per_chunk = counted / chunks;
  const int64_t last = (layout.account_for_loss_in_split() ? 1 : 0) +
                       (layout.account_for_mtp_in_split() ? scenario.model().mtp_depth() : 0);
  const bool first_empty = layout.account_for_embedding_in_split() && per_chunk <= 1;
  if (first_empty || per_chunk <= last) {
    check.fail(first_empty                          ? "layout.account_for_embedding_in_split"
               : layout.account_for_loss_in_split() ? "layout.account_for_loss_in_split"
                                                    : "layout.account_for_mtp_in_split",
               fmt::format("{} layers counted over {} chunks (pp x virtual stages) is {} a chunk, "
                           "which leaves the {} chunk without a transformer layer",
                           counted, chunks, per_chunk, first_empty ? "first" : "last"));
  }
}

// What each pipeline schedule needs of the layout and the batch.
void check_schedule(const config::Scenario& scenario, const Sizes& sizes, const Checker& check) {
  const config::Training& training = scenario.training();
  const auto schedule = training.schedule();
  const int64_t micro_batches =
      training.global_batch_size() / (training.micro_batch_size() * sizes.dp);
  const std::string name = config::Training::Schedule_Name(schedule);
  if (sizes.vp > 1 && schedule != config::Training::INTERLEAVED_1F1B) {
    check.fail("layout.virtual_stages",
               fmt::format("virtual_stages {} needs training.schedule INTERLEAVED_1F1B (the "
                           "schedule is {})",
                           sizes.vp, name));
  }
  if (schedule == config::Training::INTERLEAVED_1F1B &&
      scenario.layout().pipeline_layout().empty()) {
    check_divisible(check, "layout.virtual_stages", counted_layers(scenario),
                    int64_t{sizes.pp} * sizes.vp,
                    "num_layers {} (with the embedding and loss where counted) is not divisible "
                    "by pp x virtual_stages = {}: every virtual stage holds the same number of "
                    "layers",
                    "model.num_layers");
  }
  // With or without an explicit layout the schedule runs micro-batches in groups of pp.
  if (schedule == config::Training::INTERLEAVED_1F1B && micro_batches % sizes.pp != 0) {
    check.fail("training.global_batch_size",
               fmt::format("interleaved 1F1B runs micro-batches in groups of pp: {} micro-batches "
                           "per data-parallel rank is not a multiple of pp {}",
                           micro_batches, sizes.pp));
  }
  if (schedule == config::Training::DUALPIPE) {
    if (sizes.pp < 2 || sizes.pp % 2 != 0) {
      check.fail("layout.pp",
                 fmt::format("DualPipe needs an even number of stages, got pp {}", sizes.pp));
    }
    if (micro_batches % 2 != 0 || micro_batches < 2 * (sizes.pp - 1)) {
      check.fail(
          "training.global_batch_size",
          fmt::format("DualPipe feeds half the micro-batches from each end: it needs an even "
                      "number of at least 2 (pp - 1) = {} micro-batches per data-parallel "
                      "rank, got {}",
                      2 * (sizes.pp - 1), micro_batches));
    }
  }
  check_counted_chunks(scenario, sizes, check);
  if (training.zero_stage() < 0 || training.zero_stage() > 3) {
    check.fail("training.zero_stage",
               fmt::format("must be 0, 1, 2 or 3, got {}", training.zero_stage()));
  }
  check.positive_if_set("training.grad_bucket_elements", training.has_grad_bucket_elements(),
                        training.grad_bucket_elements());
}

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
  if (listed(config::Training::MOE) &&
      (listed(config::Training::MOE_ACT) || listed(config::Training::SHARED_EXPERTS))) {
    fail(
        "MOE runs the whole MoE block again, its activation and shared experts included: list "
        "MOE without MOE_ACT and SHARED_EXPERTS");
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

// Parts of the schema that the simulator does not model yet, and precisions the GPU lacks.
void check_supported(const config::Scenario& scenario, const Sizes& sizes, const Checker& check) {
  check_experts(scenario, sizes, check);
  check_context_parallel(scenario, sizes, check);
  check_tp_comm_overlap(scenario, sizes, check);
  check_embedding_wgrad_deferral(scenario, sizes, check);
  check_pipeline_exchange(scenario, check);
  check_moe_a2a_overlap(scenario, sizes, check);
  check_recompute_modules(scenario, check);
  check_fp8_activations(scenario.training(), check);
  check_data_parallel_overlap(scenario.training(), check);
  check_fp8_parameters(scenario.training(), check);
  const config::Training& training = scenario.training();
  const config::Gpu& gpu = scenario.hardware().gpu();
  if (training.dtype() == config::FP8 && !(gpu.fp8_flops_per_s() > 0)) {
    check.fail("training.dtype",
               fmt::format("dtype FP8 is not supported on {}: hardware.gpu.fp8_flops_per_s is "
                           "not set",
                           gpu.has_name() ? gpu.name() : std::string("this GPU")));
  }
  if (training.dtype() == config::FP32 && !(gpu.fp32_flops_per_s() > 0)) {
    check.fail("training.dtype",
               "dtype FP32 needs hardware.gpu.fp32_flops_per_s, which is not set");
  }
}

}  // namespace

topo::MeasuredCollectives read_measured_table(const config::Hardware& hardware,
                                              const SourceMap& sources) {
  if (!hardware.collectives().has_measured_table()) return {};
  const std::string field = "hardware.collectives.measured_table";
  return topo::read_measured_collectives(hardware.collectives().measured_table(),
                                         sources.find(field), field);
}

// The inference section (racksim infer / racks): sizes and a price that make sense, and a layout
// the inference step models (attention data-parallel, no context parallelism).
void check_inference(const config::Scenario& scenario, const Sizes& sizes, const Checker& check) {
  if (!scenario.has_inference()) return;
  const config::Inference& inf = scenario.inference();
  check.positive_if_set("inference.batch", inf.has_batch(), inf.batch());
  check.positive_if_set("inference.context_tokens", inf.has_context_tokens(), inf.context_tokens());
  check.positive_if_set("inference.prompt_tokens", inf.has_prompt_tokens(), inf.prompt_tokens());
  if (!(inf.gpu_hour_price() >= 0)) {
    check.fail("inference.gpu_hour_price",
               fmt::format("a price is dollars per GPU-hour, >= 0; got {}", inf.gpu_hour_price()));
  }
  if (sizes.cp > 1) {
    check.fail("layout.cp",
               fmt::format("the inference step does not model context parallelism (cp {}); set "
                           "layout.cp: 1 for a scenario with an inference section",
                           sizes.cp));
  }
}

void validate_scenario(const config::Scenario& scenario, const SourceMap& sources) {
  check_scenario_limits(scenario, sources);
  const Checker check(sources);
  check_model(scenario.model(), check);
  check_hardware(scenario.hardware(), check);
  validate_power_cost(scenario.hardware(), sources);
  check_training(scenario.training(), check);
  const Sizes sizes = check_layout_values(scenario, check);
  check_layout_fits(scenario, sizes, check);
  check_schedule(scenario, sizes, check);
  check_supported(scenario, sizes, check);
  check_inference(scenario, sizes, check);
  validate_faults(scenario, sources);
  if (scenario.sim().fold_replicas()) {
    if (auto why = fold_refusal(scenario)) check.fail("sim.fold_replicas", "cannot fold: " + *why);
  }
}

void require_inference_section(const LoadedScenario& loaded, const std::string& command) {
  if (loaded.scenario.has_faults() && loaded.scenario.faults().ByteSizeLong() > 0) {
    throw InputError(loaded.sources.find("faults"), "faults",
                     fmt::format("racksim {} does not simulate faults; they are what-ifs of the "
                                 "training step (racksim run, docs/faults.md)",
                                 command));
  }
  if (loaded.scenario.has_inference()) return;
  throw InputError(loaded.sources.find("inference"), "inference",
                   fmt::format("racksim {} needs an inference section (batch, context_tokens, "
                               "gpu_hour_price); see scenarios/ for examples",
                               command));
}

}  // namespace racksim::config
