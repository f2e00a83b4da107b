// How fast a large Chakra trace loads: writes a synthetic trace of N nodes (8 ranks, a chain
// of kernels per rank with a collective every 16 nodes and a ring send/recv every 64), then
// reads it back in a child process and reports the wall time and the child's peak RSS.
// A benchmark, not a test:   chakra_load_bench [NODES] [DIR]   (default 1,000,000, a temp dir)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "traces/chakra_reader.h"
#include "traces/chakra_writer.h"

namespace {

using namespace racksim;

EventGraph synthetic(size_t nodes, uint32_t ranks) {
  EventGraph g(ranks);
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const StreamId comm = g.add_stream("comm.dp", StreamKind::kComm);
  const StreamId p2p = g.add_stream("comm.pp", StreamKind::kComm);
  std::vector<RankId> all(ranks);
  for (RankId r = 0; r < ranks; ++r) all[r] = r;
  const CommId world = g.add_communicator(all);
  g.reserve(nodes, nodes);
  std::vector<OpId> last(ranks, kNoOp);
  const size_t per_rank = nodes / ranks;
  for (size_t k = 0; k < per_rank; ++k) {
    for (RankId r = 0; r < ranks; ++r) {
      const OpContext ctx{r, compute, Phase::kForward, static_cast<int32_t>(k % 8),
                          static_cast<int16_t>(k % 80)};
      std::vector<OpId> deps;
      if (last[r] != kNoOp) deps.push_back(last[r]);
      if (k % 16 == 15) {
        const OpContext c{r, comm, Phase::kBackward, -1, -1};
        last[r] = g.add_collective(c, "grad all-reduce", CollectiveKind::kAllReduce, world, 64e6,
                                   CommDim::kDp, deps);
      } else if (k % 64 == 31) {
        const OpContext c{r, p2p, Phase::kForward, -1, -1};
        g.add_send(c, "act", (r + 1) % ranks, static_cast<uint32_t>(k), 1e6, CommDim::kPp, deps);
        last[r] = g.add_recv(c, "act", (r + ranks - 1) % ranks, static_cast<uint32_t>(k), 1e6,
                             CommDim::kPp, deps);
      } else {
        last[r] = g.add_compute(ctx, "gemm " + std::to_string(k % 100), OpClass::kGemm, 2e12, 5e8,
                                DataType::kBf16, deps);
      }
    }
  }
  return g;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const size_t nodes = argc > 1 ? std::stoull(argv[1]) : 1'000'000;
  const std::filesystem::path dir =
      argc > 2 ? argv[2] : std::filesystem::temp_directory_path() / "racksim_chakra_bench";
  std::filesystem::create_directories(dir);
  const std::string prefix = (dir / "trace").string();
  {
    auto t = std::chrono::steady_clock::now();
    const EventGraph g = synthetic(nodes, 8);
    const chakra::ChakraWriter writer(g, {});
    for (RankId r = 0; r < g.num_ranks(); ++r) {
      std::ofstream out(chakra::rank_file_name(prefix, r), std::ios::binary);
      writer.write_rank(r, out);
    }
    uintmax_t bytes = 0;
    for (RankId r = 0; r < g.num_ranks(); ++r)
      bytes += std::filesystem::file_size(chakra::rank_file_name(prefix, r));
    std::printf("wrote %zu nodes (%u ranks, %.1f MB) in %.2f s\n", g.size(), g.num_ranks(),
                bytes / 1e6, seconds_since(t));
  }
  const pid_t child = fork();
  if (child == 0) {
    auto t = std::chrono::steady_clock::now();
    const chakra::ChakraTrace trace = chakra::read_chakra_trace(prefix);
    std::printf("read %zu nodes into %zu ops in %.2f s\n", static_cast<size_t>(trace.summary.nodes),
                trace.graph.size(), seconds_since(t));
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  std::printf("reader peak RSS %.0f MB\n", usage.ru_maxrss / 1024.0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
