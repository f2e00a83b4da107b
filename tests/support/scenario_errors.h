// Helpers of the scenario-loader tests: what an InputError said, and a small valid scenario to
// splice a layout into.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/scenario_loader.h"

namespace racksim::config {

// What an InputError said, or a failure when none was thrown.
struct Caught {
  bool thrown = false;
  SourceLocation where;
  std::string field;
  std::string detail;
};

inline Caught catch_input_error(const std::function<void()>& action) {
  Caught caught;
  try {
    action();
  } catch (const InputError& error) {
    caught = {true, error.where(), error.field(), error.detail()};
  }
  return caught;
}

inline Caught load_error(const std::string& text, const std::string& path = "scenario.textproto",
                         const std::vector<std::string>& overrides = {}) {
  return catch_input_error([&] { config::load_scenario_text(text, path, overrides); });
}

// A minimal valid scenario on one 8-GPU node, with `layout` and `extra` spliced in.
inline std::string small_scenario(const std::string& layout, const std::string& extra = "") {
  return "model { preset: \"llama3-8b\" }\n"    // line 1
         "hardware { preset: \"dgx-h100\" }\n"  // line 2
         "training {\n"                         // line 3
         "  global_batch_size: 16\n"            // line 4
         "  seq_length: 2048\n"                 // line 5
         "}\n"                                  // line 6
         "layout {\n" +                         // line 7
         layout +                               // from line 8
         "}\n" +
         extra;
}

}  // namespace racksim::config
