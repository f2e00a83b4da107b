// Pipeline schedules, data-parallel strategies and activation memory, without simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "graph/graph_check.h"
#include "tests/support/training_scenario.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/pipeline_map.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/training/step_shape.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

// Every (micro-batch, chunk) has one forward and either one full backward or one B and one W,
// and its backward parts come after its forward.
void expect_complete(const PassOrder& order, int micro_batches, int chunks) {
  std::map<std::pair<int, int>, std::vector<PassKind>> seen;
  for (const auto& p : order) seen[{p.micro_batch, p.local_chunk}].push_back(p.kind);
  ASSERT_EQ(seen.size(), static_cast<size_t>(micro_batches * chunks));
  for (const auto& [key, kinds] : seen) {
    ASSERT_FALSE(kinds.empty());
    EXPECT_EQ(kinds.front(), PassKind::kForward) << key.first << "," << key.second;
    const bool full = kinds.size() == 2 && kinds[1] == PassKind::kBackward;
    const bool split = kinds.size() == 3 && kinds[1] == PassKind::kBackwardInput &&
                       kinds[2] == PassKind::kBackwardWeight;
    EXPECT_TRUE(full || split) << "micro-batch " << key.first << " chunk " << key.second;
  }
}

TEST(Schedules, EveryPassExactlyOnce) {
  for (int s = 0; s < 4; ++s) {
    expect_complete(gpipe_order(s, 4, 8), 8, 1);
    expect_complete(one_f_one_b_order(s, 4, 8), 8, 1);
    expect_complete(interleaved_order(s, 4, 2, 8), 8, 2);
    expect_complete(dualpipe_order(s, 4, 8), 8, 1);  // each micro-batch visits every stage once
  }
  const auto zb = zb_h1_orders(4, 8);
  for (const auto& order : zb) expect_complete(order, 8, 1);
}

TEST(Schedules, DualPipeRunsEachDirectionOnItsOwnChunk) {
  // Stage 0 runs micro-batches 0..3 forward on chunk 0 (entering there) and 4..7 on chunk 1.
  std::set<std::pair<int, int>> seen;
  for (const auto& p : dualpipe_order(0, 4, 8)) seen.insert({p.micro_batch, p.local_chunk});
  EXPECT_TRUE(seen.contains({0, 0}));
  EXPECT_TRUE(seen.contains({7, 1}));
  EXPECT_FALSE(seen.contains({0, 1}));
  int overlapped = 0;
  for (const auto& p : dualpipe_order(1, 4, 16)) overlapped += p.overlaps_next;
  EXPECT_GT(overlapped, 0) << "the main phase overlaps forward and backward pairs";
  EXPECT_THROW(dualpipe_order(0, 3, 8), std::invalid_argument);  // odd stages
  EXPECT_THROW(dualpipe_order(0, 4, 4), std::invalid_argument);  // too few micro-batches
}

TEST(Schedules, InFlightActivationsFollowTheSchedule) {
  const int p = 4, m = 8;
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(in_flight_chunk_passes(one_f_one_b_order(s, p, m)), p - s);  // 1F1B
    EXPECT_EQ(in_flight_chunk_passes(gpipe_order(s, p, m)), m);            // GPipe
    // Megatron's interleaved warm-up: (p - s - 1) x 2 + (v - 1) x p, plus the steady forward.
    EXPECT_EQ(in_flight_chunk_passes(interleaved_order(s, p, 2, m)), (p - s - 1) * 2 + p + 1);
  }
  const auto zb = zb_h1_orders(p, m);
  for (int s = 0; s < p; ++s)
    EXPECT_LE(in_flight_chunk_passes(zb[s]), p - s) << "ZB-H1 = 1F1B memory";
  // DualPipe: the paper's PP + 1 chunk activations at most on every stage.
  for (int s = 0; s < p; ++s) EXPECT_LE(in_flight_chunk_passes(dualpipe_order(s, p, 2 * m)), p + 1);
}

