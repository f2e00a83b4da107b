#include "traces/kineto_events.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "traces/kineto_collectives.h"
#include "traces/kineto_gemm.h"

namespace racksim::kineto {

namespace {

using nlohmann::json;

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Inflates up to `max_bytes`; `complete` says whether the stream ended properly.
std::string inflate_gzip(std::string_view bytes, size_t max_bytes, bool* complete,
                         std::string* problem) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("zlib: inflateInit2");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(std::min<size_t>(bytes.size(), UINT32_MAX));
  std::string out;
  char buffer[1 << 16];
  int rc = Z_OK;
  *complete = false;
  while (out.size() < max_bytes) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (rc == Z_STREAM_END) {
      *complete = true;
      break;
    }
    if (rc != Z_OK) {
      if (rc != Z_BUF_ERROR && z.msg) *problem = z.msg;
      break;
    }
  }
  inflateEnd(&z);
  return out;
}

int line_of(const std::string& text, size_t byte) {
  byte = std::min(byte, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + byte, '\n'));
}

DataType data_type(double element_bytes, std::string_view name) {
  if (name.find("BFloat16") != std::string_view::npos ||
      name.find("bfloat16") != std::string_view::npos) {
    return DataType::kBf16;
  }
  if (element_bytes == 2) return DataType::kFp16;
  if (element_bytes == 1) return DataType::kFp8;
  return DataType::kFp32;
}

// Reads one event's fields, each checked, with errors naming traceEvents[i] and the field.
class EventReader {
 public:
  EventReader(const std::string& file, size_t index, const json& e)
      : file_(file), index_(index), e_(e) {}

  [[noreturn]] void fail(const std::string& field, const std::string& detail) const {
    throw InputError({file_, 0, 0}, fmt::format("traceEvents[{}].{}", index_, field),
                     detail + event_name());
  }

  const json* find(const json& object, const char* key) const {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  double number(const json& object, const char* key, const std::string& field, bool required,
                double fallback = -1) const {
    const json* v = find(object, key);
    if (!v) {
      if (required) fail(field, "missing");
      return fallback;
    }
    if (!v->is_number()) fail(field, fmt::format("is {}, expected a number", v->type_name()));
    const double d = v->get<double>();
    if (!std::isfinite(d)) fail(field, "is not finite");
    return d;
  }

  double non_negative(const json& object, const char* key, const std::string& field,
                      bool required) const {
    const double d = number(object, key, field, required);
    if (find(object, key) && d < 0) fail(field, fmt::format("is {}, expected >= 0", d));
    return d;
  }

  std::string text(const json& object, const char* key, const std::string& field) const {
    const json* v = find(object, key);
    if (!v) return "";
    if (!v->is_string()) fail(field, fmt::format("is {}, expected a string", v->type_name()));
    return v->get<std::string>();
  }

  std::vector<RankId> ranks(const json& object, const char* key, const std::string& field) const;
  CollectiveArgs kernel_collective(const json& args) const;
  CollectiveArgs annotation_collective(const json& args) const;
  std::vector<std::vector<double>> input_dims(const json& args) const;
  std::pair<double, DataType> input_type(const json& args) const;
  std::optional<GemmCall> gemm_call(std::string_view op, const json& args) const;

 private:
  std::string event_name() const {
    const json* name = find(e_, "name");
    return name && name->is_string() ? fmt::format(" (event '{}')", name->get<std::string>()) : "";
  }

  const std::string& file_;
  size_t index_;
  const json& e_;
};

// A rank list: a JSON array of integers, or a string "[0, 1, 2]" as PyTorch writes it.
std::vector<RankId> EventReader::ranks(const json& object, const char* key,
                                       const std::string& field) const {
  const json* v = find(object, key);
  if (!v) return {};
  json list = *v;
  if (v->is_string()) {
    list = json::parse(v->get<std::string>(), nullptr, false);
    if (list.is_discarded())
      fail(field, fmt::format("'{}' is not a rank list", v->get<std::string>()));
  }
  if (!list.is_array()) fail(field, "expected a list of ranks");
  std::vector<RankId> result;
  for (const json& r : list) {
    if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > 1'000'000'000) {
      fail(field, fmt::format("{} is not a rank", r.dump()));
    }
    result.push_back(static_cast<RankId>(r.get<int64_t>()));
  }
  return result;
}

