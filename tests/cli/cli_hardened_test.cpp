// Bad input to every command exits 2 naming what is wrong, before any work and without
// writing anything; output directories are all or nothing; Ctrl-C exits 130 and leaves nothing
// behind (docs/guarantees.md).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"
#include "tests/support/test_scenarios.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::read_gzip_file;
using testing::run_racksim;
using testing::TempDir;
namespace fs = std::filesystem;

const std::string kScenario = std::string(testing::kSmallDense) + "sim { fidelity: ANALYTIC }\n";

void expect_input_error(const testing::CommandResult& r, const std::string& named) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

TEST(Hardened, NonFiniteHardwareFigureExitsTwoWritingNothing) {
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  const fs::path out = dir.path() / "out";
  expect_input_error(run_racksim({"run", path, "--out", out.string(), "--set",
                                  "hardware.gpu.bf16_flops_per_s=inf"}),
                     "hardware.gpu.bf16_flops_per_s");
  EXPECT_FALSE(fs::exists(out));
}

TEST(Hardened, UndefinedEnumInTheFileNamesItsLine) {
  TempDir dir;
  std::string text = kScenario;
  text.replace(text.find("seq_length: 2048"), 16, "seq_length: 2048 recompute: 99");
  const std::string path = dir.write("s.textproto", text);
  expect_input_error(run_racksim({"run", path}), path + ":8");
}

TEST(Hardened, CollectiveWithTooManyRanksExitsTwo) {
  expect_input_error(run_racksim({"collective", "--hardware", "dgx-h100", "--nodes", "20000"}),
                     "--nodes");
  expect_input_error(run_racksim({"collective", "--hardware", "dgx-h100", "--nodes", "0"}),
                     "--nodes");
}

TEST(Hardened, DeeplyNestedCompareInputExitsTwo) {
  TempDir dir;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string a = dir.write("a.json", deep);
  expect_input_error(run_racksim({"compare", a, a}), "nested");
}

TEST(Hardened, NonRegularInputIsRefused) {
  expect_input_error(run_racksim({"run", "/dev/zero"}), "not a regular file");
  expect_input_error(run_racksim({"compare", "/dev/zero", "/dev/zero"}), "not a regular file");
}

TEST(Hardened, SweepOptionsAreCheckedBeforeAnyPoint) {
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  expect_input_error(run_racksim({"sweep", path, "--set", "layout.tp=1,2", "--jobs", "0"}),
                     "--jobs");
  // A typo in the swept field: no point is simulated, nothing is written.
  const fs::path out = dir.path() / "out";
  expect_input_error(run_racksim({"sweep", path, "--set", "layout.tpp=1,2", "--out", out.string()}),
                     "tpp");
  EXPECT_FALSE(fs::exists(out));
  expect_input_error(run_racksim({"sweep", path, "--set", "layout.tp=1,two"}), "layout.tp");
  // --emit-jobs into a directory that does not exist.
  expect_input_error(run_racksim({"sweep", path, "--set", "layout.tp=1,2", "--emit-jobs",
                                  (dir.path() / "missing" / "jobs.txt").string()}),
                     "--emit-jobs");
}

TEST(Hardened, StudiesCheckEveryPointInProcess) {
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  expect_input_error(run_racksim({"infer", path, "--batch", "1,8"}), "inference");
  const std::string moe = dir.write(
      "moe.textproto", std::string(kScenario) + "inference { batch: 8 context_tokens: 1024 }\n");
  // 7 GPUs per scale-up domain is not a whole number of 8-GPU nodes.
  const auto r = run_racksim({"racks", moe, "--scale-up", "8,7", "--no-training"});
  expect_input_error(r, "hardware.scale_up.domain_size");
  EXPECT_NE(r.err.find("--set hardware.scale_up.domain_size=7"), std::string::npos) << r.err;
}

TEST(Hardened, UnwritableOutIsFoundBeforeSimulating) {
  TempDir dir;
  const std::string file = dir.write("a-file", "x");
  const auto r = run_racksim({"run", "--out", (fs::path(file) / "out").string()});
  expect_input_error(r, "--out");
  EXPECT_EQ(r.out.find("step time"), std::string::npos) << "refused before simulating";
}

TEST(Hardened, AFailedRunLeavesThePreviousResultsUntouched) {
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(run_racksim({"run", path, "--out", out.string(), "--report-only"}).exit_code, 0);
  const std::string before = read_file(out / "report.json");
  EXPECT_EQ(run_racksim({"run", path, "--out", out.string(), "--set", "layout.tp=3"}).exit_code, 2);
  EXPECT_EQ(read_file(out / "report.json"), before);
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "report.json" || name == ".racksim-output") << name;
  }
}

TEST(Hardened, AStepTooLargeForTheMachineIsRefusedBeforeBuildingIt) {
  // 2^20 layers x 32 micro-batches on 8 ranks: billions of operations, hundreds of GB.
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  const auto r = run_racksim({"run", path, "--set", "model.num_layers=1048576", "--set",
                              "model.hidden_size=64", "--set", "model.ffn_hidden_size=128", "--set",
                              "training.global_batch_size=64"});
  expect_input_error(r, "sim.fold_replicas");
  EXPECT_NE(r.err.find("GB"), std::string::npos) << r.err;
}

// Complete ("X") events per (pid, tid), in file order.
std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices_by_thread(
    const nlohmann::json& timeline) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
  for (const auto& e : timeline.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    slices[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back(
        {e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>()});
  }
  return slices;
}

TEST(Hardened, LayerTimelineIsGzippedSmallerThanFullAndItsSlicesDoNotOverlap) {
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  std::map<std::string, nlohmann::json> timelines;
  for (const char* detail : {"layers", "full"}) {
    const fs::path out = dir.path() / detail;
    const auto r = run_racksim({"run", path, "--out", out.string(), "--timeline", detail});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    timelines[detail] = nlohmann::json::parse(read_gzip_file(out / "timeline.json.gz"));
  }
  const auto layers = slices_by_thread(timelines["layers"]);
  const auto full = slices_by_thread(timelines["full"]);
  EXPECT_EQ(layers.size(), full.size()) << "every rank and stream is shown";
  size_t layer_slices = 0, full_slices = 0;
  for (const auto& [thread, slices] : layers) {
    layer_slices += slices.size();
    for (size_t i = 1; i < slices.size(); ++i) {
      EXPECT_GE(slices[i].first, slices[i - 1].second - 1e-3) << "slices of a thread nest";
    }
  }
  for (const auto& [thread, slices] : full) full_slices += slices.size();
  EXPECT_LT(layer_slices * 3, full_slices);
  EXPECT_GT(layer_slices, 0u);
}

// True once `pid` blocks SIGINT: racksim's interrupt watcher is installed.
bool blocks_sigint(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
    }
  }
  return false;
}

TEST(Hardened, SigintExits130AndLeavesNoOutput) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  const fs::path log = dir.path() / "log";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    freopen(log.c_str(), "w", stderr);
    execl(RACKSIM_BINARY, RACKSIM_BINARY, "run", "--out", out.c_str(), nullptr);
    _exit(127);
  }
  while (!blocks_sigint(pid)) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "racksim ended before it could be interrupted";
    usleep(1000);
  }
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(read_file(log).find("interrupted (SIGINT) while"), std::string::npos) << read_file(log);
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace racksim
