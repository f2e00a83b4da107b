// libFuzzer target for the Kineto reader: any bytes, gzipped or not, read as one rank's
// PyTorch profiler trace and built into an event graph, as one rank and replicated on two.
// Bad input must end in an InputError (the CLI's exit code 2); any other exception, a crash
// or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "traces/kineto_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (int ranks : {-1, 2}) {
    try {
      racksim::kineto::read_kineto_bytes(bytes, {-1, ranks});
    } catch (const racksim::InputError&) {
      // a clear error for a bad trace: what we want
    }
  }
  return 0;
}
