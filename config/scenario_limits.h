// Checks that hold for every field of a scenario whatever it means: finite numbers in a
// documented range, defined enum values, no negative counts, valid UTF-8 text, and products of
// sizes that fit in int64. docs/guarantees.md lists the limits.
#pragma once

#include <string>

#include <google/protobuf/message.h>

#include "config/scenario_loader.h"

namespace racksim::config {

// Checks every set field of `message`, whose path in the scenario is `prefix` ("" for the
// scenario itself, "hardware" for its hardware section). Throws InputError naming the first
// offending field, in schema order.
void check_field_limits(const google::protobuf::Message& message, const std::string& prefix,
                        const SourceMap& sources);

// check_field_limits on the whole scenario, then the products of sizes (tokens per step,
// activation and parameter counts) against 2^50.
void check_scenario_limits(const config::Scenario& scenario, const SourceMap& sources);

}  // namespace racksim::config
