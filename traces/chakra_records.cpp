#include "traces/chakra_records.h"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/unknown_field_set.h>

#include "common/error.h"

namespace racksim::chakra {

namespace {

namespace io = google::protobuf::io;
using google::protobuf::FieldDescriptor;
using google::protobuf::UnknownField;

// No real record comes near this; a larger length means the bytes are not an ET file.
constexpr uint32_t kMaxRecordBytes = 1u << 30;
// A gzip file has a 10-byte header and an 8-byte trailer.
constexpr size_t kGzipMinBytes = 18;
// CodedInputStream counts positions in an int: start a new one well before that overflows.
constexpr int kRestartAfterBytes = 1 << 30;

InputError file_error(const std::string& file, const std::string& detail) {
  return InputError(SourceLocation{file, 0, 0}, "", detail);
}

std::string record_name(const RecordPlace& place) {
  return place.index == 0 ? fmt::format("record 0 (the GlobalMetadata, at byte {})", place.offset)
                          : fmt::format("record {} (node #{} in file order, at byte {})",
                                        place.index, place.index, place.offset);
}

bool starts_with_gzip_magic(io::ZeroCopyInputStream& in) {
  const void* data = nullptr;
  int size = 0;
  while (in.Next(&data, &size)) {
    if (size == 0) continue;
    const auto* bytes = static_cast<const unsigned char*>(data);
    const bool gzip = size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
    in.BackUp(size);
    return gzip;
  }
  return false;
}

UnknownField::Type wire_type_of(const FieldDescriptor& field) {
  switch (field.type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return UnknownField::TYPE_FIXED64;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return UnknownField::TYPE_FIXED32;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE:
      return UnknownField::TYPE_LENGTH_DELIMITED;
    case FieldDescriptor::TYPE_GROUP:
      return UnknownField::TYPE_GROUP;
    default:
      return UnknownField::TYPE_VARINT;
  }
}

std::string_view wire_type_name(UnknownField::Type type) {
  switch (type) {
    case UnknownField::TYPE_VARINT:
      return "varint";
    case UnknownField::TYPE_FIXED32:
      return "fixed32";
    case UnknownField::TYPE_FIXED64:
      return "fixed64";
    case UnknownField::TYPE_LENGTH_DELIMITED:
      return "length-delimited";
    case UnknownField::TYPE_GROUP:
      return "group";
  }
  return "?";
}

// Only the message's own fields: a field number it declares, kept as unknown, had the wrong
// wire type.
std::string own_wire_type_problem(const google::protobuf::Message& message) {
  const auto& unknown = message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const UnknownField& f = unknown.field(i);
    const FieldDescriptor* field = message.GetDescriptor()->FindFieldByNumber(f.number());
    if (field == nullptr) continue;  // a field of a newer schema: ignored
    return fmt::format("field '{}' ({}) of {} is {}, expected {}", field->name(), f.number(),
                       message.GetDescriptor()->name(), wire_type_name(f.type()),
                       wire_type_name(wire_type_of(*field)));
  }
  return "";
}

template <typename Attrs>
std::string attrs_wire_type_problem(const Attrs& attrs) {
  for (const auto& attr : attrs) {
    std::string problem = own_wire_type_problem(attr);
    if (!problem.empty()) return fmt::format("attribute '{}': {}", attr.name(), problem);
  }
  return "";
}

// What went wrong below the records (a corrupt gzip stream), or "".
using StreamProblem = std::function<std::string()>;

class RecordReader {
 public:
  RecordReader(io::ZeroCopyInputStream& in, const std::string& file, const RecordHandlers& h,
               StreamProblem problem)
      : in_(in), file_(file), handlers_(h), problem_(std::move(problem)) {}

  void run() {
    bool done = false;
    while (!done) {
      io::CodedInputStream coded(&in_);
      coded.SetTotalBytesLimit(INT_MAX);
      while (!done && coded.CurrentPosition() < kRestartAfterBytes) done = !read_one(coded);
      base_ += static_cast<uint64_t>(coded.CurrentPosition());
    }
    if (index_ == 0)
      throw file_error(file_, "is empty: a Chakra ET file starts with a GlobalMetadata");
    if (index_ == 1) handlers_.warn(fmt::format("{}: holds no nodes", file_));
  }

 private:
  // Reads one record; false at the end of the records.
  bool read_one(io::CodedInputStream& coded) {
    const void* data = nullptr;
    int size = 0;
    if (!coded.GetDirectBufferPointer(&data, &size)) {  // the end of the file, or of what decodes
      check_stream();
      return false;
    }
    const RecordPlace place{index_, base_ + static_cast<uint64_t>(coded.CurrentPosition())};
    uint32_t length = 0;
    if (!coded.ReadVarint32(&length)) {
      check_stream();
      throw file_error(file_, fmt::format("{}: the length prefix is cut off or malformed (a "
                                          "truncated file?)",
                                          record_name(place)));
    }
    if (length == 0) {
      stop_at_zero_length(coded, place);
      return false;
    }
    if (length > kMaxRecordBytes) {
      throw file_error(file_, fmt::format("{}: announces {} bytes, more than any Chakra record "
                                          "(corrupt, or not a Chakra ET file)",
                                          record_name(place), length));
    }
    if (!coded.ReadString(&buffer_, static_cast<int>(length))) {
      check_stream();
      throw file_error(file_, fmt::format("{}: announces {} bytes but the file ends before them "
                                          "(truncated file)",
                                          record_name(place), length));
    }
    place.index == 0 ? parse_metadata(place) : parse_node(place);
    ++index_;
    return true;
  }