// Chunks of unequal sizes (the embedding, the loss or MTP counted as layers): a forward holds
// its own chunk's activations until its backward releases them.
TEST(Schedules, InFlightActivationBytesWeighEachChunk) {
  using K = PassKind;
  const PassOrder order = {{K::kForward, 0, 0}, {K::kForward, 0, 1},  {K::kBackward, 0, 1},
                           {K::kForward, 1, 0}, {K::kBackward, 0, 0}, {K::kBackward, 1, 0}};
  EXPECT_DOUBLE_EQ(in_flight_activation_bytes(order, {1, 10}), 11);  // chunks 0 and 1 at once
  EXPECT_DOUBLE_EQ(in_flight_activation_bytes(order, {10, 1}), 20);  // two of chunk 0
  EXPECT_EQ(in_flight_chunk_passes(order), 2);
  const PassOrder interleaved = interleaved_order(0, 4, 2, 8);
  EXPECT_DOUBLE_EQ(in_flight_activation_bytes(interleaved, {3, 3}),
                   3.0 * in_flight_chunk_passes(interleaved));
}

TEST(PipelineMap, InterleavedAndDualChunks) {
  const PipelineMap interleaved(4, 2, false, 16);
  EXPECT_EQ(interleaved.route(0, 8).size(), 8u);
  EXPECT_EQ(interleaved.layers({1, 1}).first, 10);  // global chunk 5 of 8, 2 layers each
  EXPECT_TRUE(interleaved.starts_route({0, 0}));
  EXPECT_TRUE(interleaved.ends_route({3, 1}));
  const PipelineMap dual(4, 1, true, 16);
  EXPECT_EQ(dual.route(5, 8).front().stage, 3);  // the second half enters at the last stage
  EXPECT_EQ(dual.layers({3, 1}).first, 0);       // stage 3's reverse chunk holds the first layers
  EXPECT_TRUE(dual.starts_route({3, 1}));
  EXPECT_TRUE(dual.ends_route({0, 1}));
}

// Llama 3.1 405B as Megatron-Bridge splits it: 126 layers plus the embedding and the loss,
// counted as layers, make 128 = 64 chunks of 2 over PP8 x VP8; the first and the last chunk
// hold one transformer layer each.
TEST(PipelineMap, EmbeddingAndLossCountedAsLayers) {
  PipelineSplit split;
  split.embedding_as_layer = true;
  split.loss_as_layer = true;
  const PipelineMap map(8, 8, false, 126, split);
  EXPECT_EQ(map.layers({0, 0}).first, 0);
  EXPECT_EQ(map.layers({0, 0}).count, 1);
  EXPECT_EQ(map.layers({1, 0}).first, 1);
  EXPECT_EQ(map.layers({1, 0}).count, 2);
  EXPECT_EQ(map.layers({7, 7}).first, 125);  // the last chunk: stage 7's last virtual chunk
  EXPECT_EQ(map.layers({7, 7}).count, 1);
  int total = 0;
  for (int stage = 0; stage < 8; ++stage) {
    for (int chunk = 0; chunk < 8; ++chunk) total += map.layers({stage, chunk}).count;
  }
  EXPECT_EQ(total, 126);
  EXPECT_THROW(PipelineMap(8, 8, false, 127, split), std::invalid_argument);
  split.loss_as_layer = false;  // 127 counted: no even split
  EXPECT_THROW(PipelineMap(8, 8, false, 126, split), std::invalid_argument);
}

// DeepSeek-V3's 61 layers over DualPipe's 16 stages with the embedding, the loss and the MTP
// module counted as layers: 64 = 16 x 4; stage 0 holds 3 layers, the last 2. Each DualPipe rank
// also holds the mirror stage (its chunk 1), so rank 0 holds the first and the last.
TEST(PipelineMap, MtpModulesCountedAsLayersOfTheLastChunk) {
  PipelineSplit split;
  split.embedding_as_layer = true;
  split.loss_as_layer = true;
  split.mtp_layers = 1;
  const PipelineMap map(16, 1, true, 61, split);
  EXPECT_EQ(map.layers({0, 0}).count, 3);
  EXPECT_EQ(map.layers({1, 0}).first, 3);
  EXPECT_EQ(map.layers({1, 0}).count, 4);
  EXPECT_EQ(map.layers({0, 1}).first, 59);  // the reverse route's stage 15: the model's last
  EXPECT_EQ(map.layers({0, 1}).count, 2);
  split.mtp_layers = 0;  // 63 counted: no even split over 16
  EXPECT_THROW(PipelineMap(16, 1, true, 61, split), std::invalid_argument);
}

