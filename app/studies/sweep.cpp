#include "app/studies/sweep.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_process.h"
#include "common/error.h"
#include "common/units.h"
#include "config/default_scenario.h"
#include "config/scenario_loader.h"
#include "workloads/training/memory_ledger.h"

namespace racksim::app {

namespace fs = std::filesystem;

namespace {

// Megatron-Core's layout strings use commas themselves (cosmetically), so a sweep over pipeline
// layouts separates them with ';'; every other field's values with ','.
char value_separator(const std::string& field) {
  return field == "layout.pipeline_layout" ? ';' : ',';
}

std::vector<std::string> split_values(const std::string& list, char separator) {
  std::vector<std::string> values;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(separator, start);
    values.push_back(list.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return values;
    start = comma + 1;
  }
}

config::LoadedScenario load(const SweepSpec& spec, const std::vector<std::string>& overrides) {
  return spec.scenario.empty()
             ? config::load_scenario_text(std::string(config::default_scenario_text()),
                                          std::string(config::kDefaultScenarioPath), overrides)
             : config::load_scenario(spec.scenario, overrides);
}

// The largest account of a ledger that does not fit: what to shrink first.
std::string memory_culprit(const MemoryLedger& m) {
  MemoryItem largest = m.activations;
  for (const auto& item : m.static_items) {
    if (item.bytes > largest.bytes) largest = item;
  }
  if (m.largest_transient.bytes > largest.bytes) largest = m.largest_transient;
  return fmt::format("rank {} needs {:.1f} GB of {:.1f} GB; largest: {} {:.1f} GB ({})", m.rank,
                     m.peak_bytes() / units::kGB, m.capacity_bytes / units::kGB, largest.name,
                     largest.bytes / units::kGB, largest.detail);
}

void check_point(const SweepSpec& spec, const std::vector<std::string>& overrides,
                 analysis::SweepPoint* point) {
  try {
    const config::LoadedScenario loaded = load(spec, overrides);
    const MemoryLedger memory = worst_memory_ledger(resolve_training_plan(loaded.scenario));
    point->peak_memory_bytes = memory.peak_bytes();
    point->capacity_bytes = memory.capacity_bytes;
    if (!memory.fits()) {
      point->status = analysis::PointStatus::kDoesNotFit;
      point->reason = memory_culprit(memory);
    }
  } catch (const InputError& e) {
    point->status = analysis::PointStatus::kInvalid;
    point->reason = e.what();
  }
}

std::vector<std::string> run_arguments(const SweepSpec& spec,
                                       const std::vector<std::string>& overrides,
                                       const fs::path& out) {
  std::vector<std::string> args{"run"};
  if (!spec.scenario.empty()) args.push_back(fs::absolute(spec.scenario).string());
  for (const auto& o : overrides) {
    args.push_back("--set");
    args.push_back(o);
  }
  args.push_back("--out");
  args.push_back(out.string());
  if (!spec.keep_timelines) args.push_back("--report-only");
  return args;
}

}  // namespace

SweepSpec parse_sweep(const std::string& scenario, const std::vector<std::string>& sets) {
  SweepSpec spec;
  spec.scenario = scenario;
  for (const std::string& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError({"--set", 0, 0}, "", fmt::format("'{}' is not path=value[,value...]", set));
    }
    const std::string field = set.substr(0, eq);
    std::vector<std::string> values = split_values(set.substr(eq + 1), value_separator(field));
    if (std::any_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); })) {
      throw InputError({"--set", 0, 0}, field, fmt::format("'{}' has an empty value", set));
    }
    for (const std::string& value : values) {  // a typo in a path or a value fails here
      config::Scenario scratch;
      config::SourceMap unused;
      config::apply_override(field + "=" + value, &scratch, &unused);
    }
    if (values.size() == 1) {
      spec.fixed.push_back(set);
    } else {
      spec.axes.push_back({field, std::move(values)});
    }
  }
  return spec;
}

std::vector<std::string> axis_fields(const SweepSpec& spec) {
  std::vector<std::string> fields;
  for (const auto& a : spec.axes) fields.push_back(a.field);
  return fields;
}