CollectiveArgs EventReader::kernel_collective(const json& args) const {
  CollectiveArgs c;
  c.name = text(args, "Collective name", "args.Collective name");
  c.in_elements = non_negative(args, "In msg nelems", "args.In msg nelems", false);
  c.out_elements = non_negative(args, "Out msg nelems", "args.Out msg nelems", false);
  const std::string dtype = text(args, "dtype", "args.dtype");
  c.element_bytes = dtype_bytes(dtype);
  if (!dtype.empty() && c.element_bytes == 0)
    fail("args.dtype", fmt::format("unknown dtype '{}'", dtype));
  c.dtype = data_type(c.element_bytes, dtype);
  c.group_size =
      static_cast<int>(std::min(non_negative(args, "Group size", "args.Group size", false), 1e9));
  c.group_name = text(args, "Process Group Name", "args.Process Group Name");
  c.ranks = ranks(args, "Process Group Ranks", "args.Process Group Ranks");
  return c;
}

// Input Dims: one list of sizes per input ([] for a non-tensor input).
std::vector<std::vector<double>> EventReader::input_dims(const json& args) const {
  std::vector<std::vector<double>> result;
  const json* dims = find(args, "Input Dims");
  if (!dims) return result;
  if (!dims->is_array()) fail("args.Input Dims", "expected a list of shapes");
  for (const json& shape : *dims) {
    if (!shape.is_array()) fail("args.Input Dims", "expected a list of shapes");
    std::vector<double>& sizes = result.emplace_back();
    for (const json& d : shape) {
      if (!d.is_number() || d.get<double>() < 0 || !std::isfinite(d.get<double>()))
        fail("args.Input Dims", d.dump() + " is not a size");
      sizes.push_back(d.get<double>());
    }
  }
  return result;
}

// The first Input type's element size and dtype (0 bytes when unknown).
std::pair<double, DataType> EventReader::input_type(const json& args) const {
  const json* types = find(args, "Input type");
  if (!types || !types->is_array() || types->empty() || !(*types)[0].is_string())
    return {0.0, DataType::kFp32};
  const std::string name = (*types)[0].get<std::string>();
  const double bytes = dtype_bytes(name);
  return {bytes, data_type(bytes, name)};
}

// nccl:* annotations (older PyTorch): the op name, Input Dims [[d0, d1, ...]] and Input type.
CollectiveArgs EventReader::annotation_collective(const json& args) const {
  CollectiveArgs c;
  if (find(args, "Input Dims")) {
    double elements = 0;
    for (const std::vector<double>& shape : input_dims(args)) {
      double n = 1;
      for (double d : shape) n *= d;
      if (!shape.empty()) elements += n;
    }
    if (!std::isfinite(elements)) fail("args.Input Dims", "is too large");
    c.in_elements = elements;
  }
  std::tie(c.element_bytes, c.dtype) = input_type(args);
  return c;
}

// aten::mm, addmm, bmm, matmul, linear: the GEMM's shape from Input Dims, if they fit.
std::optional<GemmCall> EventReader::gemm_call(std::string_view op, const json& args) const {
  const auto shape = gemm_shape(op, input_dims(args));
  if (!shape) return std::nullopt;
  GemmCall g;
  g.shape = *shape;
  g.dtype = input_type(args).second;
  return g;
}

EventCategory category_of(std::string_view cat, bool* kept) {
  *kept = true;
  if (cat == "kernel") return EventCategory::kKernel;
  if (cat == "cuda_runtime" || cat == "cuda_driver") return EventCategory::kRuntime;
  if (cat == "gpu_memcpy") return EventCategory::kMemcpy;
  if (cat == "gpu_memset") return EventCategory::kMemset;
  if (cat == "cuda_sync") return EventCategory::kSync;
  if (cat == "user_annotation") return EventCategory::kUserAnnotation;
  if (cat == "cpu_op") return EventCategory::kCpuOp;
  *kept = false;
  return EventCategory::kCpuOp;
}

int64_t tid_of(const json& tid) {
  if (tid.is_number_integer()) return tid.get<int64_t>();
  if (tid.is_string())
    return static_cast<int64_t>(std::hash<std::string>{}(tid.get<std::string>()) >> 1);
  return 0;
}

// A synchronization's ids. Context and device syncs carry stream -1; only a stream wait names
// both ends.
void read_sync_ids(const EventReader& r, const json& args, Event& ev) {
  auto id = [&](const char* key) {
    return static_cast<int64_t>(
        std::clamp(r.number(args, key, std::string("args.") + key, false), -1.0, 1e15));
  };
  ev.correlation = id("correlation");
  ev.stream = id("stream");
  ev.wait_on_stream = id("wait_on_stream");
  ev.wait_record_correlation = id("wait_on_cuda_event_record_corr_id");
}

