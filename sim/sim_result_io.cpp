#include "sim/sim_result_io.h"

#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace racksim::sim {

namespace {

constexpr uint64_t kMagic = 0x7273696d72657331;  // "rsimres1"

template <typename T>
void put(std::ostream& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
void put_vector(std::ostream& out, const std::vector<T>& values) {
  put(out, static_cast<uint64_t>(values.size()));
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(T)));
}

template <typename T>
T get(std::istream& in) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value{};
  if (!in.read(reinterpret_cast<char*>(&value), sizeof(T))) {
    throw std::runtime_error("a simulation result ended early");
  }
  return value;
}

template <typename T>
std::vector<T> get_vector(std::istream& in) {
  const auto count = get<uint64_t>(in);
  if (count > (uint64_t{1} << 40) / sizeof(T)) {
    throw std::runtime_error("a simulation result holds an impossible count");
  }
  std::vector<T> values(count);
  if (!in.read(reinterpret_cast<char*>(values.data()),
               static_cast<std::streamsize>(count * sizeof(T)))) {
    throw std::runtime_error("a simulation result ended early");
  }
  return values;
}

}  // namespace

void write_sim_result(const SimResult& r, std::ostream& out) {
  put(out, kMagic);
  put_vector(out, r.timing);
  put_vector(out, r.released_by);
  put(out, r.makespan_s);
  put(out, r.activities);
  put(out, r.flows);
  put(out, r.wall_s);
  put(out, static_cast<int32_t>(r.fidelity));
  put(out, r.simulated_ranks);
  put(out, r.analytic_collectives);
  put(out, r.flow_collectives);
  put(out, r.measured_table_collectives);
  put(out, r.routes_computed);
  put(out, r.gpu_pairs);
  put(out, static_cast<uint64_t>(r.traffic.size()));
  for (const PairTraffic& pair : r.traffic) {
    put(out, pair.source);
    put(out, pair.destination);
    put(out, pair.bytes);
    put(out, pair.flows);
    put_vector(out, pair.busy);
  }
  put(out, r.traffic_resolution_s);
  put_vector(out, r.algorithms);
  put(out, kMagic);
}

SimResult read_sim_result(std::istream& in) {
  if (get<uint64_t>(in) != kMagic) throw std::runtime_error("not a racksim simulation result");
  SimResult r;
  r.timing = get_vector<OpTiming>(in);
  r.released_by = get_vector<OpId>(in);
  r.makespan_s = get<double>(in);
  r.activities = get<uint64_t>(in);
  r.flows = get<uint64_t>(in);
  r.wall_s = get<double>(in);
  r.fidelity = static_cast<config::Simulation::Fidelity>(get<int32_t>(in));
  r.simulated_ranks = get<uint32_t>(in);
  r.analytic_collectives = get<uint64_t>(in);
  r.flow_collectives = get<uint64_t>(in);
  r.measured_table_collectives = get<uint64_t>(in);
  r.routes_computed = get<uint64_t>(in);
  r.gpu_pairs = get<uint64_t>(in);
  r.traffic.resize(get<uint64_t>(in));
  for (PairTraffic& pair : r.traffic) {
    pair.source = get<RankId>(in);
    pair.destination = get<RankId>(in);
    pair.bytes = get<double>(in);
    pair.flows = get<uint64_t>(in);
    pair.busy = get_vector<BusyInterval>(in);
  }
  r.traffic_resolution_s = get<double>(in);
  r.algorithms = get_vector<AlgorithmUse>(in);
  if (get<uint64_t>(in) != kMagic) throw std::runtime_error("a simulation result is corrupt");
  return r;
}

}  // namespace racksim::sim