using testing::scenario;

TEST(TrainingStep, EverySchedulesGraphMatchesUp) {
  for (auto schedule :
       {config::Training::GPIPE, config::Training::ONE_F_ONE_B, config::Training::INTERLEAVED_1F1B,
        config::Training::ZB_H1, config::Training::DUALPIPE}) {
    const auto step = build_training_step(resolve_training_plan(scenario(2, 4, 2, schedule)));
    EXPECT_NO_THROW(match_sends_to_recvs(step.graph)) << config::Training::Schedule_Name(schedule);
    EXPECT_NO_THROW(check_collectives(step.graph)) << config::Training::Schedule_Name(schedule);
  }
}

// Data-parallel traffic per step in parameters, counted as nccl-tests' bus volume: an
// all-reduce moves 2x its buffer, a reduce-scatter or all-gather 1x.
double dp_volume_in_params(const config::Scenario& s, RankId rank) {
  const auto step = build_training_step(resolve_training_plan(s));
  double params = 0;
  for (const Op& op : step.graph.ops()) {
    if (op.rank != rank || op.kind != OpKind::kCollective || op.dim != CommDim::kDp) continue;
    if (step.graph.communicator(op.peer).size() != static_cast<size_t>(s.layout().dp())) continue;
    const bool gradient = step.graph.label(op.label).starts_with("grad.");
    const double elements = op.amount / (gradient ? 4.0 : 2.0);
    params += op.collective == CollectiveKind::kAllReduce ? 2 * elements : elements;
  }
  return params / step.info.params_per_rank[rank];
}

