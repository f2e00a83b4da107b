// Bad input to every command exits 2 naming what is wrong, before any work and without
// writing anything; output directories are all or nothing; Ctrl-C exits 130 and leaves nothing
// behind (docs/guarantees.md).
#include <gtest/gtest.h>

#include <fcntl.h>
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
using testing::run_racksim_with_file_size_limit;
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

// A measured collectives table is read with the scenario, relative to its folder: a bad row is
// its file, line and column, and nothing is written.
TEST(Hardened, BadMeasuredTableRowNamesItsLineBeforeAnyWork) {
  TempDir dir;
  dir.write("nccl.csv", "# all_reduce_perf\ngpus,size_bytes,time_us\n2,1048576,44\n2,2097152,-1\n");
  std::string text = kScenario;
  text.replace(text.find("hardware {"), 10,
               "hardware { collectives { measured_table: \"nccl.csv\" }");
  const std::string path = dir.write("s.textproto", text);
  const fs::path out = dir.path() / "out";
  expect_input_error(run_racksim({"run", path, "--out", out.string()}),
                     (dir.path() / "nccl.csv").string() + ":4:3: field 'time_us'");
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

TEST(Hardened, EveryStudyRefusesZeroJobs) {
  TempDir dir;
  const std::string path = dir.write(
      "s.textproto", std::string(kScenario) + "inference { batch: 8 context_tokens: 1024 }\n");
  const std::string calibration = std::string(RACKSIM_SOURCE_DIR) + "/scenarios/calibration/";
  const std::vector<std::vector<std::string>> commands = {
      {"sweep", path, "--set", "layout.tp=1,2"},
      {"infer", path, "--batch", "1,8"},
      {"racks", path, "--scale-up", "8", "--no-training"},
      {"plan", path, "--tokens", "1e9", "--clusters", "dgx-h100:1"},
      {"calibrate", "--base", calibration + "a100-vtrain-kernel-base.textproto", "--measured",
       calibration + "a100-multi-node-sample.csv", "--params", "hardware.compute.gemm"}};
  for (std::vector<std::string> args : commands) {
    SCOPED_TRACE(args[0]);
    args.insert(args.end(), {"--jobs", "0"});
    expect_input_error(run_racksim(args), "--jobs");
  }
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

// Every file in `dir` (names starting with a dot included) and its contents.
std::map<std::string, std::string> files_in(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = read_file(entry.path());
  }
  return files;
}

TEST(Hardened, AFullDiskLeavesThePreviousResultsUntouched) {
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(run_racksim({"run", path, "--out", out.string()}).exit_code, 0);
  const auto before = files_in(out);
  ASSERT_TRUE(before.count("timeline.json.gz") && before.count("report.json"));
  // Every file racksim writes may hold 16 KiB: report.json (9 KB) and the timeline (6 KB) are
  // staged, pipeline.svg (64 KB) fails.
  const auto r = run_racksim_with_file_size_limit(
      {"run", path, "--out", out.string(), "--set", "training.seq_length=4096"}, 16384);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error while writing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pipeline.svg"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_EQ(files_in(out), before) << "no staging directory, no partial file, nothing replaced";
  // A directory the failed run created is removed.
  const fs::path fresh = dir.path() / "fresh";
  EXPECT_EQ(
      run_racksim_with_file_size_limit({"run", path, "--out", fresh.string()}, 16384).exit_code, 1);
  EXPECT_FALSE(fs::exists(fresh));
}

TEST(Hardened, ReadOnlyOutIsFoundBeforeSimulating) {
  TempDir dir;
  const fs::path locked = dir.path() / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  // root writes into a read-only directory regardless; a filesystem that takes no files (procfs)
  // is read-only for everyone.
  const fs::path out = geteuid() == 0 ? fs::path("/proc/racksim-out") : locked / "out";
  const auto r = run_racksim({"run", "--out", out.string()});
  expect_input_error(r, "--out");
  EXPECT_EQ(r.out.find("step time"), std::string::npos) << "refused before simulating";
  EXPECT_FALSE(fs::exists(out));
  fs::permissions(locked, fs::perms::owner_all);
}

TEST(Hardened, CalibrateOutIsCheckedBeforeAnyWork) {
  TempDir dir;
  const std::string file = dir.write("notes.txt", "mine\n");
  // Bad --out is found before the measured file is even read (it does not exist).
  const std::vector<std::string> start = {
      "calibrate",   "--base",   "missing.textproto",     "--measured",
      "missing.csv", "--params", "hardware.compute.gemm", "--out"};
  for (const std::string& out : {file, (fs::path(file) / "cal.textproto").string(),
                                 dir.path().string(), (dir.path() / "no" / "cal").string()}) {
    std::vector<std::string> args = start;
    args.push_back(out);
    expect_input_error(run_racksim(args), "--out");
  }
  EXPECT_EQ(read_file(file), "mine\n");
}

TEST(Hardened, CalibrateReplacesItsOwnFileWhole) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", R"(name: "one GPU"
model { preset: "llama3-8b" num_layers: 2 vocab_size: 1024 }
hardware { preset: "dgx-h100" nodes: 1 gpus_per_node: 1 host { sockets: 1 } }
layout { tp: 1 pp: 1 }
training { global_batch_size: 1 micro_batch_size: 1 seq_length: 2048 recompute: NONE }
)");
  const std::string csv =
      dir.write("m.csv", "training.seq_length,measured_step_time_s\n1024,0.05\n4096,0.2\n");
  const std::string cal = (dir.path() / "cal.textproto").string();
  for (const char* evals : {"1", "2"}) {
    const auto r = run_racksim({"calibrate", "--base", base, "--measured", csv, "--params",
                                "hardware.compute.gemm", "--holdout", "none", "--max-evals", evals,
                                "--jobs", "1", "--out", cal});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(read_file(cal).rfind("# racksim calibration", 0), 0u);
  const auto files = files_in(dir.path());
  EXPECT_EQ(files.size(), 3u) << "base, measured and the calibration; no temporary left";
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

TEST(Hardened, MoreRanksThanSimGridCanHoldAreRefusedBeforeBuildingTheStep) {
  // 100,000 nodes: 800,000 ranks, each a SimGrid actor with a stack of its own (two memory
  // mappings; vm.max_map_count allows 65,530 by default). SimGrid would abort; building the
  // step alone would take hours.
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  const auto r = run_racksim({"run", path, "--set", "hardware.nodes=100000", "--set",
                              "layout.dp=200000", "--set", "training.global_batch_size=200000"});
  expect_input_error(r, "sim.fold_replicas");
  EXPECT_NE(r.err.find("vm.max_map_count"), std::string::npos) << r.err;
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

// Starts racksim with `args` and stderr into `log`; returns once its interrupt watcher is
// installed (so that SIGINT reaches the watcher rather than ending the process unhandled).
pid_t start_racksim(const std::vector<std::string>& args, const fs::path& log,
                    const fs::path& tmpdir = {}) {
  std::vector<std::string> env;
  if (!tmpdir.empty()) env.push_back("TMPDIR=" + tmpdir.string());
  const testing::ChildCommand command(args, env);
  const pid_t pid = fork();
  if (pid == 0) {
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int out = open("/dev/null", O_WRONLY);
    dup2(err, 2);
    dup2(out, 1);
    command.exec();
  }
  while (pid > 0 && !blocks_sigint(pid)) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) != 0) return -1;  // ended before it could be interrupted
    usleep(1000);
  }
  return pid;
}

