// `racksim topo`: the summary's promises (JSON keys, counts, warnings, Graphviz), and the
// fat-tree bisection against its formula.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/support/run_racksim.h"
#include "tests/support/test_hardware.h"
#include "topologies/bisection.h"
#include "topologies/topology_graph.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::TempDir;

nlohmann::json topo_json(const std::vector<std::string>& args) {
  std::vector<std::string> all{"topo"};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--json");
  const auto r = run_racksim(all);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(CliTopo, DgxH100ClusterHasItsCountsAndNoWarnings) {
  const auto j = topo_json({"dgx-h100", "--nodes", "4"});
  EXPECT_EQ(j["gpus"], 32);
  EXPECT_EQ(j["scale_up_domain"], 8);
  EXPECT_EQ(j["counts"]["cpu"], 8);
  EXPECT_EQ(j["counts"]["pcie_switch"], 16);
  EXPECT_EQ(j["counts"]["nic"], 32);
  EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
  EXPECT_NEAR(j["per_gpu_gb_per_s"]["scale_up"].get<double>(), 450 * 0.82, 1e-9);
  EXPECT_NEAR(j["per_gpu_gb_per_s"]["nic"].get<double>(), 50 * 0.92, 1e-9);
  // 4 nodes in one scalable unit: half the nodes' NICs, 2 x 8 x 46 GB/s.
  EXPECT_NEAR(j["fabric"]["bisection_gb_per_s"].get<double>(), 736, 1e-6);
  EXPECT_NEAR(j["fabric"]["bisection_max_flow_gb_per_s"].get<double>(), 736, 1e-6);
  // Per tier: the NVSwitch cut (4 x 369 GB/s), then the unit, which is the whole cluster.
  const auto& tiers = j["bisection_per_tier"];
  ASSERT_EQ(tiers.size(), 2u) << tiers;
  EXPECT_EQ(tiers[0]["tier"], "scale-up domain");
  EXPECT_EQ(tiers[0]["gpus"], 8);
  EXPECT_NEAR(tiers[0]["formula_bytes_per_s"].get<double>(), 4 * 450e9 * 0.82, 1);
  EXPECT_NEAR(tiers[0]["max_flow_bytes_per_s"].get<double>(), 4 * 450e9 * 0.82, 1);
  EXPECT_EQ(tiers[1]["gpus"], 32);
  EXPECT_NEAR(tiers[1]["formula_bytes_per_s"].get<double>(), 736e9, 1);
}

TEST(CliTopo, Gb200RackIsOneSeventyTwoGpuDomain) {
  const auto j = topo_json({"gb200-nvl72"});
  EXPECT_EQ(j["gpus"], 72);
  EXPECT_EQ(j["scale_up_domain"], 72);
  EXPECT_EQ(j["scale_up_domains"], 1);
  EXPECT_EQ(j["counts"]["cpu"], 36);
  EXPECT_EQ(j["node_kind"], "nvl_tray");
}

TEST(CliTopo, SeedClusterWarnsAboutMixedLinkLayersAndPricesTheWhatIf) {
  const auto j = topo_json({"hgx-b300-mixed-nics"});
  EXPECT_EQ(j["gpus"], 32);
  ASSERT_GE(j["warnings"].size(), 2u);
  EXPECT_NE(j["warnings"][0].get<std::string>().find("mixed link layers"), std::string::npos);
  EXPECT_EQ(j["nics"][3]["nic"], "n0.nic2");
  EXPECT_EQ(j["nic_what_if"]["nics"][3]["nic"], "n0.nic3");
  EXPECT_EQ(j["nic_what_if"]["nics"][3]["link_layer"], "ethernet");
  // Two GPUs on one 400G NIC vs one GPU on a 100G Ethernet port pace every ring channel.
  EXPECT_NEAR(j["fabric"]["ring_all_reduce_bound_gb_per_s"].get<double>(), 8 * 46.0 / 2, 1e-6);
  EXPECT_NEAR(j["nic_what_if"]["ring_all_reduce_bound_gb_per_s"].get<double>(), 8 * 12.5 * 0.85,
              1e-6);
}

TEST(CliTopo, WarnsAboutOversubscriptionAndTheRadix) {
  const auto j =
      topo_json({"dgx-h100", "--nodes", "128", "--set", "hardware.scale_out.oversubscription=2",
                 "--set", "hardware.scale_out.switch_radix=40"});
  std::string all;
  for (const auto& w : j["warnings"]) all += w.get<std::string>() + "\n";
  EXPECT_NE(all.find("oversubscribed 2:1"), std::string::npos) << all;
  EXPECT_NE(all.find("switch_radix is 40"), std::string::npos) << all;
}

TEST(CliTopo, GpusWithANicOnTheOtherSocketAreNamed) {
  // One PCIe switch per socket and all 8 NICs on socket 0's side (ports 0..7 over 2 switches
  // would split them; give socket 1's ports the Ethernet layer so its GPUs must cross).
  const auto j =
      topo_json({"dgx-h100", "--nodes", "2", "--set", "hardware.scale_out.link_layer=ETHERNET"});
  EXPECT_EQ(j["warnings"].size(), 0u);  // all Ethernet: each GPU still has its own port
  TempDir dir;
  const std::string path = dir.write(
      "cross.textproto",
      "hardware { preset: \"dgx-h100\" nodes: 2 scale_out { ports { index: 4 link_layer: "
      "ETHERNET } ports { index: 5 link_layer: ETHERNET } ports { index: 6 link_layer: ETHERNET } "
      "ports { index: 7 link_layer: ETHERNET } } }\n");
  const auto cross = topo_json({path});
  std::string all;
  for (const auto& w : cross["warnings"]) all += w.get<std::string>() + "\n";
  EXPECT_NE(all.find("GPU 4 (socket 1) sends through n0.nic"), std::string::npos) << all;
  EXPECT_NE(all.find("inter-socket"), std::string::npos) << all;
}

TEST(CliTopo, DotWritesAGraphvizFile) {
  TempDir dir;
  const auto path = (dir.path() / "cluster.dot").string();
  const auto r = run_racksim({"topo", "dgx-h100", "--nodes", "2", "--dot", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dot = read_file(path);
  EXPECT_EQ(dot.rfind("graph G {", 0), 0u) << dot.substr(0, 40);
  EXPECT_NE(dot.find("n1.gpu7"), std::string::npos);
  EXPECT_NE(dot.find("su0.rail3.leaf"), std::string::npos);
  EXPECT_NE(r.out.find("scale-up domain"), std::string::npos);
}

TEST(CliTopo, BadInputExitsTwo) {
  EXPECT_EQ(run_racksim({"topo", "no-such-preset"}).exit_code, 2);
  EXPECT_EQ(run_racksim({"topo", "dgx-h100", "--set", "hardware.scale_out.tiers=5"}).exit_code, 2);
  EXPECT_EQ(
      run_racksim({"topo", "dgx-h100", "--set", "hardware.scale_up.domain_size=12"}).exit_code, 2);
  TempDir dir;
  const auto big = run_racksim(
      {"topo", "dgx-h100", "--nodes", "512", "--dot", (dir.path() / "big.dot").string()});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("--dot"), std::string::npos) << big.err;
}

TEST(CliTopo, BuildPlatformPrintsTimeAndMemory) {
  const auto r = run_racksim({"topo", "dgx-h100", "--nodes", "16", "--build-platform"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("platform build: 128 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak RSS"), std::string::npos) << r.out;
}

// Fat-tree bisection: the max-flow between the two halves of the nodes equals
// (nodes / 2) x rails x NIC rate / (o_leaf x o_pod) when the halves are whole units and pods.
double max_flow_ratio(int nodes, const std::string& fabric) {
  const topo::Topology t = topo::build_cluster(testing::test_hardware(nodes, fabric));
  return topo::bisection_max_flow_bytes_per_s(t) / topo::bisection_formula_bytes_per_s(t.spec);
}

TEST(CliTopo, FatTreeBisectionEqualsItsFormula) {
  const double nic = testing::kTestNic;
  // Two tiers, two units, non-blocking: 32 nodes x 8 rails x NIC.
  const topo::Topology two = topo::build_cluster(testing::test_hardware(64));
  EXPECT_NEAR(topo::bisection_formula_bytes_per_s(two.spec), 32 * 8 * nic, 1e-3);
  EXPECT_NEAR(max_flow_ratio(64, ""), 1, 1e-9);
  // Oversubscribed leaves: 1/3 of it.
  EXPECT_NEAR(max_flow_ratio(64, "scale_out { oversubscription: 3 }"), 1, 1e-9);
  const topo::Topology over =
      topo::build_cluster(testing::test_hardware(64, "scale_out { oversubscription: 3 }"));
  EXPECT_NEAR(topo::bisection_formula_bytes_per_s(over.spec), 32 * 8 * nic / 3, 1e-3);
  // Three tiers: 2 pods of 2 units, non-blocking pods, 1:7 above them.
  const std::string three =
      "scale_out { tiers: 3 units_per_pod: 2 spines: 4 cores: 4 pod_oversubscription: 7 }";
  const topo::Topology tiers = topo::build_cluster(testing::test_hardware(128, three));
  EXPECT_NEAR(topo::bisection_formula_bytes_per_s(tiers.spec), 64 * 8 * nic / 7, 1e-3);
  EXPECT_NEAR(max_flow_ratio(128, three), 1, 1e-9);
  // One unit: the rails' leaves join the halves directly, whatever the uplinks.
  EXPECT_NEAR(max_flow_ratio(16, "scale_out { oversubscription: 4 }"), 1, 1e-9);
}

}  // namespace
}  // namespace racksim
