// pipeline.svg on a hand-built two-stage pipeline: well-formed (rsvg-convert renders it when it
// is installed, as scripts/setup-debian.sh does), one row per rank, grouped by stage, a legend,
// a time axis with its unit, the critical path, and a bounded size for thousands of blocks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "analysis/critical_path.h"
#include "analysis/pipeline_svg.h"

namespace racksim {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `ranks` ranks, half on stage 0 and half on stage 1; each runs `blocks` forward kernels of
// 1 ms alternating with backward kernels, stage 1 shifted by a 5 ms bubble.
struct Pipeline {
  EventGraph graph;
  sim::SimResult result;
  std::vector<int> stage;

  Pipeline(uint32_t ranks, int blocks) : graph(ranks) {
    const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
    for (RankId r = 0; r < ranks; ++r) {
      stage.push_back(r < ranks / 2 ? 0 : 1);
      double t = stage.back() == 0 ? 0 : 0.005;
      for (int k = 0; k < blocks; ++k) {
        const Phase phase = k % 2 == 0 ? Phase::kForward : Phase::kBackward;
        const OpId id = graph.add_compute({r, compute, phase, k / 2, 0}, "k", OpClass::kGemm, 1, 0,
                                          DataType::kBf16);
        result.timing.push_back({t, t + 0.001});
        result.released_by.push_back(k == 0 ? kNoOp : id - 1);
        t += 0.001;
      }
      result.makespan_s = std::max(result.makespan_s, t);
    }
  }

  std::string svg(const analysis::CriticalPath* path) const {
    analysis::PipelineSvgOptions options;
    options.title = "test & <pipeline>";
    options.group_of_rank = stage;
    options.critical_path = path;
    std::ostringstream out;
    analysis::write_pipeline_svg(graph, result, options, out);
    return out.str();
  }
};

TEST(PipelineSvg, OneRowPerRankGroupedByStageWithLegendAndAxis) {
  const Pipeline p(8, 40);
  const auto path = analysis::critical_path(p.graph, p.result);
  const std::string svg = p.svg(&path);
  EXPECT_EQ(count(svg, "class=\"rank-row\""), 8u);
  EXPECT_NE(svg.find("stage 0"), std::string::npos);
  EXPECT_NE(svg.find("stage 1"), std::string::npos);
  EXPECT_NE(svg.find("class=\"legend\""), std::string::npos);
  for (const char* kind : {"forward", "backward", "weight gradient", "recompute", "communication",
                           "offload", "idle", "critical path"}) {
    EXPECT_NE(svg.find(kind), std::string::npos) << kind;
  }
  EXPECT_NE(svg.find("time (ms)"), std::string::npos) << "a 45 ms step is labelled in ms";
  EXPECT_NE(svg.find("class=\"critical-path\""), std::string::npos);
  EXPECT_NE(svg.find("test &amp; &lt;pipeline&gt;"), std::string::npos) << "the title is escaped";
  EXPECT_EQ(count(svg, "<svg"), 1u);
  EXPECT_EQ(count(svg, "</svg>"), 1u);
}

TEST(PipelineSvg, RendersWithRsvgConvert) {
  if (std::system("command -v rsvg-convert > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "rsvg-convert is not installed (scripts/setup-debian.sh installs it)";
  }
  const Pipeline p(4, 20);
  const auto path = analysis::critical_path(p.graph, p.result);
  const auto dir = std::filesystem::temp_directory_path();
  const auto svg_path = dir / ("racksim-svg-test-" + std::to_string(::getpid()) + ".svg");
  const auto png_path = dir / ("racksim-svg-test-" + std::to_string(::getpid()) + ".png");
  std::ofstream(svg_path) << p.svg(&path);
  const std::string command =
      "rsvg-convert -o " + png_path.string() + " " + svg_path.string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << "rsvg-convert rejects the SVG";
  EXPECT_GT(std::filesystem::file_size(png_path), 1000u);
  std::filesystem::remove(svg_path);
  std::filesystem::remove(png_path);
}

TEST(PipelineSvg, MicroBatchNumbersOnWideBlocksAndAggregationOfTinyOnes) {
  const Pipeline wide(2, 6);  // 6 blocks over 1,500 px: wide enough for numbers
  EXPECT_NE(wide.svg(nullptr).find("class=\"mb"), std::string::npos);
  // 64 ranks x 4,000 blocks: blocks are pooled to the pixel, so the file stays small.
  const Pipeline many(64, 4000);
  const std::string svg = many.svg(nullptr);
  EXPECT_EQ(count(svg, "class=\"rank-row\""), 64u);
  EXPECT_LT(count(svg, "<rect"), 64u * 1600u);
  EXPECT_LT(svg.size(), 20u << 20);
}

}  // namespace
}  // namespace racksim