TEST(DataParallel, ZeroCommunicationVolumes) {
  auto s = scenario(1, 1, 4, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_global_batch_size(4);  // one micro-batch per replica
  for (int zero : {0, 1, 2}) {
    s.mutable_training()->set_zero_stage(zero);
    EXPECT_NEAR(dp_volume_in_params(s, 0), 2.0, 1e-9) << "ZeRO-" << zero;
  }
  s.mutable_training()->set_zero_stage(3);
  EXPECT_NEAR(dp_volume_in_params(s, 0), 3.0, 1e-9) << "ZeRO-3: gather, gather again, scatter";
}

// ZeRO-2 keeps only its shard of the gradients, so each micro-batch's gradients are
// reduce-scattered before the next one adds to them (DeepSpeed's stage_1_and_2.py reduces at
// every micro-step once it partitions gradients): with 8 micro-batches per replica, 8
// reduce-scatters and the parameters' all-gather, where ZeRO-1 needs one of each. Without
// overlap the reduction holds the compute stream (DeepSpeed's overlap_comm false below stage 3):
// a kernel waits for it; with overlap none does.
TEST(DataParallel, ZeroTwoReducesEveryMicroBatch) {
  auto s = scenario(1, 1, 4, config::Training::ONE_F_ONE_B);  // 8 micro-batches per replica
  s.mutable_training()->set_zero_stage(1);
  EXPECT_NEAR(dp_volume_in_params(s, 0), 2.0, 1e-9);
  s.mutable_training()->set_zero_stage(2);
  EXPECT_NEAR(dp_volume_in_params(s, 0), 9.0, 1e-9);
  // Kernels before the optimizer that wait for a gradient reduction.
  auto kernels_waiting_for_a_reduction = [&] {
    const auto step = build_training_step(resolve_training_plan(s));
    int waiting = 0;
    for (OpId id = 0; id < step.graph.size(); ++id) {
      const Op& op = step.graph.op(id);
      if (op.kind != OpKind::kCompute || op.phase == Phase::kOptimizer) continue;
      for (OpId dep : step.graph.deps(id)) {
        waiting += step.graph.label(step.graph.op(dep).label) == "grad.reducescatter";
      }
    }
    return waiting;
  };
  EXPECT_GE(kernels_waiting_for_a_reduction(), 7)
      << "each micro-batch after the first waits for the previous one's";
  s.mutable_training()->set_overlap_grad_reduce(true);
  EXPECT_NEAR(dp_volume_in_params(s, 0), 9.0, 1e-9);
  EXPECT_EQ(kernels_waiting_for_a_reduction(), 0);
}

TEST(DataParallel, BucketsSplitTheReduction) {
  auto s = scenario(1, 1, 4, config::Training::ONE_F_ONE_B);
  auto reductions = [&] {
    const auto step = build_training_step(resolve_training_plan(s));
    std::vector<double> bytes;
    for (const Op& op : step.graph.ops()) {
      if (op.rank == 0 && op.kind == OpKind::kCollective && op.dim == CommDim::kDp) {
        bytes.push_back(op.amount);
      }
    }
    return std::make_pair(bytes, step.info.params_per_rank[0]);
  };
  const auto [one, params] = reductions();
  ASSERT_EQ(one.size(), 1u) << "without overlap: one all-reduce after the last backward";
  EXPECT_DOUBLE_EQ(one[0], params * 4);
  s.mutable_training()->set_overlap_grad_reduce(true);
  s.mutable_training()->set_grad_bucket_elements(500'000'000);
  const auto [buckets, same] = reductions();
  EXPECT_GT(buckets.size(), 2u);
  double total = 0;
  for (double b : buckets) {
    total += b;
    EXPECT_GE(b, 0);
  }
  EXPECT_NEAR(total, params * 4, 1) << "every gradient reduced once";
}

TEST(DataParallel, ZeroShardsTheStaticMemory) {
  auto s = scenario(1, 1, 4, config::Training::ONE_F_ONE_B);
  const double full = memory_ledger(resolve_training_plan(s), 0).static_bytes();
  s.mutable_training()->set_zero_stage(1);
  const double params = build_training_step(resolve_training_plan(s)).info.params_per_rank[0];
  EXPECT_NEAR(memory_ledger(resolve_training_plan(s), 0).static_bytes(), full - params * 12 * 3 / 4,
              1);
  s.mutable_training()->set_zero_stage(3);
  EXPECT_NEAR(memory_ledger(resolve_training_plan(s), 0).static_bytes(), full / 4, 1);
}

// Megatron's optimizer before the update: the gradient norm (clipping) reads the rank's FP32
// gradients once and all-reduces one FP32 scalar over the model-parallel (TP x PP) group, or
// over every rank under a sharded optimizer; FP16 adds the unscale-and-check pass, which reads
// and writes them, with its own scalar.
std::map<std::string, double> gradient_checks(const config::Scenario& s) {
  const auto step = build_training_step(resolve_training_plan(s));
  std::map<std::string, double> seen;  // kernel: HBM bytes per parameter; reduction: group size
  for (const Op& op : step.graph.ops()) {
    if (op.rank != 0) continue;
    const std::string label(step.graph.label(op.label));
    if (label == "optimizer.grad_norm" || label == "optimizer.unscale") {
      seen[label] = op.hbm_bytes / step.info.params_per_rank[0];
    }
    if (label == "grad.norm" || label == "grad.found_inf") {
      seen[label] = static_cast<double>(step.graph.communicator(op.peer).size());
      EXPECT_EQ(op.amount, 4) << label << ": one FP32 scalar";
    }
  }
  return seen;
}

TEST(DataParallel, GradientChecksBeforeTheOptimizer) {
  auto s = scenario(2, 4, 2, config::Training::ONE_F_ONE_B);
  auto bf16 = gradient_checks(s);
  EXPECT_DOUBLE_EQ(bf16["optimizer.grad_norm"], 4);
  EXPECT_EQ(bf16["grad.norm"], 8) << "TP2 x PP4";
  EXPECT_FALSE(bf16.contains("optimizer.unscale")) << "BF16 needs no loss scaling";
  s.mutable_training()->set_dtype(config::FP16);
  auto fp16 = gradient_checks(s);
  EXPECT_DOUBLE_EQ(fp16["optimizer.unscale"], 8);
  EXPECT_EQ(fp16["grad.found_inf"], 8);
  s.mutable_training()->set_clip_grad_norm(false);
  auto unclipped = gradient_checks(s);
  EXPECT_FALSE(unclipped.contains("optimizer.grad_norm"));
  EXPECT_FALSE(unclipped.contains("grad.norm"));
  EXPECT_TRUE(unclipped.contains("optimizer.unscale"));
  // A sharded optimizer (ZeRO-1, Megatron's distributed optimizer): each data-parallel rank
  // checks its shard, half the gradients, and the scalars are reduced over every rank.
  s.mutable_training()->set_clip_grad_norm(true);
  s.mutable_training()->set_zero_stage(1);
  auto sharded = gradient_checks(s);
  EXPECT_DOUBLE_EQ(sharded["optimizer.grad_norm"], 2);
  EXPECT_EQ(sharded["grad.norm"], 16) << "TP2 x PP4 x DP2";
  EXPECT_EQ(sharded["grad.found_inf"], 16);
}

// The weight gradient of every micro-batch joins the step's gradient as the framework does it
// (training.grad_accumulation), per weight element W of a linear layer: fused into the
// weight-gradient GEMM (it reads and writes the FP32 buffer: 2 x 4 - 2 B more than writing its
// BF16 output); a hook's kernel every micro-batch (reads the BF16 gradient and the FP32 buffer,
// writes the buffer: 2 + 2 x 4 B); autograd from the second micro-batch (3 x 2 B).
TEST(TrainingStep, GradientAccumulationCostsWhatTheFrameworkMoves) {
  auto s = scenario(1, 1, 1, config::Training::ONE_F_ONE_B);
  auto ops = [&](config::Training::GradAccumulation mode) {
    s.mutable_training()->set_grad_accumulation(mode);
    const auto step = build_training_step(resolve_training_plan(s));
    std::map<std::pair<std::string, int>, double> bytes;  // (label, micro-batch) on rank 0
    for (const Op& op : step.graph.ops()) {
      if (op.kind == OpKind::kCompute && op.rank == 0 && op.layer == 0) {
        bytes[{step.graph.label(op.label), op.micro_batch}] = op.hbm_bytes;
      }
    }
    return bytes;
  };
  const auto autograd = ops(config::Training::AUTOGRAD);
  const auto hook = ops(config::Training::MAIN_GRAD_ADD);
  const auto fused = ops(config::Training::FUSED_IN_WGRAD);
  const double w = 4096.0 * 14336 * 2;  // llama3-8b's gated MLP up-projection
  EXPECT_FALSE(autograd.contains({"mlp.up.bwd.grad_accumulate", 0}));
  EXPECT_DOUBLE_EQ(autograd.at({"mlp.up.bwd.grad_accumulate", 1}), 3 * 2 * w);
  EXPECT_DOUBLE_EQ(hook.at({"mlp.up.bwd.grad_accumulate", 0}), (2 + 2 * 4) * w);
  EXPECT_FALSE(fused.contains({"mlp.up.bwd.grad_accumulate", 1}));
  EXPECT_DOUBLE_EQ(fused.at({"mlp.up.bwd", 1}) - hook.at({"mlp.up.bwd", 1}), (2 * 4 - 2) * w);
  EXPECT_FALSE(fused.contains({"attn.scores.bwd.grad_accumulate", 1}));  // no weights
}

// overlap_param_gather: a sharded optimizer's all-gather of the updated parameters leaves the end
// of the step and runs layer by layer before the first micro-batch's forward of each layer; the
// bytes gathered stay the same.
TEST(GradientSync, OverlappedParameterGatherRunsUnderTheFirstForward) {
  auto s = scenario(2, 2, 2, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_zero_stage(1);
  auto gathers = [](const TrainingPlan& plan) {
    const TrainingStep step = build_training_step(plan);
    std::map<Phase, double> bytes;
    for (const Op& op : step.graph.ops()) {
      if (op.rank == 0 && step.graph.label(op.label) == "params.allgather") {
        bytes[op.phase] += op.amount;
        EXPECT_TRUE(op.phase != Phase::kForward || op.micro_batch == 0);
      }
    }
    return bytes;
  };
  const auto after_update = gathers(resolve_training_plan(s));
  s.mutable_training()->set_overlap_param_gather(true);
  const auto overlapped = gathers(resolve_training_plan(s));
  ASSERT_EQ(after_update.count(Phase::kForward), 0u);
  ASSERT_EQ(overlapped.count(Phase::kForward), 1u);
  double total = 0;
  for (const auto& [phase, bytes] : after_update) total += bytes;
  EXPECT_GT(total, 0);
  EXPECT_DOUBLE_EQ(overlapped.at(Phase::kForward), total);
  EXPECT_EQ(overlapped.size(), 1u);
}

// AdamW's moments in BF16 (DeepSeek-V3): 4 + 2 x 2 = 8 B of optimizer state per parameter, and
// the optimizer kernel moves 14 + 4 x 2 = 22 B per parameter instead of 30.
TEST(MemoryLedger, Bf16MomentsHoldEightBytesPerParameter) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  const TrainingPlan fp32 = resolve_training_plan(s);
  s.mutable_training()->set_optimizer_moment_dtype(config::BF16);
  const TrainingPlan bf16 = resolve_training_plan(s);
  const double params = params_on_rank(bf16.model, bf16.layout, bf16.map, 0);
  auto optimizer_item = [](const MemoryLedger& ledger) {
    for (const MemoryItem& item : ledger.static_items) {
      if (item.name == "optimizer states") return item.bytes;
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(optimizer_item(memory_ledger(fp32, 0)), 12 * params);
  EXPECT_DOUBLE_EQ(optimizer_item(memory_ledger(bf16, 0)), 8 * params);
  auto adam_bytes = [](const TrainingPlan& plan) {
    const TrainingStep step = build_training_step(plan);
    double bytes = 0;
    for (const Op& op : step.graph.ops()) {
      if (op.rank == 0 && step.graph.label(op.label) == "optimizer.adam") bytes += op.hbm_bytes;
    }
    return bytes;
  };
  EXPECT_DOUBLE_EQ(adam_bytes(fp32), 30 * params);
  EXPECT_DOUBLE_EQ(adam_bytes(bf16), 22 * params);
}

// The test scenario's layers with GPT's blocks, which Korthikanti et al.'s formulas count: full
// multi-head attention (as many key/value heads as heads) and a GELU MLP of 4h.
config::Scenario gpt_blocks(config::Scenario s) {
  config::Model* m = s.mutable_model();
  m->set_num_kv_heads(m->num_heads());
  m->set_activation(config::Model::GELU);
  m->set_ffn_hidden_size(4 * m->hidden_size());
  return s;
}

// Korthikanti et al.'s formulas, which count the two hidden dropouts' one-byte masks.
TEST(MemoryLedger, KorthikantiActivationFormulas) {
  auto s = gpt_blocks(scenario(2, 2, 1, config::Training::ONE_F_ONE_B));
  s.mutable_model()->set_hidden_dropout(0.1);
  s.mutable_training()->set_flash_attention(false);
  const double seq = 1024, b = 1, h = 4096, a = 32, t = 2;
  const double sbh = seq * b * h;
  const double scores = 5 * a * seq / (h * t);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   sbh * (10 + 24 / t + scores));  // TP
  s.mutable_layout()->set_sequence_parallel(true);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   sbh * (34 / t + scores));  // TP + SP
  s.mutable_training()->set_recompute(config::Training::SELECTIVE);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   34 * sbh / t);  // + selective recompute
  s.mutable_training()->set_recompute(config::Training::FULL);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   2 * sbh / t);  // full recompute: the input
  s.mutable_layout()->set_tp(1);
  s.mutable_layout()->set_sequence_parallel(false);
  s.mutable_training()->set_recompute(config::Training::NONE);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   sbh * (34 + 5 * a * seq / h));  // no parallelism
  s.mutable_training()->set_flash_attention(true);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   sbh * 34);  // FlashAttention stores no scores
}

