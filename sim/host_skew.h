// What a collective costs when its members' hosts, not their GPUs, set the pace: each host
// issues its rank's kernels with its own jitter (OS noise, the Python interpreter, the
// allocator), and an NCCL collective starts only when the last member has issued it. With the
// members' issue times spread like independent normals of standard deviation sigma, the
// collective waits on average sigma * E[max of n standard normals] beyond a typical member
// (the amplification of system noise at each synchronization studied by Hoefler, Schneider and
// Lumsdaine, "Characterizing the Influence of System Noise on Large-Scale Applications by
// Simulation", SC'10). A GPU that runs behind its host hides the jitter, so the replay pays it
// only after a host-bound kernel.
#pragma once

namespace racksim::sim {

// E[max of n independent standard normals]: 0 for n <= 1, 0.5642 for 2, 1.0294 for 4, 1.4236
// for 8 (by quadrature; the same n gives the same value on every run).
double expected_max_of_normals(int n);

// The expected extra wait of a collective over `members` hosts whose issue times spread with
// standard deviation `sigma_s` (hardware.collectives.host_skew_s).
inline double collective_host_skew_s(double sigma_s, int members) {
  return sigma_s > 0 ? sigma_s * expected_max_of_normals(members) : 0;
}

}  // namespace racksim::sim