// Sends SIGINT to `pid` and returns its exit code (-1 unless it exited).
int interrupt_and_wait(pid_t pid) {
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Hardened, SigintExits130AndLeavesNoOutput) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  const fs::path log = dir.path() / "log";
  const pid_t pid = start_racksim({"run", "--out", out.string()}, log);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(interrupt_and_wait(pid), 130);
  EXPECT_NE(read_file(log).find("interrupted (SIGINT) while"), std::string::npos) << read_file(log);
  EXPECT_FALSE(fs::exists(out));
}

// The names in `dir` that start with "racksim-" (a study's temporary directories).
std::vector<std::string> racksim_temporaries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("racksim-", 0) != 0) continue;
    names.push_back(name);
    for (const auto& inside : fs::recursive_directory_iterator(entry.path(), ec)) {
      names.push_back(fs::relative(inside.path(), dir).string());  // says what was left behind
    }
  }
  return names;
}

TEST(Hardened, SigintDuringAStudyRemovesItsTemporaryDirectory) {
  TempDir dir;
  const fs::path tmp = dir.path() / "tmp";
  fs::create_directory(tmp);
  const fs::path log = dir.path() / "log";
  const pid_t pid = start_racksim(
      {"sweep", "--set", "layout.pp=1,2,4", "--set", "sim.fidelity=FULL", "--jobs", "1"}, log, tmp);
  ASSERT_GT(pid, 0);
  // Interrupt once the points' directory exists (the study is running its children).
  for (int i = 0; i < 60000 && racksim_temporaries(tmp).empty(); ++i) usleep(1000);
  ASSERT_FALSE(racksim_temporaries(tmp).empty()) << read_file(log);
  EXPECT_EQ(interrupt_and_wait(pid), 130) << read_file(log);
  EXPECT_NE(read_file(log).find("interrupted (SIGINT)"), std::string::npos) << read_file(log);
  EXPECT_EQ(racksim_temporaries(tmp), std::vector<std::string>{}) << read_file(log);
}

// The file being written in `out`'s staging directory, "" when there is none yet.
std::string staged_file(const fs::path& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    if (entry.path().filename().string().rfind(".racksim-staging", 0) != 0) continue;
    for (const auto& file : fs::directory_iterator(entry.path(), ec)) {
      if (file.path().filename() == "timeline.json.gz") return "timeline.json.gz";
    }
  }
  return "";
}

TEST(Hardened, SigintWhileWritingLeavesThePreviousResultsUntouched) {
  TempDir dir;
  // 32 layers x 16 micro-batches: the full timeline takes a while to write.
  const std::string path = dir.write("s.textproto", kScenario);
  const std::vector<std::string> big = {"--set", "model.num_layers=32", "--set",
                                        "training.global_batch_size=64"};
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(run_racksim({"run", path, "--out", out.string(), "--timeline", "none"}).exit_code, 0);
  const auto before = files_in(out);
  std::vector<std::string> args = {"run", path, "--out", out.string(), "--timeline", "full"};
  args.insert(args.end(), big.begin(), big.end());
  const fs::path log = dir.path() / "log";
  const pid_t pid = start_racksim(args, log);
  ASSERT_GT(pid, 0);
  int status = 0;
  while (staged_file(out).empty()) {
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "racksim ended before writing the timeline";
    usleep(200);
  }
  EXPECT_EQ(interrupt_and_wait(pid), 130);
  EXPECT_NE(read_file(log).find("interrupted (SIGINT) while writing"), std::string::npos)
      << read_file(log);
  EXPECT_EQ(files_in(out), before) << "no staging directory, no partial file, nothing replaced";
}

}  // namespace
}  // namespace racksim