// Llama 3's blocks keep what their kernels save: the queries and the attention's output (a d
// each), the grouped keys and values (g d each) and the SwiGLU's 3f (gate and up halves, their
// product), all split by TP; the norms' and projections' inputs whole on every TP rank: sbh(8 +
// 26/t) for Llama 3 8B, where GPT's blocks of the same width keep sbh(8 + 24/t).
TEST(MemoryLedger, GroupedQueryAttentionAndSwigluKeepWhatTheirKernelsSave) {
  const auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  const double tokens = 1024, h = 4096, a = 32, g = 8, d = 128, f = 14336, t = 2;
  const double split = 2 * (a * d + 2 * g * d + a * d + 3 * f) / t;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)), tokens * (8 * h + split));
  EXPECT_DOUBLE_EQ(split, h * 26 / t);
}

// The ledger's parts of a Llama 3 8B layer at TP2 without sequence parallelism: the norms' and
// the blocks' inputs whole on each rank, the attention's heads and the SwiGLU's intermediates
// halved; LAYERNORM's recompute is a negative part, the blocks' inputs; the parts sum to the layer.
TEST(MemoryLedger, ALayersPartsSayWhereItsBytesAre) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  const double tokens = 1024, h = 4096, a = 32, g = 8, d = 128, f = 14336, t = 2;
  std::map<std::string, double> bytes;
  for (const MemoryItem& part : layer_activation_parts(resolve_training_plan(s), 0)) {
    bytes[part.name] = part.bytes;
  }
  EXPECT_EQ(bytes.size(), 5u);
  EXPECT_DOUBLE_EQ(bytes["norms' inputs (the residual stream)"], tokens * 2 * h * 2);
  EXPECT_DOUBLE_EQ(bytes["attention: its input"], tokens * h * 2);
  EXPECT_DOUBLE_EQ(bytes["attention: queries, keys, values, output"],
                   tokens * (2 * a * d + 2 * g * d) / t * 2);
  EXPECT_DOUBLE_EQ(bytes["feed-forward: its input"], tokens * h * 2);
  EXPECT_DOUBLE_EQ(bytes["MLP: activation's input and output"], tokens * 3 * f / t * 2);
  s.mutable_training()->set_recompute(config::Training::SELECTIVE);
  s.mutable_training()->add_recompute_modules(config::Training::LAYERNORM);
  const TrainingPlan plan = resolve_training_plan(s);
  double total = 0;
  double negative = 0;
  for (const MemoryItem& part : layer_activation_parts(plan, 0)) {
    total += part.bytes;
    negative += std::min(part.bytes, 0.0);
  }
  EXPECT_DOUBLE_EQ(negative, -tokens * 2 * h * 2);
  EXPECT_DOUBLE_EQ(total, layer_activation_bytes(plan, 0));
}