  void check_stream() const {
    const std::string problem = problem_ ? problem_() : "";
    if (!problem.empty()) throw file_error(file_, problem);
  }

  void stop_at_zero_length(io::CodedInputStream& coded, const RecordPlace& place) {
    const void* data = nullptr;
    int size = 0;
    if (coded.GetDirectBufferPointer(&data, &size)) {
      handlers_.warn(
          fmt::format("{}: {} has length 0; reading stopped there, as Chakra's "
                      "reader does, and the rest of the file is ignored",
                      file_, record_name(place)));
    }
  }

  void parse_metadata(const RecordPlace& place) {
    ChakraProtoMsg::GlobalMetadata metadata;
    if (!metadata.ParseFromString(buffer_)) {
      throw file_error(
          file_, fmt::format("{}: does not parse as a Chakra GlobalMetadata", record_name(place)));
    }
    std::string problem = own_wire_type_problem(metadata);
    if (problem.empty()) problem = attrs_wire_type_problem(metadata.attr());
    if (!problem.empty())
      throw file_error(file_, fmt::format("{}: {}", record_name(place), problem));
    if (handlers_.metadata) handlers_.metadata(metadata);
  }

  void parse_node(const RecordPlace& place) {
    if (!node_.ParseFromString(buffer_)) {
      throw file_error(file_, fmt::format("{}: does not parse as a Chakra Node (corrupt bytes or "
                                          "wrong field types)",
                                          record_name(place)));
    }
    const std::string problem = wire_type_problem(node_);
    if (!problem.empty()) {
      throw file_error(file_,
                       fmt::format("{}, node id {}: {}", record_name(place), node_.id(), problem));
    }
    handlers_.node(node_, place);
  }

  io::ZeroCopyInputStream& in_;
  const std::string& file_;
  const RecordHandlers& handlers_;
  StreamProblem problem_;
  uint64_t base_ = 0;
  uint64_t index_ = 0;
  std::string buffer_;
  ChakraProtoMsg::Node node_;  // reused: its allocations are kept from node to node
};

// `gzip_size`: the gzip trailer's ISIZE (the uncompressed size mod 2^32), when known.
// GzipInputStream reports a cut-off stream as a clean end, so the sizes are compared.
void read_stream(io::ZeroCopyInputStream& raw, const std::string& file,
                 const RecordHandlers& handlers, std::optional<uint32_t> gzip_size) {
  if (!starts_with_gzip_magic(raw)) {
    RecordReader(raw, file, handlers, nullptr).run();
    return;
  }
  io::GzipInputStream gzip(&raw, io::GzipInputStream::GZIP);
  // A corrupt or cut-off gzip stream ends the records early: say so instead of replaying part.
  auto problem = [&gzip, gzip_size]() -> std::string {
    if (gzip.ZlibErrorCode() < 0) {
      const char* message = gzip.ZlibErrorMessage();
      return fmt::format("gzip data is corrupt or truncated ({})",
                         message != nullptr ? message : "zlib error");
    }
    const auto size = static_cast<uint32_t>(gzip.ByteCount());
    if (gzip_size && size != *gzip_size) {
      return fmt::format(
          "gzip data is truncated or corrupt: it decompresses to {} bytes, its "
          "trailer says {} (mod 2^32)",
          size, *gzip_size);
    }
    return "";
  };
  RecordReader(gzip, file, handlers, problem).run();
}

uint32_t little_endian_u32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
}

// The last 4 bytes of the file (a gzip file's ISIZE), read without moving the file offset.
std::optional<uint32_t> gzip_trailer_size(int fd) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < static_cast<off_t>(kGzipMinBytes) || ::lseek(fd, 0, SEEK_SET) != 0)
    return std::nullopt;
  char tail[4];
  if (::pread(fd, tail, 4, size - 4) != 4) return std::nullopt;
  return little_endian_u32(tail);
}

}  // namespace

std::string wire_type_problem(const google::protobuf::Message& message) {
  std::string problem = own_wire_type_problem(message);
  if (!problem.empty()) return problem;
  if (const auto* node = dynamic_cast<const ChakraProtoMsg::Node*>(&message)) {
    return attrs_wire_type_problem(node->attr());
  }
  return "";
}

void read_et_file(const std::string& path, const RecordHandlers& handlers) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw file_error(path, "cannot be opened");
  io::FileInputStream raw(fd);
  raw.SetCloseOnDelete(true);
  read_stream(raw, path, handlers, gzip_trailer_size(fd));
  if (raw.GetErrno() != 0) {
    throw file_error(path, fmt::format("read error (errno {})", raw.GetErrno()));
  }
}

void read_et_bytes(std::string_view bytes, const std::string& name,
                   const RecordHandlers& handlers) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) throw file_error(name, "is larger than 2 GiB");
  io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  std::optional<uint32_t> trailer;
  if (bytes.size() >= kGzipMinBytes) trailer = little_endian_u32(bytes.data() + bytes.size() - 4);
  read_stream(raw, name, handlers, trailer);
}

void RecordWriter::write(const google::protobuf::MessageLite& message) {
  coded_.WriteVarint32(static_cast<uint32_t>(message.ByteSizeLong()));
  message.SerializeWithCachedSizes(&coded_);
}

}  // namespace racksim::chakra
