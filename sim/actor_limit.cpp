#include "sim/actor_limit.h"

#include <fstream>
#include <string>

#include <fmt/format.h>

#include "common/error.h"

namespace racksim::sim {

namespace {

constexpr size_t kMappingsPerActor = 2;   // the stack and its guard page
constexpr size_t kMarginMappings = 2048;  // malloc arenas, libraries, SimGrid's own

size_t count_lines(const char* path) {
  std::ifstream in(path);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

size_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  size_t count = 0;
  return in >> count ? count : 65530;  // Linux's default where /proc does not say
}

}  // namespace

size_t max_simulated_actors() {
  const size_t limit = max_map_count();
  const size_t used = count_lines("/proc/self/maps") + kMarginMappings;
  return limit > used ? (limit - used) / kMappingsPerActor : 0;
}

void check_actor_count(size_t actors, const std::string& what) {
  const size_t limit = max_simulated_actors();
  if (actors <= limit) return;
  throw InputError(
      {"scenario", 0, 0}, "sim",
      fmt::format("{} needs {} SimGrid actors (one per rank and stream), more than the {} this "
                  "process can create (each has its own stack: 2 memory mappings, and "
                  "vm.max_map_count is {}); simulate fewer ranks (sim.fold_replicas: true, fewer "
                  "nodes) or raise vm.max_map_count (sysctl -w vm.max_map_count=N)",
                  what, actors, limit, max_map_count()));
}

}  // namespace racksim::sim
