#include "traces/kineto_reader.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "graph/group_label.h"

namespace racksim::kineto {

namespace fs = std::filesystem;

namespace {

InputError trace_error(const std::string& file, const std::string& field,
                       const std::string& detail) {
  return InputError({file, 0, 0}, field, detail);
}

bool is_glob(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

std::vector<std::string> glob_files(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> files;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      if (fs::is_regular_file(g.gl_pathv[i])) files.emplace_back(g.gl_pathv[i]);
    }
  }
  globfree(&g);
  return files;
}

std::vector<std::string> directory_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && is_kineto_file(entry.path().string())) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Orders the files by their distributedInfo rank and checks that they make one job.
std::vector<KinetoRank> ranked(std::vector<KinetoRank> ranks, const KinetoOptions& options) {
  const KinetoRank& first = ranks.front();
  if (ranks.size() == 1) {
    if (options.ranks < 0 && first.world_size > 1) {
      throw trace_error(first.file, "distributedInfo.world_size",
                        fmt::format("the trace is rank {} of {}: give every rank's file (a "
                                    "directory or a glob), or --ranks {} to replay this rank's "
                                    "program on every rank",
                                    first.rank, first.world_size, first.world_size));
    }
    return ranks;
  }
  for (const KinetoRank& r : ranks) {
    if (r.rank < 0) {
      throw trace_error(r.file, "distributedInfo.rank",
                        "missing: with several files, each must say its rank");
    }
    if (r.world_size != first.world_size) {
      throw trace_error(
          r.file, "distributedInfo.world_size",
          fmt::format("{} here but {} in {}", r.world_size, first.world_size, first.file));
    }
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const KinetoRank& a, const KinetoRank& b) { return a.rank < b.rank; });
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank != static_cast<int>(i)) {
      const bool duplicate = i > 0 && ranks[i].rank == ranks[i - 1].rank;
      throw trace_error(ranks[i].file, "distributedInfo.rank",
                        duplicate
                            ? fmt::format("rank {} is also {}", ranks[i].rank, ranks[i - 1].file)
                            : fmt::format("rank {} has no file", i));
    }
  }
  if (first.world_size > 0 && ranks.size() != static_cast<size_t>(first.world_size)) {
    throw trace_error(first.file, "distributedInfo.world_size",
                      fmt::format("a world of {} ranks but {} files: give every rank's file, or "
                                  "one file and --ranks N to replicate it",
                                  first.world_size, ranks.size()));
  }
  if (options.ranks >= 0 && static_cast<size_t>(options.ranks) != ranks.size()) {
    throw trace_error(first.file, "--ranks",
                      fmt::format("{} ranks asked for but {} files given (--ranks replicates "
                                  "one file)",
                                  options.ranks, ranks.size()));
  }
  // Process groups of the same name must hold the same ranks on every rank.
  std::map<std::string, std::pair<std::vector<RankId>, std::string>> groups;
  for (const KinetoRank& r : ranks) {
    for (const ProcessGroupConfig& g : r.groups) {
      auto [it, inserted] = groups.try_emplace(g.name, g.ranks, r.file);
      if (!inserted && it->second.first != g.ranks) {
        throw trace_error(r.file, fmt::format("distributedInfo.pg_config '{}'.ranks", g.name),
                          fmt::format("[{}] here but [{}] in {}", fmt::join(g.ranks, ", "),
                                      fmt::join(it->second.first, ", "), it->second.second));
      }
    }
  }
  return ranks;
}

// Emits the programs into the graph, one rank after another.
class GraphEmitter {
 public:
  GraphEmitter(KinetoTrace& out, uint32_t ranks) : out_(out), ranks_(ranks) {}
  void emit(RankId rank, uint32_t program);

 private:
  CommId communicator(RankId rank, const RankProgram& p, const ProgramOp& op);
  StreamId stream(const ProgramStream& s);

  KinetoTrace& out_;
  uint32_t ranks_;
  std::map<std::string, StreamId> streams_;
  std::map<std::vector<RankId>, size_t> groups_;  // members -> index in trace.groups
};

