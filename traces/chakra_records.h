// The framing of a Chakra execution-trace (ET) file: a varint32 length and a GlobalMetadata
// message, then (varint32 length, Node message) pairs until the end of the file. Files may be
// gzipped (detected by the magic bytes 1f 8b). See the Chakra ET schema (mlcommons/chakra,
// schema/protobuf/et_def.proto, MIT licence; docs/sources.md §9).
//
// Reading streams the file record by record (memory stays proportional to one record), and
// every problem is an InputError naming the file, the record and its byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "proto/chakra_et.pb.h"

namespace racksim::chakra {

// Where a record sits in its file, for messages.
struct RecordPlace {
  uint64_t index = 0;   // 0: the GlobalMetadata; 1, 2, ...: the nodes in file order
  uint64_t offset = 0;  // byte offset of its length prefix (in the uncompressed stream)
};

struct RecordHandlers {
  std::function<void(const ChakraProtoMsg::GlobalMetadata&)> metadata;
  std::function<void(const ChakraProtoMsg::Node&, const RecordPlace&)> node;
  std::function<void(const std::string&)> warn;
};

// Reads the ET file at `path`. Stops at the end of the file, or at a zero length (as Chakra's
// reference reader does; a warning says how many bytes were left). Throws InputError when the
// file cannot be read, is empty, ends inside a record, or a record does not parse.
void read_et_file(const std::string& path, const RecordHandlers& handlers);

// The same for bytes in memory; `name` stands for the file in messages.
void read_et_bytes(std::string_view bytes, const std::string& name, const RecordHandlers& handlers);

// Writes length-prefixed records to a stream (flushed when destroyed).
class RecordWriter {
 public:
  explicit RecordWriter(std::ostream& out) : raw_(&out), coded_(&raw_) {}
  void write(const google::protobuf::MessageLite& message);

 private:
  google::protobuf::io::OstreamOutputStream raw_;
  google::protobuf::io::CodedOutputStream coded_;  // destroyed first: flushes into raw_
};

// "" when every field of `message` (and of its attributes) has the wire type its number
// declares; else what is wrong ("field 'id' (1) is length-delimited, expected varint").
// Protobuf keeps such fields as unknown fields instead of failing the parse.
std::string wire_type_problem(const google::protobuf::Message& message);

}  // namespace racksim::chakra
