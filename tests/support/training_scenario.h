// A small training scenario (Llama 3 8B cut to 8 layers, 1,024 tokens a micro-batch, 8
// micro-batches per DP rank, two virtual stages) for tests of the step's graph and ledgers.
#pragma once

#include "proto/scenario.pb.h"
#include "workloads/model/model_presets.h"

namespace racksim::testing {

inline config::Scenario scenario(int tp, int pp, int dp, config::Training::Schedule schedule) {
  config::Scenario s;
  *s.mutable_model() = *model_preset("llama3-8b");
  s.mutable_model()->set_num_layers(8);
  auto* l = s.mutable_layout();
  l->set_tp(tp);
  l->set_pp(pp);
  l->set_dp(dp);
  l->set_cp(1);
  l->set_virtual_stages(2);
  auto* t = s.mutable_training();
  t->set_global_batch_size(8 * dp);
  t->set_micro_batch_size(1);
  t->set_seq_length(1024);
  t->set_recompute(config::Training::NONE);
  t->set_schedule(schedule);
  t->set_dtype(config::BF16);
  t->set_grad_reduce_dtype(config::FP32);
  s.mutable_hardware()->mutable_gpu()->set_hbm_bytes(80e9);
  return s;
}

}  // namespace racksim::testing