// FP8 training as Transformer Engine keeps it (training.fp8_activations LINEAR_INPUTS): the linear
// layers' inputs in FP8 (the attention's and the MLP's inputs, the activation's output), the rest
// in BF16 (the norms' inputs, the attention kernel's queries, keys, values and output, the
// activation's input), and the attention's output once more in FP8 for the output projection.
// The default keeps every element at one byte.
TEST(MemoryLedger, Fp8TrainingKeepsOnlyLinearInputsInFp8UnderTransformerEnginesRule) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_dtype(config::FP8);
  const double tokens = 1024, h = 4096, a = 32, g = 8, d = 128, f = 14336, t = 2;
  const double kept_heads = 2 * a * d + 2 * g * d + 2 * f;  // q, k, v, o; gate and up
  const double linear_heads = f + a * d;                    // the activation's output; o again
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   tokens * (4 * h + (kept_heads + f) / t));  // one byte each
  s.mutable_training()->set_fp8_activations(config::Training::LINEAR_INPUTS);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   tokens * (2 * h * 2 + 2 * h * 1 + kept_heads / t * 2 + linear_heads / t * 1));
}

// Multi-latent attention keeps its latents whole on every TP rank (the query latent and its norm's
// output, the key/value latent with the RoPE key and its norm's output) and, split by TP, the
// queries and keys (a (d + r) each), the values and the output (a v each). Recompute of
// MLA_UP_PROJ drops the up-projections' outputs: the queries, keys and values.
TEST(MemoryLedger, LatentAttentionKeepsItsLatentsAndItsExpandedHeads) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  const double tokens = 1024, h = 4096, a = 32, d = 128, r = 64, v = 96, f = 14336, t = 2;
  const double q_lora = 1536, kv_lora = 512;
  config::Model* m = s.mutable_model();
  m->set_head_dim(static_cast<int64_t>(d));
  m->set_qk_rope_head_dim(static_cast<int64_t>(r));
  m->set_v_head_dim(static_cast<int64_t>(v));
  m->set_q_lora_rank(static_cast<int64_t>(q_lora));
  m->set_kv_lora_rank(static_cast<int64_t>(kv_lora));
  const double latents = 2 * q_lora + 2 * kv_lora + r;
  const double up_projections = a * (2 * (d + r) + v);
  const double heads = up_projections + a * v + 3 * f;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   tokens * 2 * (4 * h + latents + heads / t));
  s.mutable_training()->set_recompute(config::Training::SELECTIVE);
  s.mutable_training()->add_recompute_modules(config::Training::MLA_UP_PROJ);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                   tokens * 2 * (4 * h + latents + (heads - up_projections) / t));
}

