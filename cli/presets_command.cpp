#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "proto/scenario.pb.h"
#include "topologies/hardware_presets.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/framework_presets.h"

namespace racksim::cli {
namespace {

namespace po = boost::program_options;

// Where a preset holds its kernels below the rates they were benchmarked at, the line says so:
// the TFLOP/s above are the datasheet's, not what a step gets.
void print_power_limit(const config::ComputeEfficiency& compute) {
  if (compute.has_sustained_clock_ratio() && compute.sustained_clock_ratio() != 1) {
    fmt::print(
        "  {:<19} power limit: FLOP-bound kernels at {} of their benchmarked rates through a step "
        "(hardware.compute.sustained_clock_ratio)\n",
        "", compute.sustained_clock_ratio());
  }
  if (compute.gemm_sustained() != 0) {
    fmt::print(
        "  {:<19} power limit: GEMMs that fill the GPU at {} of the peak "
        "(hardware.compute.gemm_sustained)\n",
        "", compute.gemm_sustained());
  }
}

void print_text() {
  fmt::print("models:\n");
  for (const auto& name : model_preset_names()) {
    const auto m = model_preset(name);
    fmt::print(
        "  {:<19} hidden {:>6}, {:>3} layers, {:>3} heads ({} KV), FFN {:>6}, vocab {}  [{}]\n",
        name, m->hidden_size(), m->num_layers(), m->num_heads(), m->num_kv_heads(),
        m->ffn_hidden_size(), m->vocab_size(), m->source());
  }
  fmt::print(
      "hardware (per GPU; bandwidth per direction; HBM as the driver reports it, GB = 1e9 B):\n");
  for (const auto& name : topo::hardware_preset_names()) {
    const auto h = topo::hardware_preset(name);
    fmt::print(
        "  {:<19} {:<11} {:>5.0f} TFLOP/s BF16, {:>5.1f} GB HBM at {:.2f} TB/s, scale-up {:.0f} "
        "GB/s, NIC {:.0f} Gb/s\n",
        name, h->gpu().name(), h->gpu().bf16_flops_per_s() / 1e12, h->gpu().hbm_bytes() / 1e9,
        h->gpu().hbm_bytes_per_s() / 1e12, h->scale_up().bytes_per_s() / 1e9,
        h->scale_out().nic_bits_per_s() / 1e9);
    print_power_limit(h->compute());
    fmt::print("  {:<19} source: {}\n", "", h->source());
  }
  fmt::print("frameworks (training.framework; the fields each sets: docs/scenarios.md):\n");
  for (const auto& name : framework_preset_names()) {
    const auto f = framework_preset(name);
    fmt::print("  {:<19} {}\n", name, f->what);
    fmt::print("  {:<19} source: {}\n", "", f->source);
  }
}

// Protobuf's JSON mapping writes 64-bit integers as strings; a preset's integers (layer counts,
// widths, byte sizes) are far below 2^53, so they are written as the numbers they are, which a
// scenario's JSON form accepts too.
void int64_fields_as_numbers(const google::protobuf::Message& message, nlohmann::json& json) {
  using google::protobuf::FieldDescriptor;
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->is_map() || !json.contains(field->name())) continue;
    nlohmann::json& value = json[field->name()];
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!field->is_repeated()) {
        int64_fields_as_numbers(reflection->GetMessage(message, field), value);
        continue;
      }
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        int64_fields_as_numbers(reflection->GetRepeatedMessage(message, field, i), value[i]);
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
               field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64) {
      const bool is_signed = field->cpp_type() == FieldDescriptor::CPPTYPE_INT64;
      auto to_number = [is_signed](nlohmann::json& v) {
        const std::string digits = v.get<std::string>();
        if (is_signed) v = std::stoll(digits);
        if (!is_signed) v = std::stoull(digits);
      };
      if (field->is_repeated()) std::for_each(value.begin(), value.end(), to_number);
      if (!field->is_repeated()) to_number(value);
    }
  }
}

// A preset as the scenario fields it sets, spelled as a scenario's JSON form spells them (the
// proto field names), so that a script reads the value `--set` would override.
nlohmann::json fields_json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string text;
  const auto status = google::protobuf::util::MessageToJsonString(message, &text, options);
  if (!status.ok()) throw std::runtime_error("presets: " + status.ToString());
  nlohmann::json json = nlohmann::json::parse(text);
  int64_fields_as_numbers(message, json);
  return json;
}

nlohmann::json presets_json() {
  nlohmann::json out = {{"models", nlohmann::json::object()},
                        {"hardware", nlohmann::json::object()},
                        {"frameworks", nlohmann::json::object()}};
  for (const auto& name : model_preset_names()) {
    out["models"][name] = fields_json(*model_preset(name));
  }
  for (const auto& name : topo::hardware_preset_names()) {
    out["hardware"][name] = fields_json(*topo::hardware_preset(name));
  }
  for (const auto& name : framework_preset_names()) {
    const auto f = framework_preset(name);
    out["frameworks"][name] = {{"what", f->what}, {"source", f->source}};
  }
  return out;
}

}  // namespace

int presets_command(const std::vector<std::string>& args) {
  po::options_description options("racksim presets options");
  options.add_options()("help,h", "show this help")(
      "json", po::bool_switch(),
      "print every preset's fields as JSON (the scenario field names) instead of text");
  po::variables_map vm = parse_options_only(args, options);
  if (vm.count("help")) {
    std::cout << "usage: racksim presets [--json]\n" << options << "\n";
    return 0;
  }
  po::notify(vm);
  if (vm["json"].as<bool>()) {
    std::cout << presets_json().dump(2) << "\n";
  } else {
    print_text();
  }
  return 0;
}

}  // namespace racksim::cli
