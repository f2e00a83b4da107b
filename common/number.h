// Numbers read from text a user wrote (CSV cells, command-line values, scenario overrides).
#pragma once

#include <optional>
#include <string_view>

namespace racksim {

// `text` as a finite decimal number, or nothing when any of it is not one: "12abc", " 12",
// "inf", "nan", "0x10" and "" are refused, where std::stod would read a prefix or an infinity
// and let a typo through as data. Exponents ("15e12") and a leading minus are numbers.
std::optional<double> parse_finite_number(std::string_view text);

}  // namespace racksim