StreamId GraphEmitter::stream(const ProgramStream& s) {
  const auto it = streams_.find(s.name);
  if (it != streams_.end()) return it->second;
  if (streams_.size() >= 250) {
    throw trace_error(out_.trace.files.front(), "args.stream",
                      "more than 250 streams and threads: racksim replays at most 250");
  }
  const StreamId id = out_.trace.graph.add_stream(s.name, s.kind);
  streams_.emplace(s.name, id);
  return id;
}

CommId GraphEmitter::communicator(RankId rank, const RankProgram& p, const ProgramOp& op) {
  std::vector<RankId> members = op.group;
  const bool world =
      members.empty() || (out_.replicated && members.size() == static_cast<size_t>(p.world_size));
  if (world) {
    members.resize(ranks_);
    for (RankId r = 0; r < ranks_; ++r) members[r] = r;
  }
  const std::string where = fmt::format("traceEvents[{}].args.Process Group Ranks", op.event);
  for (RankId m : members) {
    if (m >= ranks_) {
      throw trace_error(p.file, where,
                        fmt::format("rank {} of group [{}] is not among the {} replayed ranks", m,
                                    fmt::join(members, ", "), ranks_));
    }
  }
  if (std::find(members.begin(), members.end(), rank) == members.end()) {
    throw trace_error(p.file, where,
                      fmt::format("replicated on rank {}, the group [{}] does not hold it: "
                                  "only groups of all ranks or holding every rank replicate",
                                  rank, fmt::join(members, ", ")));
  }
  const CommId comm = out_.trace.graph.add_communicator(members);
  if (!groups_.count(members)) {
    groups_.emplace(members, out_.trace.groups.size());
    const std::string name = !op.group_name.empty() ? op.group_name : group_label(members);
    out_.trace.groups.push_back({name, chakra::dim_of_group_name(op.group_name), comm});
  }
  return comm;
}

void GraphEmitter::emit(RankId rank, uint32_t program) {
  const RankProgram& p = out_.programs[program];
  EventGraph& g = out_.trace.graph;
  std::vector<OpId> ids(p.ops.size(), kNoOp);
  std::vector<OpId> deps;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const ProgramOp& op = p.ops[i];
    deps.clear();
    for (uint32_t d : op.deps) deps.push_back(ids[d]);
    OpContext ctx{rank, stream(p.streams[op.stream]), op.phase};
    switch (op.kind) {
      case ProgramOpKind::kHost:
      case ProgramOpKind::kKernel:
        ids[i] = g.add_recorded_compute(ctx, op.label, op.duration_s, 0, 0, deps);
        break;
      case ProgramOpKind::kCollective:
        ids[i] = g.add_collective(ctx, op.label, op.collective, communicator(rank, p, op), op.bytes,
                                  chakra::dim_of_group_name(op.group_name), deps);
        break;
      case ProgramOpKind::kCopy:
        ids[i] = g.add_copy(ctx, op.label, op.direction, 0, op.bytes, deps);
        break;
    }
    out_.trace.node_id.push_back(op.event);
  }
}

std::string describe(const Op& op, double bytes) {
  return fmt::format("{} of {:.0f} bytes", to_string(op.collective), bytes);
}

// Every member must issue the same collectives on a communicator, in the same order.
void check_collectives(const KinetoTrace& t) {
  const EventGraph& g = t.trace.graph;
  std::map<std::pair<CommId, RankId>, std::vector<OpId>> issued;
  for (OpId id = 0; id < g.size(); ++id) {
    const Op& op = g.op(id);
    if (op.kind == OpKind::kCollective) issued[{op.peer, op.rank}].push_back(id);
  }
  for (CommId c = 0; c < g.num_communicators(); ++c) {
    const auto& members = g.communicator(c);
    const auto& first = issued[{c, members.front()}];
    for (RankId m : members) {
      const auto& mine = issued[{c, m}];
      const std::string& file = t.trace.files[m];
      for (size_t k = 0; k < std::max(mine.size(), first.size()); ++k) {
        if (k >= mine.size() || k >= first.size()) {
          const bool short_here = k >= mine.size();
          const OpId extra = short_here ? first[k] : mine[k];
          throw trace_error(short_here ? file : t.trace.files[members.front()],
                            fmt::format("traceEvents[{}]", t.trace.node_id[extra]),
                            fmt::format("rank {} issues {} collectives on group {} but rank {} "
                                        "issues {}: the groups do not match across ranks",
                                        members.front(), first.size(), c, m, mine.size()));
        }
        const Op& a = g.op(first[k]);
        const Op& b = g.op(mine[k]);
        if (a.collective != b.collective || a.amount != b.amount) {
          throw trace_error(file, fmt::format("traceEvents[{}]", t.trace.node_id[mine[k]]),
                            fmt::format("collective {} on group [{}] is {} here but {} on rank "
                                        "{} ({}, traceEvents[{}])",
                                        k, fmt::join(members, ", "), describe(b, b.amount),
                                        describe(a, a.amount), members.front(),
                                        t.trace.files[members.front()], t.trace.node_id[first[k]]));
        }
      }
    }
  }
}

