// libFuzzer target for the Chakra reader: any bytes, gzipped or not, read as one rank's .et
// file and built into an event graph. Bad input must end in an InputError (the CLI's exit
// code 2); any other exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "common/error.h"
#include "traces/chakra_reader.h"

// Protobuf logs every string with invalid UTF-8 it refuses; the refusal is what is tested.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (auto compute :
       {racksim::chakra::ComputeSource::kRecorded, racksim::chakra::ComputeSource::kModel}) {
    try {
      racksim::chakra::read_chakra_bytes(bytes, {compute, -1});
    } catch (const racksim::InputError&) {
      return 0;  // a clear error for a bad trace: what we want
    }
  }
  return 0;
}