SweepRun plan_sweep(const SweepSpec& spec) {
  size_t total = 1;
  for (const auto& a : spec.axes) total *= a.values.size();
  SweepRun run;
  const int width = std::max<int>(3, static_cast<int>(std::to_string(total).size()));
  for (size_t i = 0; i < total; ++i) {
    analysis::SweepPoint point;
    point.id = fmt::format("p{:0{}}", i + 1, width);
    std::vector<std::string> overrides = spec.fixed;
    size_t rest = i;
    point.values.resize(spec.axes.size());
    for (size_t k = spec.axes.size(); k-- > 0;) {  // the last axis varies fastest
      const auto& axis = spec.axes[k];
      point.values[k] = axis.values[rest % axis.values.size()];
      rest /= axis.values.size();
    }
    for (size_t k = 0; k < spec.axes.size(); ++k) {
      overrides.push_back(spec.axes[k].field + "=" + point.values[k]);
    }
    check_point(spec, overrides, &point);
    run.points.push_back(std::move(point));
    run.overrides.push_back(std::move(overrides));
  }
  return run;
}

void simulate_sweep(const SweepSpec& spec, SweepRun* run, const fs::path& out_dir, int jobs,
                    const std::function<void(size_t, size_t)>& progress) {
  std::vector<ChildJob> children;
  std::vector<size_t> point_of_child;
  const std::string self = self_executable();
  for (size_t i = 0; i < run->points.size(); ++i) {
    if (run->points[i].status != analysis::PointStatus::kPending) continue;
    const fs::path dir = out_dir / "points" / run->points[i].id;
    // Under the interrupt lock: an interrupt removes `out_dir` when it is a temporary, and a
    // directory created during that removal would outlive it.
    without_interrupts([&] { fs::create_directories(dir.parent_path()); });
    ChildJob job;
    job.argv = run_arguments(spec, run->overrides[i], dir);
    job.argv.insert(job.argv.begin(), self);
    job.log = out_dir / "points" / (run->points[i].id + ".log");
    children.push_back(std::move(job));
    point_of_child.push_back(i);
  }
  size_t done = 0;
  progress(0, children.size());
  run_parallel(children, jobs, [&](size_t child, int status) {
    analysis::SweepPoint& point = run->points[point_of_child[child]];
    const fs::path report = out_dir / "points" / point.id / "report.json";
    if (status == 0 && fs::exists(report)) {
      analysis::read_report_figures(nlohmann::json::parse(read_text_file(report)), &point);
      point.status = analysis::PointStatus::kSimulated;
    } else {
      point.status = analysis::PointStatus::kFailed;
      std::string log = read_text_file(children[child].log);
      const size_t cut = log.rfind("error:");
      point.reason = fmt::format("exit {}: {}", status,
                                 cut == std::string::npos ? log.substr(0, 300) : log.substr(cut));
      while (!point.reason.empty() && point.reason.back() == '\n') point.reason.pop_back();
    }
    progress(++done, children.size());
  });
}

void collect_sweep(SweepRun* run, const fs::path& out_dir) {
  for (analysis::SweepPoint& point : run->points) {
    if (point.status != analysis::PointStatus::kPending) continue;
    const fs::path report = out_dir / "points" / point.id / "report.json";
    if (!fs::exists(report)) {
      point.status = analysis::PointStatus::kFailed;
      point.reason = fmt::format("no report at {} (did its job run?)", report.string());
      continue;
    }
    analysis::read_report_figures(nlohmann::json::parse(read_text_file(report)), &point);
    point.status = analysis::PointStatus::kSimulated;
  }
}

std::string sweep_job_lines(const SweepSpec& spec, const SweepRun& run, const fs::path& out_dir) {
  std::string out;
  const std::string self = self_executable();
  for (size_t i = 0; i < run.points.size(); ++i) {
    if (run.points[i].status != analysis::PointStatus::kPending) continue;
    std::string line = shell_quote(self);
    for (const auto& a : run_arguments(spec, run.overrides[i],
                                       fs::absolute(out_dir) / "points" / run.points[i].id)) {
      line += " " + shell_quote(a);
    }
    out += line + "\n";
  }
  return out;
}

std::optional<std::string> all_points_invalid(const SweepRun& run) {
  if (run.points.empty()) return std::nullopt;
  for (const auto& point : run.points) {
    if (point.status != analysis::PointStatus::kInvalid) return std::nullopt;
  }
  return run.points.front().reason;
}

}  // namespace racksim::app
