// `racksim collective --min-bytes/--max-bytes` sizes: a number and an optional binary suffix,
// nothing else (a typo is the command line's error, exit 2, not a prefix read as a size).
#include <gtest/gtest.h>

#include "app/studies/collective_bench.h"
#include "common/error.h"

namespace racksim::app {
namespace {

TEST(ByteSize, ReadsANumberAndABinarySuffix) {
  EXPECT_EQ(parse_byte_size("8", "--min-bytes"), 8.0);
  EXPECT_EQ(parse_byte_size("8B", "--min-bytes"), 8.0);
  EXPECT_EQ(parse_byte_size("64K", "--min-bytes"), 65536.0);
  EXPECT_EQ(parse_byte_size("1.5M", "--min-bytes"), 1.5 * 1024 * 1024);
  EXPECT_EQ(parse_byte_size("8g", "--min-bytes"), 8.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_byte_size("1e3", "--min-bytes"), 1000.0);
}

TEST(ByteSize, RefusesWhatIsNotOne) {
  for (const char* text :
       {"", "x", "K", "8KB", "8 K", " 8", "12abc", "inf", "nan", "0", "-8", "1e308T"}) {
    EXPECT_THROW(parse_byte_size(text, "--min-bytes"), InputError) << "'" << text << "'";
  }
}

}  // namespace
}  // namespace racksim::app
