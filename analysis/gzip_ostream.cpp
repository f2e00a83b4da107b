#include "analysis/gzip_ostream.h"

#include <stdexcept>

namespace racksim::analysis {

namespace {
constexpr int kGzipWindowBits = 15 + 16;  // 15: the largest window; +16: a gzip wrapper
constexpr int kLevel = 6;                 // zlib's default: most of the gain, fast
}  // namespace

GzipStreamBuf::GzipStreamBuf(std::ostream& sink) : sink_(sink) {
  if (deflateInit2(&zs_, kLevel, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  setp(in_.data(), in_.data() + in_.size());
}

GzipStreamBuf::~GzipStreamBuf() {
  deflateEnd(&zs_);
}

bool GzipStreamBuf::deflate_input(int flush) {
  zs_.next_in = reinterpret_cast<Bytef*>(pbase());
  zs_.avail_in = static_cast<uInt>(pptr() - pbase());
  int status = Z_OK;
  do {
    zs_.next_out = reinterpret_cast<Bytef*>(out_.data());
    zs_.avail_out = static_cast<uInt>(out_.size());
    status = deflate(&zs_, flush);
    if (status == Z_STREAM_ERROR) return false;
    sink_.write(out_.data(), static_cast<std::streamsize>(out_.size() - zs_.avail_out));
    if (!sink_) return false;
  } while (zs_.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END));
  setp(in_.data(), in_.data() + in_.size());
  return true;
}

GzipStreamBuf::int_type GzipStreamBuf::overflow(int_type ch) {
  if (finished_ || !deflate_input(Z_NO_FLUSH)) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int GzipStreamBuf::sync() {
  return finished_ || deflate_input(Z_NO_FLUSH) ? 0 : -1;
}

bool GzipStreamBuf::finish() {
  if (finished_) return true;
  finished_ = true;
  return deflate_input(Z_FINISH);
}

}  // namespace racksim::analysis
