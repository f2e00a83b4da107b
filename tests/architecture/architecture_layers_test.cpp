// The folders are the model (docs/architecture.md): a file may include only what its folder's
// library depends on, so the dependencies point one way. This test reads every source file's
// #include "folder/..." lines and fails on an include that goes against the arrows.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

// Each folder and the folders it may include directly; what those may include is allowed too.
const std::map<std::string, std::vector<std::string>>& layer_edges() {
  static const std::map<std::string, std::vector<std::string>> edges = {
      {"common", {}},
      {"proto", {}},
      {"graph", {"common"}},
      {"traces", {"graph", "proto"}},
      {"workloads/model", {"graph", "proto"}},
      {"workloads/moe", {"common", "proto"}},
      {"workloads/collectives", {"graph", "proto"}},
      {"workloads/training", {"workloads/model", "workloads/moe"}},
      {"workloads/inference", {"workloads/training"}},
      {"topologies", {"common", "proto"}},
      {"config", {"workloads/inference", "workloads/collectives", "traces", "topologies"}},
      {"sim", {"graph", "topologies"}},
      {"analysis", {"sim", "traces", "workloads/inference", "workloads/collectives"}},
      {"app", {"config", "analysis"}},
      {"app/studies", {"app"}},
      {"cli", {"app/studies"}},
  };
  return edges;
}

std::set<std::string> reachable(const std::string& folder) {
  std::set<std::string> seen{folder};
  std::vector<std::string> todo{folder};
  while (!todo.empty()) {
    const std::string next = todo.back();
    todo.pop_back();
    for (const std::string& dep : layer_edges().at(next)) {
      if (seen.insert(dep).second) todo.push_back(dep);
    }
  }
  return seen;
}

// The deepest known folder that holds `relative_path` ("workloads/model/x.h" ->
// "workloads/model"), or "" when it is in none.
std::string folder_of(const std::string& relative_path) {
  std::string best;
  for (const auto& [folder, deps] : layer_edges()) {
    if (relative_path.rfind(folder + "/", 0) == 0 && folder.size() > best.size()) best = folder;
  }
  return best;
}

std::vector<std::string> violations() {
  const fs::path root = RACKSIM_SOURCE_DIR;
  const std::regex include_line(R"re(^\s*#include\s+"([a-z_]+(/[a-z_]+)*/[a-z_.]+)")re");
  std::vector<std::string> found;
  for (const auto& [folder, deps] : layer_edges()) {
    if (!fs::is_directory(root / folder)) continue;
    const std::set<std::string> allowed = reachable(folder);
    for (const auto& entry : fs::directory_iterator(root / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cpp") continue;
      std::ifstream in(entry.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        const std::string target = folder_of(m[1].str());
        if (target.empty() || allowed.count(target)) continue;
        found.push_back(folder + "/" + entry.path().filename().string() + ":" +
                        std::to_string(number) + " includes " + m[1].str() + " (" + folder +
                        " may not depend on " + target + ")");
      }
    }
  }
  return found;
}

TEST(ArchitectureLayers, IncludesFollowTheDependencyArrows) {
  const std::vector<std::string> bad = violations();
  std::string listing;
  for (const std::string& b : bad) listing += "\n  " + b;
  EXPECT_TRUE(bad.empty()) << bad.size() << " includes against the arrows:" << listing;
}

TEST(ArchitectureLayers, EveryFolderIsKnownAndExists) {
  for (const auto& [folder, deps] : layer_edges()) {
    EXPECT_TRUE(fs::is_directory(fs::path(RACKSIM_SOURCE_DIR) / folder)) << folder;
  }
}

TEST(ArchitectureLayers, FolderOfPicksTheDeepestFolder) {
  EXPECT_EQ(folder_of("workloads/model/transformer.h"), "workloads/model");
  EXPECT_EQ(folder_of("app/studies/sweep.h"), "app/studies");
  EXPECT_EQ(folder_of("app/output_dir.h"), "app");
  EXPECT_EQ(folder_of("fmt/format.h"), "");
}

TEST(ArchitectureLayers, ReachabilityIsOneWay) {
  EXPECT_TRUE(reachable("cli").count("common"));
  EXPECT_FALSE(reachable("sim").count("workloads/model"));
  EXPECT_FALSE(reachable("config").count("sim"));
  EXPECT_FALSE(reachable("graph").count("traces"));
}

}  // namespace
