// An std::ostream that writes gzip (RFC 1952) through zlib into another stream: timeline.json.gz
// is a tenth of timeline.json, and Perfetto opens it as is.
#pragma once

#include <array>
#include <ostream>
#include <streambuf>

#include <zlib.h>

namespace racksim::analysis {

class GzipStreamBuf : public std::streambuf {
 public:
  explicit GzipStreamBuf(std::ostream& sink);
  ~GzipStreamBuf() override;
  GzipStreamBuf(const GzipStreamBuf&) = delete;
  GzipStreamBuf& operator=(const GzipStreamBuf&) = delete;

  // Flushes the compressor and writes the gzip trailer; later writes fail. Returns false when
  // the sink reported an error.
  bool finish();

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  bool deflate_input(int flush);

  std::ostream& sink_;
  z_stream zs_{};
  std::array<char, 1 << 16> in_{};
  std::array<char, 1 << 16> out_{};
  bool finished_ = false;
};

// Runs `writer` on a stream whose bytes reach `sink` gzip-compressed. Throws on an error.
template <typename Writer>
void write_gzip(std::ostream& sink, Writer&& writer) {
  GzipStreamBuf buffer(sink);
  std::ostream out(&buffer);
  writer(out);
  out.flush();
  if (!buffer.finish() || !out) sink.setstate(std::ios::badbit);
}

}  // namespace racksim::analysis
