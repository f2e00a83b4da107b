// Writes the data-parallel Chakra trace of docs/speed.md's replay target: N ranks (default
// 256), 4 iterations x 48 layers, per layer a backward kernel (recorded 1 ms) then a 32 MiB
// all-reduce over all ranks on the communication stream; the next iteration starts when the
// last all-reduce is done. A benchmark input, not a test:
//   dp_chakra_trace DIR [RANKS]   ->  DIR/dp.<rank>.et
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "traces/chakra_writer.h"

namespace {

using namespace racksim;

constexpr int kIterations = 4;
constexpr int kLayers = 48;
constexpr double kAllReduceBytes = 32.0 * (1 << 20);
constexpr double kKernelS = 1e-3;

EventGraph dp_step(uint32_t ranks) {
  EventGraph g(ranks);
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const StreamId dp = g.add_stream("comm.dp", StreamKind::kComm);
  std::vector<RankId> all(ranks);
  std::iota(all.begin(), all.end(), 0u);
  const CommId world = g.add_communicator(all);
  for (RankId r = 0; r < ranks; ++r) {
    std::vector<OpId> iteration_done;
    for (int it = 0; it < kIterations; ++it) {
      std::vector<OpId> reductions;
      OpId last_kernel = kNoOp;
      for (int layer = 0; layer < kLayers; ++layer) {
        std::vector<OpId> deps = iteration_done;
        if (last_kernel != kNoOp) deps.push_back(last_kernel);
        const OpContext c{r, compute, Phase::kBackward, it, static_cast<int16_t>(layer)};
        last_kernel = g.add_recorded_compute(c, "backward", kKernelS, 1e12, 1e9, deps);
        const OpContext d{r, dp, Phase::kBackward, it, static_cast<int16_t>(layer)};
        const OpId kernel[] = {last_kernel};
        reductions.push_back(g.add_collective(d, "grad all-reduce", CollectiveKind::kAllReduce,
                                              world, kAllReduceBytes, CommDim::kDp, kernel));
      }
      iteration_done = reductions;
    }
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dp_chakra_trace DIR [RANKS]\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const auto ranks = static_cast<uint32_t>(argc > 2 ? std::stoul(argv[2]) : 256);
  std::filesystem::create_directories(dir);
  const EventGraph g = dp_step(ranks);
  const chakra::ChakraWriter writer(g, {});
  const std::string prefix = (dir / "dp").string();
  for (RankId r = 0; r < ranks; ++r) {
    std::ofstream out(chakra::rank_file_name(prefix, r), std::ios::binary);
    writer.write_rank(r, out);
  }
  std::printf("%s.{0..%u}.et: %zu ops\n", prefix.c_str(), ranks - 1, g.size());
  return 0;
}
