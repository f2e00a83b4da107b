#include "tests/support/run_racksim.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace racksim::testing {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ChildCommand::ChildCommand(const std::vector<std::string>& args, std::vector<std::string> env)
    : env_(std::move(env)) {
  args_.push_back(RACKSIM_BINARY);
  args_.insert(args_.end(), args.begin(), args.end());
  for (auto& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  // An entry of the current environment is dropped when `env` sets the same NAME.
  auto overridden = [&](std::string_view entry) {
    const std::string_view name_eq = entry.substr(0, entry.find('=') + 1);
    for (const std::string& e : env_) {
      if (std::string_view(e).starts_with(name_eq)) return true;
    }
    return false;
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (!overridden(*e)) envp_.push_back(*e);
  }
  for (auto& e : env_) envp_.push_back(e.data());
  envp_.push_back(nullptr);
}

void ChildCommand::exec() const {
  execve(argv_[0], argv_.data(), envp_.data());
  _exit(127);
}

namespace {

// Runs RACKSIM_BINARY with `args`; `in_child` runs in the child just before exec.
CommandResult run_racksim_child(const std::vector<std::string>& args,
                                const std::function<void()>& in_child) {
  TempDir io;
  const fs::path out_path = io.path() / "stdout";
  const fs::path err_path = io.path() / "stderr";
  const ChildCommand command(args);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    if (in_child) in_child();
    command.exec();
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

}  // namespace

CommandResult run_racksim(const std::vector<std::string>& args) {
  return run_racksim_child(args, {});
}

CommandResult run_racksim_with_file_size_limit(const std::vector<std::string>& args,
                                               long limit_bytes) {
  return run_racksim_child(args, [limit_bytes] {
    // Past the limit a write fails with EFBIG instead of raising SIGXFSZ: a full disk, as the
    // process sees it.
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{static_cast<rlim_t>(limit_bytes), static_cast<rlim_t>(limit_bytes)};
    setrlimit(RLIMIT_FSIZE, &limit);
  });
}

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    path_ = fs::temp_directory_path() / ("racksim-test-" + std::to_string(rd()));
    if (fs::create_directory(path_)) return;
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  const fs::path p = path_ / name;
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

ReportRun run_scenario_report(const TempDir& dir, const std::string& scenario_text,
                              const std::vector<std::string>& sets) {
  return run_file_report(dir, dir.write("s.textproto", scenario_text), sets);
}

ReportRun run_file_report(const TempDir& dir, const std::string& path,
                          const std::vector<std::string>& sets) {
  static int runs = 0;  // each run its own output folder (the CLI refuses foreign folders)
  const std::string out = (dir.path() / ("out" + std::to_string(runs++))).string();
  std::vector<std::string> args{"run", path, "--out", out, "--report-only"};
  for (const auto& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  const CommandResult r = run_racksim(args);
  ReportRun result{r.exit_code, r.err, {}};
  if (r.exit_code == 0) result.report = nlohmann::json::parse(read_file(out + "/report.json"));
  return result;
}

double simulated_step_s(const std::string& path, const std::vector<std::string>& sets) {
  const TempDir dir;
  const ReportRun run = run_file_report(dir, path, sets);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  if (run.exit_code != 0) return std::numeric_limits<double>::quiet_NaN();
  return run.report.at("step_time_s").get<double>();
}

std::string read_gzip_file(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return "";
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(file);
  return text;
}

}  // namespace racksim::testing
