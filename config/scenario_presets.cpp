// How a scenario's unset fields are filled: data paths made relative to the scenario, then the
// model, hardware and framework presets under what the scenario writes, then built-in defaults.
#include "config/scenario_presets.h"

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "config/hf_config_file.h"
#include "config/scenario_paths.h"
#include "topologies/hardware_presets.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/framework_presets.h"

namespace racksim::config {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

void resolve_model(config::Scenario* scenario, const SourceMap& sources) {
  config::Model model;
  if (scenario->model().has_hf_config()) {
    if (scenario->model().has_preset()) {
      throw InputError(sources.find("model.hf_config"), "model.hf_config",
                       "give model.preset or model.hf_config, not both");
    }
    model = read_hf_config(*scenario, sources);
  } else if (scenario->model().has_preset()) {
    const std::string& name = scenario->model().preset();
    std::optional<config::Model> preset = model_preset(name);
    if (!preset) {
      throw InputError(sources.find("model.preset"), "model.preset",
                       fmt::format("unknown model preset '{}'; known presets: {}", name,
                                   join_names(model_preset_names())));
    }
    model = std::move(*preset);
  }
  model.MergeFrom(scenario->model());  // what the scenario writes wins over the preset

  if (!model.has_num_kv_heads() && model.has_num_heads()) {
    model.set_num_kv_heads(model.num_heads());
  }
  // Left unset when it does not divide: validation then names hidden_size.
  if (!model.has_head_dim() && model.num_heads() > 0 &&
      model.hidden_size() % model.num_heads() == 0) {
    model.set_head_dim(model.hidden_size() / model.num_heads());
  }
  if (!model.has_tie_embeddings()) model.set_tie_embeddings(false);
  if (model.activation() == config::Model::ACTIVATION_UNSPECIFIED) {
    model.set_activation(config::Model::SWIGLU);
  }
  *scenario->mutable_model() = std::move(model);
}

void resolve_hardware(config::Scenario* scenario, const SourceMap& sources) {
  config::Hardware hardware = topo::hardware_defaults();
  if (scenario->hardware().has_preset()) {
    const std::string& name = scenario->hardware().preset();
    std::optional<config::Hardware> preset = topo::hardware_preset(name);
    if (!preset) {
      throw InputError(sources.find("hardware.preset"), "hardware.preset",
                       fmt::format("unknown hardware preset '{}'; known presets: {}", name,
                                   join_names(topo::hardware_preset_names())));
    }
    hardware = std::move(*preset);  // presets include the defaults
  }
  hardware.MergeFrom(scenario->hardware());
  *scenario->mutable_hardware() = std::move(hardware);
}

void resolve_training(config::Training* training) {
  if (!training->has_micro_batch_size()) training->set_micro_batch_size(1);
  if (training->recompute() == config::Training::RECOMPUTE_UNSPECIFIED) {
    training->set_recompute(config::Training::NONE);
  }
  if (training->schedule() == config::Training::SCHEDULE_UNSPECIFIED) {
    training->set_schedule(config::Training::ONE_F_ONE_B);
  }
  if (training->dtype() == config::DTYPE_UNSPECIFIED) training->set_dtype(config::BF16);
  if (training->grad_reduce_dtype() == config::DTYPE_UNSPECIFIED) {
    training->set_grad_reduce_dtype(config::FP32);
  }
  if (training->grad_accumulation() == config::Training::GRAD_ACCUMULATION_UNSPECIFIED) {
    training->set_grad_accumulation(config::Training::FUSED_IN_WGRAD);
  }
  if (!training->has_pp_comm_overlap()) training->set_pp_comm_overlap(false);
  if (!training->has_tp_comm_overlap()) training->set_tp_comm_overlap(false);
  if (!training->has_tp_comm_overlap_sms()) training->set_tp_comm_overlap_sms(16);
  if (!training->has_flops_causal_halving()) training->set_flops_causal_halving(false);
}

// The framework's fields under the scenario's own (what the scenario writes wins).
void resolve_framework(config::Scenario* scenario, const SourceMap& sources) {
  if (!scenario->training().has_framework()) return;
  const std::string& name = scenario->training().framework();
  std::optional<config::Training> training = framework_training(name, *scenario);
  if (!training) {
    throw InputError(sources.find("training.framework"), "training.framework",
                     fmt::format("unknown framework '{}'; known frameworks: {}", name,
                                 join_names(framework_preset_names())));
  }
  training->MergeFrom(scenario->training());
  *scenario->mutable_training() = std::move(*training);
}

void resolve_layout(const config::Hardware& hardware, config::Layout* layout) {
  if (!layout->has_tp()) layout->set_tp(1);
  if (!layout->has_pp()) layout->set_pp(1);
  if (!layout->has_cp()) layout->set_cp(1);
  if (!layout->has_ep()) layout->set_ep(1);
  if (!layout->has_virtual_stages()) layout->set_virtual_stages(1);
  if (!layout->has_sequence_parallel()) layout->set_sequence_parallel(false);
  if (layout->has_dp()) return;
  // Left unset when tp x pp x cp does not divide the GPUs: validation reports it.
  const int64_t gpus = int64_t{hardware.nodes()} * hardware.gpus_per_node();
  const int64_t model_parallel = int64_t{layout->tp()} * layout->pp() * layout->cp();
  if (gpus > 0 && model_parallel > 0 && gpus % model_parallel == 0) {
    layout->set_dp(static_cast<int32_t>(gpus / model_parallel));
  }
}

// Data files named by the scenario are read relative to it, wherever racksim runs.
void resolve_data_paths(config::Scenario* scenario, const SourceMap& sources) {
  if (scenario->training().has_routing_file()) {
    scenario->mutable_training()->set_routing_file(
        path_from_scenario(scenario->training().routing_file(), "training.routing_file", sources)
            .string());
  }
  if (scenario->hardware().collectives().has_measured_table()) {
    auto* collectives = scenario->mutable_hardware()->mutable_collectives();
    collectives->set_measured_table(path_from_scenario(collectives->measured_table(),
                                                       "hardware.collectives.measured_table",
                                                       sources)
                                        .string());
  }
  if (scenario->expert_placement().has_token_routing_file()) {
    scenario->mutable_expert_placement()->set_token_routing_file(
        path_from_scenario(scenario->expert_placement().token_routing_file(),
                           "expert_placement.token_routing_file", sources)
            .string());
  }
}

// Records the fields a preset gives `section` that the scenario leaves unset as coming from the
// preset (`label`), so that an error on one names the preset instead of a line the user did not
// write.
void note_preset_fields(const google::protobuf::Message& preset,
                        const google::protobuf::Message& written, const std::string& section,
                        const std::string& label, SourceMap* sources) {
  const auto* reflection = preset.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(preset, &fields);
  for (const auto* field : fields) {
    const std::string path = section + "." + field->name();
    if (field->is_repeated() || reflection->HasField(written, field)) continue;
    sources->set(path, {fmt::format("{}{}{} to override it)", label, kInheritedMark, path), 0, 0});
  }
}

}  // namespace

void note_preset_sources(const config::Scenario& scenario, SourceMap* sources) {
  if (scenario.model().has_preset()) {
    const std::string& name = scenario.model().preset();
    // An unknown name is resolve_model's error.
    if (const std::optional<config::Model> preset = model_preset(name)) {
      note_preset_fields(*preset, scenario.model(), "model", fmt::format("model preset '{}'", name),
                         sources);
    }
  }
  if (scenario.training().has_framework()) {
    const std::string& name = scenario.training().framework();
    if (const auto preset = framework_training(name, scenario)) {
      note_preset_fields(*preset, scenario.training(), "training",
                         fmt::format("framework '{}'", name), sources);
    }
  }
}

void resolve_presets(config::Scenario* scenario, const SourceMap& sources) {
  resolve_data_paths(scenario, sources);
  resolve_model(scenario, sources);
  resolve_hardware(scenario, sources);
  resolve_framework(scenario, sources);
  resolve_training(scenario->mutable_training());
  resolve_layout(scenario->hardware(), scenario->mutable_layout());
  if (scenario->sim().fidelity() == config::Simulation::FIDELITY_UNSPECIFIED) {
    scenario->mutable_sim()->set_fidelity(kDefaultFidelity);
  }
}

}  // namespace racksim::config
