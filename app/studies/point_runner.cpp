#include "app/studies/point_runner.h"

#include <algorithm>

#include <fmt/format.h>

#include "app/child_process.h"

namespace racksim::app {

namespace fs = std::filesystem;

std::vector<PointOutcome> run_points(const std::vector<PointJob>& jobs, int parallel) {
  const ScopedTempDir temp("racksim-points");
  const fs::path& dir = temp.path();
  std::vector<ChildJob> children;
  std::vector<fs::path> outputs;
  const std::string self = self_executable();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const fs::path job_dir = dir / fmt::format("p{}", i);
    ChildJob child;
    child.argv.push_back(self);
    for (std::string arg : jobs[i].args) {
      const size_t at = arg.find("{OUT}");
      if (at != std::string::npos) arg.replace(at, 5, job_dir.string());
      child.argv.push_back(arg);
    }
    child.log = dir / fmt::format("p{}.log", i);
    outputs.push_back(job_dir / jobs[i].output);
    children.push_back(std::move(child));
  }
  std::vector<PointOutcome> outcomes(jobs.size());
  run_parallel(children, std::max(1, parallel), [&](size_t i, int status) {
    if (status == 0 && fs::exists(outputs[i])) {
      outcomes[i].json = nlohmann::json::parse(read_text_file(outputs[i]));
      return;
    }
    std::string log = read_text_file(children[i].log);
    const size_t cut = log.rfind("error:");
    outcomes[i].error = fmt::format(
        "exit {}: {}", status, cut == std::string::npos ? log.substr(0, 300) : log.substr(cut));
    while (!outcomes[i].error.empty() && outcomes[i].error.back() == '\n')
      outcomes[i].error.pop_back();
  });
  return outcomes;
}

}  // namespace racksim::app
