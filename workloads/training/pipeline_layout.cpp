#include "workloads/training/pipeline_layout.h"

#include <cctype>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace racksim {

namespace {

// Far above any real model (a million layers), low enough that a typo such as "t*99999999"
// is an error instead of an allocation that takes the machine down.
constexpr size_t kMaxUnrolledLayout = 1'000'000;

// The count after '*' at `pos`; advances `pos` past its digits.
size_t layout_repeat_count(std::string_view text, size_t& pos) {
  if (pos >= text.size() || text[pos] != '*') return 1;
  ++pos;
  const size_t start = pos;
  size_t count = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    count = count * 10 + static_cast<size_t>(text[pos] - '0');
    if (count > kMaxUnrolledLayout) {
      throw std::invalid_argument(
          fmt::format("repeats something {}... times; the layout unrolls to at most {} layers",
                      text.substr(start, pos + 1 - start), kMaxUnrolledLayout));
    }
    ++pos;
  }
  if (pos == start) throw std::invalid_argument("'*' must be followed by a count");
  return count;
}

void append_repeated(std::string& out, std::string_view piece, size_t times) {
  if (out.size() + piece.size() * times > kMaxUnrolledLayout) {
    throw std::invalid_argument(
        fmt::format("unrolls to more than {} layers and separators", kMaxUnrolledLayout));
  }
  for (size_t i = 0; i < times; ++i) out.append(piece);
}

// The string with its repetitions written out and its commas and spaces dropped.
std::string unroll_layout(std::string_view text) {
  std::string cleaned;
  for (char c : text) {
    if (c != ',' && !std::isspace(static_cast<unsigned char>(c))) cleaned.push_back(c);
  }
  std::string out;
  size_t pos = 0;
  while (pos < cleaned.size()) {
    if (cleaned[pos] == '(') {
      const size_t close = cleaned.find(')', pos);
      if (close == std::string::npos) throw std::invalid_argument("a '(' is never closed");
      const std::string_view group = std::string_view(cleaned).substr(pos + 1, close - pos - 1);
      if (group.find('(') != std::string_view::npos) {
        throw std::invalid_argument("groups in parentheses do not nest");
      }
      size_t after = close + 1;
      append_repeated(out, unroll_layout(group), layout_repeat_count(cleaned, after));
      pos = after;
    } else if (cleaned[pos] == ')' || cleaned[pos] == '*') {
      throw std::invalid_argument(
          fmt::format("unexpected '{}' at character {} (commas and spaces not counted)",
                      cleaned[pos], pos + 1));
    } else {
      const char layer = cleaned[pos++];
      append_repeated(out, std::string(1, layer), layout_repeat_count(cleaned, pos));
    }
  }
  return out;
}

// A character as an error message can show it: itself, or its byte in hex.
std::string printable(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return std::string(1, c);
  return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
}

void add_layout_layer(LayoutChunk& chunk, char layer, bool first_in_chunk, bool last_in_chunk) {
  switch (layer) {
    case 't':
      ++chunk.transformer_layers;
      chunk.layer_after_mtp = chunk.layer_after_mtp || chunk.mtp_modules > 0;
      return;
    case 'm':
      ++chunk.mtp_modules;
      return;
    case 'E':
      ++chunk.embeddings;
      chunk.embedding_first = chunk.embedding_first || first_in_chunk;
      return;
    case 'L':
      ++chunk.losses;
      chunk.loss_last = chunk.loss_last || last_in_chunk;
      return;
    default:
      throw std::invalid_argument(fmt::format(
          "unknown layer '{}' (E embedding, t transformer layer, m MTP module, L loss; '|' ends "
          "a chunk)",
          printable(layer)));
  }
}

}  // namespace

std::vector<LayoutChunk> parse_pipeline_layout(std::string_view layout) {
  const std::string flat = unroll_layout(layout);
  std::vector<LayoutChunk> chunks(1);
  size_t chunk_start = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    if (flat[i] == '|') {
      chunks.emplace_back();
      chunk_start = i + 1;
      continue;
    }
    const bool last = i + 1 == flat.size() || flat[i + 1] == '|';
    add_layout_layer(chunks.back(), flat[i], i == chunk_start, last);
  }
  return chunks;
}

}  // namespace racksim
