// The simulated inference step against the lecture's algebra on a tiny dense model with ideal
// efficiencies: decode at batch 1 takes the weight-read floor, at a large batch the compute
// bound; `racksim infer` end to end. One simulation per TEST (process).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/inference_run.h"
#include "config/scenario_loader.h"
#include "tests/support/run_racksim.h"
#include "workloads/inference/inference_step.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::TempDir;

// 2 layers of hidden 1024, a 256-token vocabulary (so the unread embedding is negligible),
// ideal kernels: the roofline is exact.
constexpr const char* kTiny = R"(name: "tiny decode"
model { hidden_size: 1024 num_layers: 2 num_heads: 8 num_kv_heads: 8 ffn_hidden_size: 4096 vocab_size: 256 }
hardware {
  preset: "dgx-h100" nodes: 1 gpus_per_node: 1 host { sockets: 1 }
  compute { model: ROOFLINE gemm: 1 attention: 1 elementwise: 1 hbm: 1 launch_overhead_s: 0 }
}
layout { tp: 1 pp: 1 }
training { global_batch_size: 1 micro_batch_size: 1 seq_length: 16 }
inference { batch: 1 context_tokens: 16 gpu_hour_price: 3.6 }
)";

config::LoadedScenario tiny(const std::vector<std::string>& sets) {
  return config::load_scenario_text(kTiny, "tiny.textproto", sets);
}

TEST(InferenceRun, DecodeAtBatchOneTakesTheWeightReadFloor) {
  const auto loaded = tiny({});
  const auto p = app::run_inference(app::resolve_inference_run(loaded), InferencePhase::kDecode);
  EXPECT_GT(p.weight_floor_s, 0);
  EXPECT_NEAR(p.step_time_s / p.weight_floor_s, 1.0, 0.03);
  // Cost of a token at batch 1: one GPU-second at $0.001 per step second.
  EXPECT_NEAR(p.cost_per_mtok, 0.001 * p.step_time_s * 1e6, 1e-9);
}

TEST(InferenceRun, DecodeAtALargeBatchIsComputeBound) {
  // Wider layers and one cached token, so that matrix multiplies dominate the element-wise
  // kernels and the KV reads (both grow with the hidden size, the GEMMs with its square).
  const auto loaded =
      tiny({"inference.batch=65536", "inference.context_tokens=1", "model.hidden_size=4096",
            "model.num_heads=32", "model.num_kv_heads=32", "model.ffn_hidden_size=16384"});
  const app::InferenceRunPlan plan = app::resolve_inference_run(loaded);
  const auto p = app::run_inference(plan, InferencePhase::kDecode);
  EXPECT_GT(p.compute_floor_s, 10 * p.weight_floor_s);
  // The floor is at the datasheet's peak; the kernels run at the clock the power limit holds.
  const double held = plan.compute.sustained_clock_ratio;
  EXPECT_LT(held, 1);
  EXPECT_GE(p.step_time_s * held, p.compute_floor_s);
  EXPECT_LT(p.step_time_s * held / p.compute_floor_s, 1.15);  // plus attention, element-wise
}

TEST(InferenceRun, PrefillIsComputeBoundOnItsPromptTokens) {
  // 8 prompts of 512 tokens on the wide model: 4,096 tokens through every weight, so the step
  // is 2 N_active x B x P FLOPs at peak, plus attention over the prompt (4 P h per token and
  // layer against 24 h^2: ~2 %) and the element-wise kernels; time to first token = the step.
  const auto loaded =
      tiny({"inference.batch=8", "inference.context_tokens=512", "model.hidden_size=4096",
            "model.num_heads=32", "model.num_kv_heads=32", "model.ffn_hidden_size=16384"});
  const app::InferenceRunPlan plan = app::resolve_inference_run(loaded);
  const auto algebra = app::inference_algebra(plan);
  const auto p = app::run_inference(plan, InferencePhase::kPrefill);
  const double compute_floor_s = 8 * 512 * algebra.compute_time_per_token_s;
  const double held = plan.compute.sustained_clock_ratio;  // the power limit's clock, as above
  EXPECT_GE(p.step_time_s * held, compute_floor_s);
  EXPECT_LT(p.step_time_s * held / compute_floor_s, 1.15);
  EXPECT_DOUBLE_EQ(p.latency_per_token_s, p.step_time_s);
  EXPECT_NEAR(p.tokens_per_s, 8 * 512 / p.step_time_s, 1e-6 * p.tokens_per_s);
}

