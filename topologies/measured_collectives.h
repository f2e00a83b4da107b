// Collective times measured on real hardware: nccl-tests' *_perf results for the GPUs of one
// scale-up domain (an NVLink node), which the engine charges instead of its flow model.
//
// The file is CSV ('#' lines are comments), one row per measured size:
//   collective      optional; all_reduce (the default), all_gather, reduce_scatter, all_to_all,
//                   broadcast or reduce (nccl-tests' binaries without "_perf"; "alltoall" too)
//   gpus            the member count, 2 or more
//   size_bytes      nccl-tests' size column (the all-reduce buffer, the all-gather output, the
//                   reduce-scatter input, the all-to-all send buffer)
//   time_us         the time of one call; out_of_place_time_us (nccl-tests' first time
//                   column) or in_place_time_us is read when time_us is absent, in that order
// Any other column is ignored, so nccl-tests' table pasted with a header line is a valid file.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace racksim::topo {

struct CollectiveSample {
  double bytes = 0;
  double time_s = 0;
};

// The time of a `bytes` collective from one (collective, gpus) curve, sorted by bytes: linear
// between the measured sizes; the smallest size's time below it (small calls are bound by
// latency, which nccl-tests shows nearly flat); above the largest, the largest size's bus
// bandwidth (time in proportion to the bytes).
double measured_time_s(const std::vector<CollectiveSample>& curve, double bytes);

struct MeasuredCollectives {
  std::map<std::pair<std::string, int>, std::vector<CollectiveSample>> curves;

  bool empty() const { return curves.empty(); }
  // The curve of `collective` (to_string of graph's CollectiveKind) on `gpus` members, or null.
  const std::vector<CollectiveSample>* find(std::string_view collective, int gpus) const;
};

// Reads and checks the file. Throws InputError naming the file, the line and the column (or,
// for a missing file, `where` and `field`, the scenario line that named it).
MeasuredCollectives read_measured_collectives(const std::string& path, const SourceLocation& where,
                                              const std::string& field);

}  // namespace racksim::topo