// What the event calls that racksim models: an NCCL collective (its kernel or its annotation)
// or a GEMM with its shapes.
void read_calls(KinetoRank& rank, const EventReader& r, const json& args, Event& ev) {
  const EventCategory category = ev.category;
  const bool nccl_kernel = category == EventCategory::kKernel && is_nccl_kernel_name(ev.name);
  const bool nccl_annotation =
      (category == EventCategory::kUserAnnotation || category == EventCategory::kCpuOp) &&
      ev.name.rfind("nccl:", 0) == 0;
  if (nccl_kernel || nccl_annotation) {
    CollectiveArgs c = nccl_kernel ? r.kernel_collective(args) : r.annotation_collective(args);
    if (nccl_annotation) c.name = ev.name.substr(5);
    ev.collective = static_cast<int32_t>(rank.collectives.size());
    rank.collectives.push_back(std::move(c));
  }
  if (category == EventCategory::kCpuOp && is_gemm_op(ev.name)) {
    if (auto g = r.gemm_call(ev.name, args)) {
      ev.gemm = static_cast<int32_t>(rank.gemms.size());
      rank.gemms.push_back(*g);
    }
  }
}

void read_event(KinetoRank& rank, size_t index, const json& e) {
  if (!e.is_object()) return;
  const auto ph = e.find("ph");
  const auto cat = e.find("cat");
  if (ph == e.end() || *ph != "X" || cat == e.end() || !cat->is_string()) return;
  bool kept = false;
  const EventCategory category = category_of(cat->get_ref<const std::string&>(), &kept);
  if (!kept) return;
  const EventReader r(rank.file, index, e);
  Event ev;
  ev.index = static_cast<uint32_t>(index);
  ev.category = category;
  ev.name = r.text(e, "name", "name");
  ev.ts_us = r.number(e, "ts", "ts", true);
  ev.dur_us = r.non_negative(e, "dur", "dur", true);
  // Microseconds: beyond these the trace is not a recording of a run (and sums would overflow).
  if (std::abs(ev.ts_us) > 1e18) r.fail("ts", fmt::format("{} us is out of range", ev.ts_us));
  if (ev.dur_us > 1e15) r.fail("dur", fmt::format("{} us is out of range", ev.dur_us));
  if (const auto tid = e.find("tid"); tid != e.end()) ev.tid = tid_of(*tid);
  static const json kEmpty = json::object();
  const auto a = e.find("args");
  if (a != e.end() && !a->is_object() && !a->is_null()) r.fail("args", "expected an object");
  const json& args = a != e.end() && a->is_object() ? *a : kEmpty;
  const bool gpu = category == EventCategory::kKernel || category == EventCategory::kMemcpy ||
                   category == EventCategory::kMemset;
  if (gpu || category == EventCategory::kRuntime) {
    ev.correlation = static_cast<int64_t>(
        std::min(r.non_negative(args, "correlation", "args.correlation", false), 1e15));
  }
  if (gpu) {
    ev.stream =
        static_cast<int64_t>(std::min(r.non_negative(args, "stream", "args.stream", true), 1e15));
  }
  if (category == EventCategory::kSync) read_sync_ids(r, args, ev);
  if (category == EventCategory::kMemcpy || category == EventCategory::kMemset) {
    ev.bytes = r.non_negative(args, "bytes", "args.bytes", false);
  }
  read_calls(rank, r, args, ev);
  rank.events.push_back(std::move(ev));
}

