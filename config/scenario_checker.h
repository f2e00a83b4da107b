// The checker the scenario's validation passes share (config/scenario_validate.cpp and the
// section checks beside it): each failure names the field a user would change and points at the
// line where it (or the section holding it) is written.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "config/fraction_fields.h"
#include "config/scenario_loader.h"

namespace racksim::config {

class Checker {
 public:
  explicit Checker(const SourceMap& sources) : sources_(sources) {}

  [[noreturn]] void fail(const std::string& field, const std::string& detail) const {
    throw InputError(sources_.find(field), field, detail);
  }

  // Whether `field` came from a preset or the framework the scenario names.
  bool inherited(const std::string& field) const { return sources_.inherited(field); }

  // The field to name for a rule that `field` and `others` broke together: `field`, unless a --set
  // override wrote one of `others` and not `field` (the file's values agreed before the override,
  // so the override is what the user has to look at). A `field` a preset or the framework gave
  // stays named, with where it came from, since that is the value the user never wrote.
  std::string blame(const std::string& field, std::initializer_list<const char*> others) const {
    if (sources_.overridden(field) || sources_.inherited(field)) return field;
    for (const char* other : others) {
      if (sources_.overridden(other)) return other;
    }
    return field;
  }

  // A value the simulation cannot do without.
  template <typename T>
  void positive(const std::string& field, bool present, T value) const {
    if (!present) {
      const bool has_presets = field.rfind("model.", 0) == 0 || field.rfind("hardware.", 0) == 0;
      fail(field, has_presets ? "missing: set it, or name a preset that sets it"
                              : "missing: set it in the scenario");
    }
    if (!(value > 0)) fail(field, fmt::format("must be > 0, got {}", value));
  }

  // A value with a default: checked only when present.
  template <typename T>
  void positive_if_set(const std::string& field, bool present, T value) const {
    if (present && !(value > 0)) fail(field, fmt::format("must be > 0, got {}", value));
  }

  // A fraction in [kMinFraction, 1]. `field` must be in kFractionFields, so that what calibrate
  // bounds as a fraction and what this refuses cannot drift apart.
  void efficiency(const std::string& field, bool present, double value) const {
    if (!is_fraction_field(field)) {
      throw std::logic_error("Checker::efficiency: " + field +
                             " is not in config/fraction_fields.h");
    }
    if (!present) fail(field, fmt::format("missing: an efficiency in [{}, 1]", kMinFraction));
    if (!(value >= kMinFraction && value <= 1)) {
      fail(field, fmt::format("must be a fraction in [{}, 1] (below 1 % of a peak is no hardware "
                              "figure), got {}",
                              kMinFraction, value));
    }
  }

  void latency(const std::string& field, double value) const {
    if (!(value >= 0)) fail(field, fmt::format("must be >= 0 seconds, got {}", value));
  }

 private:
  const SourceMap& sources_;
};

// The layout's sizes once checked (absent dimensions are 1).
struct Sizes {
  int64_t tp, pp, cp, ep, vp, dp, gpus;
};

// `value` (the field `value_field`) must be a multiple of `divisor` (the field `field`); the error
// names `field`, or `value_field` where only that was overridden.
inline void check_divisible(const Checker& check, const std::string& field, int64_t value,
                            int64_t divisor, const std::string& what, const char* value_field) {
  if (value % divisor != 0) {
    check.fail(check.blame(field, {value_field}), fmt::format(fmt::runtime(what), value, divisor));
  }
}

}  // namespace racksim::config
