// parse_finite_number takes a whole decimal number or nothing: every reader of user text (CSV
// cells, command-line values, --set overrides) relies on it to refuse a typo instead of reading
// a prefix.
#include <gtest/gtest.h>

#include "common/number.h"

namespace racksim {
namespace {

TEST(ParseFiniteNumber, ReadsDecimalsAndExponents) {
  EXPECT_EQ(parse_finite_number("12"), 12.0);
  EXPECT_EQ(parse_finite_number("-0.5"), -0.5);
  EXPECT_EQ(parse_finite_number("15e12"), 15e12);
  EXPECT_EQ(parse_finite_number("2.5E-3"), 2.5e-3);
}

TEST(ParseFiniteNumber, RefusesAnythingThatIsNotWhollyAFiniteNumber) {
  for (const char* text : {"", "12abc", " 12", "12 ", "inf", "-inf", "nan", "infinity", "0x10",
                           "1e400", "1,5", "e3", "."}) {
    EXPECT_FALSE(parse_finite_number(text).has_value()) << "'" << text << "'";
  }
}

}  // namespace
}  // namespace racksim
