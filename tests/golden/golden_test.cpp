// Golden outputs, SimGrid's tesh habit: every shipped scenario's text output is kept under
// tests/golden/ and compared line for line, so a change of numbers is a reviewed diff.
//
// tests/golden/manifest.txt lists one case per line: a name, then the racksim command and its
// arguments, paths relative to the repository root (the command runs there, so no absolute path
// reaches the output). Lines that depend on the wall clock are masked (mask_wall_clock).
// RACKSIM_UPDATE_GOLDENS=1 writes the goldens instead of comparing: scripts/update-goldens.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/run_racksim.h"

namespace racksim::testing {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string name;
  std::vector<std::string> args;
};

// ctest lists a case by its name, not by the bytes of the struct.
void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << c.name;
}

const fs::path kGoldenDir = fs::path(RACKSIM_SOURCE_DIR) / "tests" / "golden";

std::vector<GoldenCase> read_manifest() {
  std::ifstream in(kGoldenDir / "manifest.txt");
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    GoldenCase c;
    words >> c.name;
    for (std::string w; words >> w;) c.args.push_back(w);
    if (!c.args.empty()) cases.push_back(std::move(c));
  }
  return cases;
}

// Wall-clock figures ("0.17 s wall", "replay 0.27 s", "... activities/s") differ from run to
// run; everything else must not.
std::string mask_wall_clock(const std::string& text) {
  static const std::vector<std::pair<std::regex, std::string>> masks = {
      {std::regex(R"([0-9][0-9.e+-]* s wall)"), "<wall> s wall"},
      {std::regex(R"(wall [0-9][0-9.e+-]* s)"), "wall <wall> s"},
      {std::regex(R"([0-9][0-9.e+-]* (K )?activities/s)"), "<rate> activities/s"},
      {std::regex(R"(\"wall_s\": [0-9.e+-]+)"), "\"wall_s\": <wall>"},
  };
  std::string masked = text;
  for (const auto& [pattern, replacement] : masks)
    masked = std::regex_replace(masked, pattern, replacement);
  return masked;
}

std::string golden_text(const GoldenCase& c) {
  const CommandResult r = run_racksim(c.args);
  std::string text = "$ racksim";
  for (const auto& a : c.args) text += " " + a;
  text += "\n# exit " + std::to_string(r.exit_code) + "\n" + r.out;
  return mask_wall_clock(text);
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, OutputMatches) {
  ASSERT_EQ(chdir(RACKSIM_SOURCE_DIR), 0);
  const GoldenCase& c = GetParam();
  const std::string actual = golden_text(c);
  const fs::path golden = kGoldenDir / (c.name + ".txt");
  if (std::getenv("RACKSIM_UPDATE_GOLDENS") != nullptr) {
    std::ofstream(golden, std::ios::binary) << actual;
    GTEST_SKIP() << "wrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: run scripts/update-goldens";
  EXPECT_EQ(read_file(golden), actual)
      << "output of " << c.name << " changed; review and run scripts/update-goldens";
}

TEST(GoldenManifest, EveryShippedScenarioHasACase) {
  std::string listed;
  for (const auto& c : read_manifest())
    for (const auto& a : c.args) listed += " " + a + " ";
  const fs::path root = fs::path(RACKSIM_SOURCE_DIR);
  for (const auto& entry : fs::recursive_directory_iterator(root / "scenarios")) {
    if (entry.path().extension() != ".textproto") continue;
    const std::string rel = fs::relative(entry.path(), root).string();
    // Calibration includes are fragments, not scenarios; every scenario that includes one runs.
    if (rel.find("calibration.textproto") != std::string::npos) continue;
    EXPECT_NE(listed.find(" " + rel + " "), std::string::npos)
        << rel << " has no golden case in tests/golden/manifest.txt";
  }
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The documentation's sample outputs come from the goldens: a fenced block after a line
// `<!-- golden: NAME -->` must show lines of tests/golden/NAME.txt in their order ("..." marks
// lines left out), so a sample cannot drift from what racksim prints.
void expect_samples_match_goldens(const fs::path& doc) {
  const std::vector<std::string> lines = split_lines(read_file(doc));
  const std::regex marker(R"(<!-- golden: ([\w-]+) -->)");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_search(lines[i], m, marker)) continue;
    const fs::path golden = kGoldenDir / (m[1].str() + ".txt");
    ASSERT_TRUE(fs::exists(golden)) << doc << ":" << i + 1 << " names " << golden;
    const std::vector<std::string> expected = split_lines(read_file(golden));
    size_t at = 0;
    size_t line = i + 2;  // past the marker and the opening fence
    for (; line < lines.size() && lines[line].rfind("```", 0) != 0; ++line) {
      if (lines[line] == "...") continue;
      while (at < expected.size() && expected[at] != lines[line]) ++at;
      EXPECT_LT(at, expected.size())
          << doc << ":" << line + 1 << " is not in " << golden << " (in order): " << lines[line];
      if (at == expected.size()) return;
      ++at;
    }
  }
}

TEST(GoldenManifest, DocumentationSamplesAreGoldenOutput) {
  const fs::path root = fs::path(RACKSIM_SOURCE_DIR);
  expect_samples_match_goldens(root / "README.md");
  for (const auto& entry : fs::directory_iterator(root / "docs"))
    if (entry.path().extension() == ".md") expect_samples_match_goldens(entry.path());
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Golden, ::testing::ValuesIn(read_manifest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace racksim::testing