// Without hidden dropout the residual adds keep no masks: 2 sbh fewer, whole on every TP rank
// without sequence parallelism and split with it.
TEST(MemoryLedger, WithoutHiddenDropoutTheLayerKeepsNoMasks) {
  auto s = gpt_blocks(scenario(2, 2, 1, config::Training::ONE_F_ONE_B));
  const double sbh = 1024.0 * 4096, t = 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)), sbh * (8 + 24 / t));
  s.mutable_layout()->set_sequence_parallel(true);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)), sbh * 32 / t);
}

// The materialized attention keeps its scores: 5 bytes each (16-bit softmax output, dropout mask
// and output) where Megatron's fused softmax takes them, 7 where PyTorch's FP32 softmax keeps
// its FP32 output instead (more than 4,096 keys).
TEST(MemoryLedger, MaterializedAttentionKeepsItsScoresAndTheFp32FallbacksOutput) {
  auto s = gpt_blocks(scenario(1, 1, 1, config::Training::ONE_F_ONE_B));
  s.mutable_model()->set_hidden_dropout(0.1);
  s.mutable_training()->set_attention_impl(config::Training::MATERIALIZED);
  s.mutable_training()->set_recompute(config::Training::NONE);
  const double b = 1, h = 4096, a = 32;
  for (const double seq : {1024.0, 8192.0}) {
    s.mutable_training()->set_seq_length(static_cast<int64_t>(seq));
    const double bytes_per_score = seq <= 4096 ? 5 : 7;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s)),
                     seq * b * h * (34 + bytes_per_score * a * seq / h))
        << seq;
  }
}

