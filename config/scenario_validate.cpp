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
#include "config/training_features_validate.h"
#include "topologies/measured_collectives.h"
#include "workloads/model/attention_ledger.h"

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

// Parts of the schema that the simulator does not model yet, and precisions the GPU lacks.
void check_supported(const config::Scenario& scenario, const Sizes& sizes, const Checker& check) {
  check_experts(scenario, sizes, check);
  check_context_parallel(scenario, sizes, check);
  check_training_features(scenario, sizes, check);
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