KinetoTrace build(std::vector<KinetoRank> files, const KinetoOptions& options) {
  KinetoTrace t;
  t.replicated = files.size() == 1 && options.ranks > 1;
  const uint32_t ranks =
      t.replicated ? static_cast<uint32_t>(options.ranks) : static_cast<uint32_t>(files.size());
  t.source_world_size = files.front().world_size;
  t.gpu = files.front().gpu;
  int64_t step = options.step;
  for (const KinetoRank& f : files) {
    t.programs.push_back(build_program(f, step));
    if (step < 0) step = std::stoll(t.programs.front().step_name.substr(13));
    if (options.gemm_seconds) model_gemms(t.programs.back(), options.gemm_seconds, &t.gemm_timing);
  }
  if (options.gemm_seconds) t.trace.compute = chakra::ComputeSource::kModel;
  t.step_name = t.programs.front().step_name;
  t.trace.graph = EventGraph(ranks);
  size_t total = 0;
  for (const RankProgram& p : t.programs) total += p.ops.size();
  t.trace.graph.reserve(t.replicated ? total * ranks : total, 0);
  for (RankId r = 0; r < ranks; ++r) {
    t.program_of_rank.push_back(t.replicated ? 0 : r);
    t.trace.files.push_back(files[t.program_of_rank.back()].file);
  }
  GraphEmitter emitter(t, ranks);
  for (RankId r = 0; r < ranks; ++r) emitter.emit(r, t.program_of_rank[r]);
  check_collectives(t);
  if (t.replicated) {
    t.trace.warnings.push_back(fmt::format(
        "REPLICATED: one rank's trace ({}, rank {} of {}) replayed on {} ranks: every rank runs "
        "the same program",
        files.front().file, files.front().rank, files.front().world_size, ranks));
  }
  return t;
}

}  // namespace

bool is_kineto_input(const std::vector<std::string>& args) {
  if (args.size() != 1) return true;
  const std::string& a = args.front();
  std::error_code ec;
  if (fs::is_directory(a, ec) || (is_glob(a) && !fs::exists(a, ec))) return true;
  return fs::is_regular_file(a, ec) && is_kineto_file(a);
}

std::vector<std::string> expand_trace_paths(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    std::error_code ec;
    std::vector<std::string> found;
    if (fs::is_directory(a, ec)) {
      found = directory_files(a);
    } else if (fs::is_regular_file(a, ec)) {
      found.push_back(a);
    } else if (is_glob(a)) {
      found = glob_files(a);
    }
    if (found.empty()) {
      throw trace_error(
          a, "TRACE",
          fs::is_directory(a, ec) ? "the directory holds no Kineto trace" : "names no trace file");
    }
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

KinetoTrace read_kineto_trace(const std::vector<std::string>& args, const KinetoOptions& options) {
  std::vector<KinetoRank> files;
  for (const std::string& path : expand_trace_paths(args)) {
    files.push_back(read_kineto_file(path));
  }
  return build(ranked(std::move(files), options), options);
}

KinetoTrace read_kineto_bytes(std::string_view bytes, const KinetoOptions& options) {
  std::vector<KinetoRank> files;
  files.push_back(parse_kineto(bytes, "<memory>", size_t{64} << 20));
  return build(ranked(std::move(files), options), options);
}

}  // namespace racksim::kineto