TEST(InferenceStep, NormsCarryTheResidualAddAndTheActivationIsAKernel) {
  // Prefill of 2 prompts of 16 tokens on the tiny model (TP1, SwiGLU, BF16): 32 tokens.
  const auto loaded = tiny({"inference.batch=2"});
  const app::InferenceRunPlan run = app::resolve_inference_run(loaded);
  const InferencePlan& plan = run.workload;
  const InferenceStep step = build_inference_step(plan, plan.prefill);
  std::map<std::string, std::vector<double>> bytes;  // per label, per occurrence, in order
  for (const Op& op : step.graph.ops()) {
    if (op.kind == OpKind::kCompute) bytes[step.graph.label(op.label)].push_back(op.hbm_bytes);
  }
  const double stream = 32 * 1024 * 2.0;  // tokens x hidden x BF16 bytes
  // Layer 0's first norm has no residual to add (reads and writes the stream); every later norm
  // reads the sub-layer's output and the stream and writes the sum and its normalized copy.
  EXPECT_EQ(bytes["attn.norm"], (std::vector<double>{2 * stream, 4 * stream}));
  EXPECT_EQ(bytes["mlp.norm"], (std::vector<double>{4 * stream, 4 * stream}));
  EXPECT_EQ(bytes["head.norm"], (std::vector<double>{4 * stream}));
  // SwiGLU reads the gate and up outputs (2 x 4096 wide) and writes their product.
  EXPECT_EQ(bytes["mlp.act"], (std::vector<double>(2, 3 * 32 * 4096 * 2.0)));
}

TEST(InferenceStep, ALearnedPositionTableAddsItsLookupAndAdd) {
  // Prefill of 1 prompt of 16 tokens: the word rows (read and written), then with GPT's learned
  // table its rows (read and written) and their add (two read, one written).
  const auto count = [](const std::vector<std::string>& sets) {
    const app::InferenceRunPlan run = app::resolve_inference_run(tiny(sets));
    const InferenceStep step = build_inference_step(run.workload, run.workload.prefill);
    std::map<std::string, double> bytes;
    for (const Op& op : step.graph.ops()) {
      if (op.kind == OpKind::kCompute) bytes[step.graph.label(op.label)] += op.hbm_bytes;
    }
    return bytes;
  };
  const double stream = 16 * 1024 * 2.0;
  const auto rotary = count({"model.position_encoding=ROTARY"});
  EXPECT_DOUBLE_EQ(rotary.at("embedding"), 2 * stream);
  EXPECT_FALSE(rotary.contains("embedding.position"));
  const auto learned = count({"model.position_encoding=LEARNED_ABSOLUTE"});
  EXPECT_DOUBLE_EQ(learned.at("embedding.position"), 2 * stream);
  EXPECT_DOUBLE_EQ(learned.at("embedding.position_add"), 3 * stream);
}

TEST(InferenceRun, KvReadsAddToTheStepAsContextGrows) {
  // 64 sequences of 64K tokens: 2 layers x 64 x 65536 x 2 x 1024 x 2 bytes of cache read per step.
  const auto loaded = tiny({"inference.batch=64", "inference.context_tokens=65536"});
  const auto p = app::run_inference(app::resolve_inference_run(loaded), InferencePhase::kDecode);
  const double kv_s =
      2.0 * 64 * 65536 * 2 * 1024 * 2 / loaded.scenario.hardware().gpu().hbm_bytes_per_s();
  EXPECT_NEAR(p.step_time_s, p.weight_floor_s + kv_s, 0.05 * p.step_time_s);
  EXPECT_DOUBLE_EQ(p.max_kv_bytes, 64.0 * 65536 * 2 * 1024 * 2 * 2);
}

TEST(InferCommand, TableJsonAndSvgWithTheFloorsMarked) {
  TempDir dir;
  const std::string scenario = dir.write("tiny.textproto", kTiny);
  const auto r = run_racksim({"infer", scenario, "--batch", "1,4096", "--jobs", "2", "--out",
                              (dir.path() / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("break-even batch B*"), std::string::npos);
  const auto j = nlohmann::json::parse(read_file(dir.path() / "out" / "infer.json"));
  ASSERT_EQ(j["points"].size(), 2u);
  // Cost per token falls with the batch; latency rises.
  EXPECT_LT(j["points"][1]["cost_per_mtok"].get<double>(),
            j["points"][0]["cost_per_mtok"].get<double>());
  EXPECT_GT(j["points"][1]["step_time_s"].get<double>(),
            j["points"][0]["step_time_s"].get<double>());
  const std::string svg = read_file(dir.path() / "out" / "infer.svg");
  EXPECT_NE(svg.find("weight-read floor"), std::string::npos);
  EXPECT_NE(svg.find("B*="), std::string::npos);
}

TEST(InferCommand, ABadBatchListIsAnInputError) {
  TempDir dir;
  const std::string scenario = dir.write("tiny.textproto", kTiny);
  const auto r = run_racksim({"infer", scenario, "--batch", "1,zero"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--batch"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
}

}  // namespace
}  // namespace racksim
