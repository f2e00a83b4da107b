// How many SimGrid actors one process can hold. SimGrid gives every actor (one per rank and
// stream) a stack of its own, mapped with a guard page: two memory mappings each. Past the
// kernel's limit on mappings per process (vm.max_map_count, 65530 by default) SimGrid aborts
// ("Failed to protect stack"); racksim refuses such a simulation before starting it instead.
#pragma once

#include <cstddef>
#include <string>

namespace racksim::sim {

// The most actors this process can create: half the mappings vm.max_map_count leaves beside
// those already in use, less a margin for the allocator and libraries.
size_t max_simulated_actors();

// Throws InputError (field "sim") when `actors` exceed max_simulated_actors(), saying what
// `what` needs and how to reduce it.
void check_actor_count(size_t actors, const std::string& what);

}  // namespace racksim::sim
