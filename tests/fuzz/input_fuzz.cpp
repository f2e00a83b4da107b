// libFuzzer target for everything racksim reads besides Chakra traces. RACKSIM_FUZZ_READER picks
// the reader (ctest runs one test per reader, each with its own seed corpus):
//   textproto  a scenario in protobuf text format, loaded, resolved and validated
//   json       a scenario in JSON, likewise
//   set        one `--set path=value` override applied to a valid scenario, then validated
//   hf         a Hugging Face config.json turned into a model
//   routing    a token-routing file (expert_placement.token_routing_file)
//   csv        a measured CSV (racksim calibrate --measured)
//   nccl       a measured collectives table (hardware.collectives.measured_table)
//   report     a report.json given to `racksim compare`
// Bad input must end in an InputError (exit code 2); any other exception, a crash or a
// sanitizer report is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include <google/protobuf/stubs/logging.h>
#include <nlohmann/json.hpp>

#include "analysis/report_compare.h"
#include "app/studies/calibrate.h"
#include "common/error.h"
#include "common/input_file.h"
#include "config/hf_config.h"
#include "config/scenario_loader.h"
#include "topologies/measured_collectives.h"
#include "workloads/moe/token_routing.h"

namespace {

constexpr const char* kBase = R"(model { preset: "llama3-8b" num_layers: 8 }
hardware { preset: "dgx-h100" nodes: 1 }
layout { tp: 2 pp: 2 dp: 2 }
training { global_batch_size: 8 micro_batch_size: 1 seq_length: 2048 }
)";

std::string reader;
std::string scratch_file;

// The readers that take a path get the bytes through a file of this process.
const std::string& as_file(std::string_view bytes) {
  std::ofstream(scratch_file, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return scratch_file;
}

void read_report(std::string_view bytes) {
  // What `racksim compare` does: refuse deep nesting, parse, compare.
  if (racksim::json_nesting_depth(bytes) > 64) return;
  const auto json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return;
  racksim::analysis::compare_reports(json, json);
}

void read_one(std::string_view bytes) {
  const std::string text(bytes);
  if (reader == "textproto") {
    racksim::config::load_scenario_text(text, "fuzz.textproto", {});
  } else if (reader == "json") {
    racksim::config::load_scenario_text(text, "fuzz.json", {});
  } else if (reader == "set") {
    racksim::config::load_scenario_text(kBase, "base.textproto", {text});
  } else if (reader == "hf") {
    const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_discarded()) racksim::model_from_hf_config(json);
  } else if (reader == "routing") {
    racksim::read_token_routing(as_file(bytes), 16, 2, "expert_placement.token_routing_file");
  } else if (reader == "csv") {
    racksim::app::read_measured_csv(as_file(bytes));
  } else if (reader == "nccl") {
    const auto table = racksim::topo::read_measured_collectives(as_file(bytes), {}, "table");
    for (const auto& [key, curve] : table.curves) {
      for (double bytes : {0.0, 1.0, 1e6, 1e12}) racksim::topo::measured_time_s(curve, bytes);
    }
  } else if (reader == "report") {
    read_report(bytes);
  } else {
    std::abort();  // an unknown RACKSIM_FUZZ_READER
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // refusals of bad UTF-8 are logged; they are tested
  const char* name = std::getenv("RACKSIM_FUZZ_READER");
  reader = name != nullptr ? name : "textproto";
  scratch_file = "/tmp/racksim-fuzz-" + reader + "-" + std::to_string(::getpid());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    read_one(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const racksim::InputError&) {
    return 0;  // a clear error for bad input: what we want
  } catch (const racksim::HfConfigError&) {
    return 0;  // the config reader's error, which the loader turns into an InputError
  }
  return 0;
}
