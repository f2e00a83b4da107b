#include "config/power_cost_validate.h"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace racksim::config {

namespace {

// Every double field of `section` (all of them are amounts that cannot be negative).
void check_non_negative(const google::protobuf::Message& section, const std::string& prefix,
                        const SourceMap& sources) {
  const google::protobuf::Descriptor* d = section.GetDescriptor();
  const google::protobuf::Reflection* r = section.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) continue;
    if (!r->HasField(section, f)) continue;
    const double value = r->GetDouble(section, f);
    if (!(std::isfinite(value) && value >= 0)) {
      const std::string field = prefix + f->name();
      throw InputError(sources.find(field), field,
                       fmt::format("must be a finite number >= 0, got {}", value));
    }
  }
}

}  // namespace

void validate_power_cost(const config::Hardware& hardware, const SourceMap& sources) {
  check_non_negative(hardware.power(), "hardware.power.", sources);
  check_non_negative(hardware.cost(), "hardware.cost.", sources);
  check_non_negative(hardware.reliability(), "hardware.reliability.", sources);
  if (hardware.power().has_pue() && !(hardware.power().pue() >= 1)) {
    throw InputError(
        sources.find("hardware.power.pue"), "hardware.power.pue",
        fmt::format("facility power / IT power is >= 1, got {}", hardware.power().pue()));
  }
}

}  // namespace racksim::config