// Full recompute stores a layer's input only, but the layer it rematerialises for its backward
// holds everything, the materialized scores included: 4,096 tokens x 4,096 hidden x (34 + 5 x 32
// heads x 4,096 / 4,096) bytes, larger than the stage's other transients (stage 0 of 2 holds no
// logits).
TEST(MemoryLedger, FullRecomputesTransientLayerKeepsTheMaterializedScores) {
  auto s = gpt_blocks(scenario(1, 2, 1, config::Training::ONE_F_ONE_B));
  s.mutable_model()->set_hidden_dropout(0.1);
  s.mutable_layout()->set_virtual_stages(1);
  s.mutable_training()->set_attention_impl(config::Training::MATERIALIZED);
  s.mutable_training()->set_recompute(config::Training::FULL);
  s.mutable_training()->set_seq_length(4096);
  const double sbh = 4096.0 * 4096;
  const TrainingPlan plan = resolve_training_plan(s);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(plan), 2 * sbh);
  const MemoryLedger ledger = memory_ledger(plan, 0);
  EXPECT_NE(ledger.largest_transient.name.find("full recompute"), std::string::npos);
  EXPECT_DOUBLE_EQ(ledger.largest_transient.bytes, sbh * (34 + 5 * 32));
}

// Megatron-Core's defer_embedding_wgrad_compute (training.defer_embedding_wgrad): on the last
// stage the output layer's weight gradients of the first wgrad_deferral_limit micro-batches
// leave their backward passes (which keep the input gradient) and run after the stage's last
// pass; the later micro-batches keep the fused backward. The work is the same, moved.
}  // namespace
}  // namespace racksim
