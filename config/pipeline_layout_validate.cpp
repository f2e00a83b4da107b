#include "config/pipeline_layout_validate.h"

#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "workloads/training/pipeline_layout.h"

namespace racksim::config {

namespace {

constexpr const char* kLayoutField = "layout.pipeline_layout";

// The layout replaces the even split: the fields that shape that split do not combine with it.
void check_layout_is_the_only_split(const config::Layout& layout, const Checker& check) {
  const char* other = layout.first_stage_layers() > 0 ? "layout.first_stage_layers"
                      : layout.account_for_embedding_in_split()
                          ? "layout.account_for_embedding_in_split"
                      : layout.account_for_loss_in_split() ? "layout.account_for_loss_in_split"
                      : layout.account_for_mtp_in_split()  ? "layout.account_for_mtp_in_split"
                                                           : nullptr;
  if (other != nullptr) {
    check.fail(other, fmt::format("does not combine with {}, which places every layer itself",
                                  kLayoutField));
  }
}

void check_layout_chunk_count(const config::Scenario& scenario, const Sizes& sizes, size_t chunks,
                              const Checker& check) {
  const auto schedule = scenario.training().schedule();
  if (schedule == config::Training::DUALPIPE) {
    check.fail(check.blame(kLayoutField, {"training.schedule"}),
               "layout.pipeline_layout: DualPipe places two mirrored chunks on every stage; an "
               "explicit layout is for 1F1B and interleaved pipelines");
  }
  const int64_t vp = schedule == config::Training::INTERLEAVED_1F1B ? sizes.vp : 1;
  if (static_cast<int64_t>(chunks) != sizes.pp * vp) {
    check.fail(
        check.blame(kLayoutField, {"layout.pp", "layout.virtual_stages", "training.schedule"}),
        fmt::format("{} holds {} chunks; the pipeline has pp {} x {} virtual stages = {}",
                    kLayoutField, chunks, sizes.pp, vp, sizes.pp * vp));
  }
}

// 'E' opens the first chunk and 'L' closes the last, once each. A chunk may hold no transformer
// layer (a standalone embedding or loss chunk, as Megatron-Core allows).
void check_layout_chunk_contents(const std::vector<racksim::LayoutChunk>& chunks,
                                 const Checker& check) {
  int embeddings = 0;
  int losses = 0;
  for (const racksim::LayoutChunk& c : chunks) {
    embeddings += c.embeddings;
    losses += c.losses;
  }
  if (embeddings != 1 || !chunks.front().embedding_first) {
    check.fail(kLayoutField,
               fmt::format("has {} 'E'; the embedding opens the first chunk, once", embeddings));
  }
  if (losses != 1 || !chunks.back().loss_last) {
    check.fail(
        kLayoutField,
        fmt::format("has {} 'L'; the output layer and loss close the last chunk, once", losses));
  }
}

// The MTP modules follow the last transformer layer, all in one chunk: the last (beside the
// loss) or one of their own that sends the main hidden state and theirs on to the loss's chunk
// (Megatron-Core's "...m|L").
void check_layout_mtp_chunk(const std::vector<racksim::LayoutChunk>& chunks, const Checker& check) {
  size_t holders = 0;
  size_t mtp_chunk = chunks.size();
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].mtp_modules == 0) continue;
    ++holders;
    if (mtp_chunk == chunks.size()) mtp_chunk = i;
  }
  if (holders == 0) return;
  if (holders > 1) {
    check.fail(kLayoutField, fmt::format("spreads the MTP modules ('m') over {} chunks; racksim "
                                         "runs them together, in one chunk",
                                         holders));
  }
  if (chunks[mtp_chunk].layer_after_mtp) {
    check.fail(kLayoutField, fmt::format("chunk {} has a transformer layer ('t') after an MTP "
                                         "module ('m'); the MTP modules follow the last layer",
                                         mtp_chunk));
  }
  for (size_t i = mtp_chunk + 1; i < chunks.size(); ++i) {
    if (chunks[i].transformer_layers > 0) {
      check.fail(kLayoutField,
                 fmt::format("chunk {} holds transformer layers ('t') after the MTP modules of "
                             "chunk {}; the MTP modules follow the last layer",
                             i, mtp_chunk));
    }
  }
}

void check_layout_layer_counts(const config::Model& model,
                               const std::vector<racksim::LayoutChunk>& chunks,
                               const Checker& check) {
  const int64_t layers = std::accumulate(
      chunks.begin(), chunks.end(), int64_t{0},
      [](int64_t sum, const racksim::LayoutChunk& c) { return sum + c.transformer_layers; });
  if (layers != model.num_layers()) {
    check.fail(check.blame(kLayoutField, {"model.num_layers"}),
               fmt::format("{} holds {} transformer layers ('t'); model.num_layers is {}",
                           kLayoutField, layers, model.num_layers()));
  }
  const int64_t mtp_modules = std::accumulate(
      chunks.begin(), chunks.end(), int64_t{0},
      [](int64_t sum, const racksim::LayoutChunk& c) { return sum + c.mtp_modules; });
  if (mtp_modules != model.mtp_depth()) {
    check.fail(check.blame(kLayoutField, {"model.mtp_depth"}),
               fmt::format("{} holds {} MTP modules ('m'); model.mtp_depth is {}", kLayoutField,
                           mtp_modules, model.mtp_depth()));
  }
}

}  // namespace

void check_pipeline_layout(const config::Scenario& scenario, const Sizes& sizes,
                           const Checker& check) {
  const config::Layout& layout = scenario.layout();
  if (layout.pipeline_layout().empty()) return;
  std::vector<racksim::LayoutChunk> chunks;
  try {
    chunks = racksim::parse_pipeline_layout(layout.pipeline_layout());
  } catch (const std::invalid_argument& e) {
    check.fail(kLayoutField, e.what());
  }
  check_layout_is_the_only_split(layout, check);
  check_layout_chunk_count(scenario, sizes, chunks.size(), check);
  check_layout_chunk_contents(chunks, check);
  check_layout_mtp_chunk(chunks, check);
  check_layout_layer_counts(scenario.model(), chunks, check);
}

}  // namespace racksim::config
