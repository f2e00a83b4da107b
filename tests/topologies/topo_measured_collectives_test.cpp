// The measured collectives table (hardware.collectives.measured_table): reading nccl-tests
// results, refusing bad rows with their line and column, and the interpolation's algebra.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "topologies/measured_collectives.h"

namespace racksim {
namespace {

std::string write_table(const std::string& name, const std::string& text) {
  // ctest runs each test in its own process, several at once: files of this process only.
  const std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

topo::MeasuredCollectives read(const std::string& path) {
  return topo::read_measured_collectives(path, {"scenario.textproto", 7, 3}, "table");
}

// The InputError `text` gets, as "line:column field: detail".
std::string error_of(const std::string& text) {
  try {
    read(write_table("bad.csv", text));
  } catch (const InputError& e) {
    return std::to_string(e.where().line) + ":" + std::to_string(e.where().column) + " " +
           e.field() + ": " + e.detail();
  }
  return "no error";
}

TEST(MeasuredCollectives, ReadsVtrainsA100TablesAsShipped) {
  const auto table = read(RACKSIM_SOURCE_DIR "/data/measured/vtrain-a100-nccl-allreduce.csv");
  EXPECT_EQ(table.curves.size(), 7u);  // 2 to 8 GPUs
  const auto* two = table.find("all_reduce", 2);
  ASSERT_NE(two, nullptr);
  ASSERT_EQ(two->size(), 12u);  // 1 MiB to 1 GiB
  // The out-of-place column is read (in-place is 45.1 us at 1 MiB).
  EXPECT_DOUBLE_EQ(two->front().bytes, 1048576);
  EXPECT_DOUBLE_EQ(two->front().time_s, 44.21e-6);
  EXPECT_EQ(table.find("all_reduce", 16), nullptr);
  EXPECT_EQ(table.find("all_gather", 8), nullptr);
}

TEST(MeasuredCollectives, InterpolatesLinearlyFlatBelowAndAtTheLargestBandwidthAbove) {
  const auto table = read(write_table("t.csv",
                                      "gpus,size_bytes,time_us\n"
                                      "4,3000,30\n"
                                      "4,1000,10\n"  // rows in any order
                                      "4,2000,14\n"));
  const auto& curve = *table.find("all_reduce", 4);
  EXPECT_DOUBLE_EQ(topo::measured_time_s(curve, 2000), 14e-6);  // a measured size
  EXPECT_DOUBLE_EQ(topo::measured_time_s(curve, 1500), 12e-6);  // halfway, linear
  EXPECT_DOUBLE_EQ(topo::measured_time_s(curve, 2500), 22e-6);
  EXPECT_DOUBLE_EQ(topo::measured_time_s(curve, 8), 10e-6);     // the latency floor
  EXPECT_DOUBLE_EQ(topo::measured_time_s(curve, 6000), 60e-6);  // 30 us per 3000 bytes
}

TEST(MeasuredCollectives, NamesTheCollectiveAsNcclTestsDoes) {
  const auto table = read(write_table("names.csv",
                                      "collective,gpus,size_bytes,in_place_time_us\n"
                                      "all_gather_perf,8,1000,5\n"
                                      "alltoall,8,1000,6\n"
                                      "\"reduce_scatter\",8,1000,7\n"));
  EXPECT_DOUBLE_EQ(table.find("all_gather", 8)->front().time_s, 5e-6);
  EXPECT_DOUBLE_EQ(table.find("all_to_all", 8)->front().time_s, 6e-6);
  EXPECT_DOUBLE_EQ(table.find("reduce_scatter", 8)->front().time_s, 7e-6);
}

TEST(MeasuredCollectives, RefusesBadRowsNamingLineAndColumn) {
  EXPECT_EQ(error_of("gpus,size_bytes\n2,10\n"),
            "1:1 : the header needs the columns gpus, size_bytes and time_us (or "
            "out_of_place_time_us or in_place_time_us)");
  EXPECT_EQ(error_of("# c\ngpus,size_bytes,time_us\n1,10,5\n"),
            "3:1 gpus: '1' is not a member count of 2 or more");
  EXPECT_EQ(error_of("gpus,size_bytes,time_us\n2.5,10,5\n"),
            "2:1 gpus: '2.5' is not a member count of 2 or more");
  EXPECT_EQ(error_of("gpus,size_bytes,time_us\n2,10,-5\n"),
            "2:3 time_us: -5 is out of range (0, 1e+09]");
  EXPECT_EQ(error_of("gpus,size_bytes,time_us\n2,nan,5\n"),
            "2:2 size_bytes: 'nan' is not a number");
  EXPECT_EQ(error_of("gpus,size_bytes,time_us\n2,10,5\n2,10,6\n"),
            "3:2 size_bytes: all_reduce on 2 GPUs at 10 bytes is measured twice");
  EXPECT_EQ(error_of("collective,gpus,size_bytes,time_us\nsend_recv,2,10,5\n"),
            "2:1 collective: 'send_recv' is not a collective nccl-tests measures (all_reduce, "
            "all_gather, reduce_scatter, all_to_all, broadcast, reduce)");
  EXPECT_EQ(error_of("gpus,size_bytes,time_us\n2,10\n"), "2:1 : 2 cells, but the header has 3");
  EXPECT_EQ(error_of("gpus,size_bytes,time_us\n"), "0:0 : no measured rows");
}

TEST(MeasuredCollectives, AMissingFileIsTheScenarioLinesError) {
  try {
    read("/nonexistent/table.csv");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "scenario.textproto");
    EXPECT_EQ(e.where().line, 7);
    EXPECT_EQ(e.field(), "table");
  }
}

}  // namespace
}  // namespace racksim