void read_distributed_info(KinetoRank& rank, const json& info) {
  const EventReader r(rank.file, 0, info);
  auto fail = [&](const std::string& field, const std::string& detail) {
    throw InputError({rank.file, 0, 0}, "distributedInfo." + field, detail);
  };
  if (!info.is_object()) fail("", "expected an object");
  const double world = r.number(info, "world_size", "world_size", false);
  const double me = r.number(info, "rank", "rank", false);
  if (world != -1 && (world < 1 || world > 1e9 || world != std::floor(world)))
    fail("world_size", fmt::format("{} is not a rank count", world));
  if (me != -1 && (me < 0 || me != std::floor(me) || (world > 0 && me >= world))) {
    fail("rank", fmt::format("{} is not a rank of a world of {}", me, world));
  }
  rank.world_size = static_cast<int>(world);
  rank.rank = static_cast<int>(me);
  const auto pgs = info.find("pg_config");
  if (pgs == info.end() || !pgs->is_array()) return;
  for (size_t i = 0; i < pgs->size(); ++i) {
    const json& pg = (*pgs)[i];
    if (!pg.is_object()) fail(fmt::format("pg_config[{}]", i), "expected an object");
    ProcessGroupConfig g;
    const auto name = pg.find("pg_name");
    if (name != pg.end()) g.name = name->is_string() ? name->get<std::string>() : name->dump();
    const auto desc = pg.find("pg_desc");
    if (desc != pg.end() && desc->is_string()) g.description = desc->get<std::string>();
    g.ranks = EventReader(rank.file, i, pg).ranks(pg, "ranks", "ranks");
    for (RankId m : g.ranks) {
      if (world > 0 && m >= world)
        fail(fmt::format("pg_config[{}].ranks", i),
             fmt::format("rank {} is outside the world of {}", m, world));
    }
    rank.groups.push_back(std::move(g));
  }
}

}  // namespace

std::string decompressed(std::string_view bytes, const std::string& name, size_t max_bytes) {
  if (!is_gzip(bytes)) return std::string(bytes);
  bool complete = false;
  std::string problem;
  std::string out = inflate_gzip(bytes, max_bytes, &complete, &problem);
  if (!complete) {
    throw InputError({name, 0, 0}, "",
                     out.size() >= max_bytes
                         ? fmt::format("decompresses to more than {} bytes", max_bytes)
                         : fmt::format("gzip data is corrupt or truncated{}",
                                       problem.empty() ? "" : " (" + problem + ")"));
  }
  return out;
}

bool looks_like_kineto(std::string_view bytes) {
  std::string head;
  if (is_gzip(bytes)) {
    bool complete = false;
    std::string problem;
    head = inflate_gzip(bytes, 1 << 16, &complete, &problem);
  } else {
    head = std::string(bytes.substr(0, 1 << 16));
  }
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || head[first] != '{') return false;
  return head.find("\"traceEvents\"") != std::string::npos ||
         head.find("\"schemaVersion\"") != std::string::npos ||
         head.find("\"distributedInfo\"") != std::string::npos;
}

bool is_kineto_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(1 << 16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return looks_like_kineto(head);
}

KinetoRank parse_kineto(std::string_view bytes, const std::string& file, size_t max_bytes) {
  const std::string text = decompressed(bytes, file, max_bytes);
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError({file, line_of(text, e.byte), 0}, "",
                     fmt::format("not valid JSON (truncated?): {}", e.what()));
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw InputError({file, 0, 0}, "", fmt::format("not valid JSON: {}", e.what()));
  }
  KinetoRank rank;
  rank.file = file;
  if (!document.is_object()) throw InputError({file, 0, 0}, "", "expected a JSON object");
  const auto events = document.find("traceEvents");
  if (events == document.end() || !events->is_array()) {
    throw InputError({file, 0, 0}, "traceEvents", "missing or not a list: not a Kineto trace");
  }
  if (const auto info = document.find("distributedInfo"); info != document.end()) {
    read_distributed_info(rank, *info);
  }
  if (const auto props = document.find("deviceProperties");
      props != document.end() && props->is_array() && !props->empty() && (*props)[0].is_object() &&
      (*props)[0].contains("name") && (*props)[0]["name"].is_string()) {
    rank.gpu = (*props)[0]["name"].get<std::string>();
  }
  rank.events.reserve(events->size());
  for (size_t i = 0; i < events->size(); ++i) read_event(rank, i, (*events)[i]);
  return rank;
}

KinetoRank read_kineto_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", "cannot be opened");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parse_kineto(bytes.str(), path);
}

double dtype_bytes(std::string_view name) {
  std::string n(name);
  if (n.rfind("c10::", 0) == 0) n = n.substr(5);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "float" || n == "float32" || n == "int" || n == "int32" || n == "uint32") return 4;
  if (n == "double" || n == "float64" || n == "long" || n == "int64" || n == "long int" ||
      n == "uint64") {
    return 8;
  }
  if (n == "half" || n == "float16" || n == "bfloat16" || n == "short" || n == "int16") return 2;
  if (n == "byte" || n == "char" || n == "unsigned char" || n == "signed char" || n == "bool" ||
      n == "uint8" || n == "int8" || n == "float8_e4m3fn" || n == "float8_e5m2") {
    return 1;
  }
  return 0;
}

}  // namespace racksim::kineto
