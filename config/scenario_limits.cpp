// The checks every field gets whatever it means: numbers finite and within a documented range,
// enum values defined, counts not negative, strings valid UTF-8, and the products of sizes the
// simulator multiplies within int64 (docs/guarantees.md lists the limits). They run on the
// resolved scenario before the per-field checks of scenario_validate.cpp, so those can trust
// that nothing is NaN, huge or undefined.
#include "config/scenario_limits.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/field_path.h"

namespace racksim::config {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The largest value an integer field may hold. Sizes a model or a cluster could plausibly have,
// with room to spare, chosen so that the products the simulator forms stay far below 2^63.
int64_t integer_limit(const std::string& name) {
  constexpr int64_t k2_20 = int64_t{1} << 20;
  constexpr int64_t k2_26 = int64_t{1} << 26;
  if (name == "grad_bucket_elements") return int64_t{1} << 40;
  if (name == "seq_length" || name == "global_batch_size" || name == "micro_batch_size" ||
      name == "batch" || name == "context_tokens" || name == "prompt_tokens" ||
      name == "indexer_chunk_tokens" || name == "window_tokens" || name == "sparse_top_k" ||
      name == "vocab_size") {
    return k2_26;
  }
  return k2_20;  // widths, counts of layers, heads, experts, GPUs, nodes, parallel sizes
}

// The range a floating-point field may take, by the unit its name ends in.
struct Range {
  double min, max;
  const char* unit;
};

Range double_range(const std::string& name) {
  // A rate outside this range makes durations SimGrid cannot order (too long or below its
  // precision), which would stall the replay.
  if (ends_with(name, "_per_s")) return {1.0, 1e21, "per second"};
  if (ends_with(name, "_s")) return {0.0, 1e3, "seconds"};
  if (ends_with(name, "_bytes")) return {0.0, 1e18, "bytes"};
  return {0.0, 1e12, ""};  // ratios, efficiencies, exponents, prices, element counts
}

// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF): reports
// and timelines are JSON, which cannot hold anything else.
bool valid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    int extra = 0;
    uint32_t code = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if ((byte & 0xE0) == 0xC0) {
      extra = 1, code = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      extra = 2, code = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      extra = 3, code = byte & 0x07;
    } else {
      return false;
    }
    if (i + extra >= text.size()) return false;  // cut short
    for (int k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    constexpr uint32_t kMinimum[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

class LimitChecker {
 public:
  explicit LimitChecker(const SourceMap& sources) : sources_(sources) {}

  void message(const Message& message, const std::string& prefix) const {
    const Reflection* reflection = message.GetReflection();
    const auto* type = message.GetDescriptor();
    // In field-number order, which is the schema's order: the first bad field is reported.
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      const std::string path = join_path(prefix, field->name());
      if (field->is_repeated()) {
        for (int k = 0; k < reflection->FieldSize(message, field); ++k) {
          value(message, field, k, path);
        }
      } else if (reflection->HasField(message, field)) {
        value(message, field, -1, path);
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& detail) const {
    throw InputError(sources_.find(field), field, detail);
  }

  void value(const Message& message, const FieldDescriptor* field, int index,
             const std::string& path) const {
    const Reflection* r = message.GetReflection();
    const bool repeated = index >= 0;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        this->message(
            repeated ? r->GetRepeatedMessage(message, field, index) : r->GetMessage(message, field),
            path);
        return;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        real(path, field->name(),
             repeated ? r->GetRepeatedDouble(message, field, index) : r->GetDouble(message, field));
        return;
      case FieldDescriptor::CPPTYPE_FLOAT:
        real(path, field->name(),
             repeated ? r->GetRepeatedFloat(message, field, index) : r->GetFloat(message, field));
        return;
      case FieldDescriptor::CPPTYPE_INT32:
        integer(
            path, field->name(),
            repeated ? r->GetRepeatedInt32(message, field, index) : r->GetInt32(message, field));
        return;
      case FieldDescriptor::CPPTYPE_INT64:
        integer(
            path, field->name(),
            repeated ? r->GetRepeatedInt64(message, field, index) : r->GetInt64(message, field));
        return;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int number = repeated ? r->GetRepeatedEnumValue(message, field, index)
                                    : r->GetEnumValue(message, field);
        if (field->enum_type()->FindValueByNumber(number) == nullptr) {
          fail(path, fmt::format("{} is not a defined value (valid values: {})", number,
                                 enum_value_names(*field->enum_type())));
        }
        return;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& text =
            repeated ? r->GetRepeatedStringReference(message, field, index, &scratch)
                     : r->GetStringReference(message, field, &scratch);
        if (!valid_utf8(text)) fail(path, "is not valid UTF-8 text");
        return;
      }
      default:
        return;  // bools and unsigned fields: every value is legal
    }
  }

  void real(const std::string& path, const std::string& name, double value) const {
    if (!std::isfinite(value)) fail(path, fmt::format("must be a finite number, got {}", value));
    const Range range = double_range(name);
    const bool zero_allowed = value == 0;  // "unset"; the per-field checks decide if it may be
    if (!zero_allowed && (value < range.min || value > range.max)) {
      fail(path, fmt::format("{} is outside the supported range [{:g}, {:g}]{}{}", value, range.min,
                             range.max, *range.unit ? " " : "", range.unit));
    }
  }

  void integer(const std::string& path, const std::string& name, int64_t value) const {
    if (name == "routing_seed") return;  // any seed is a seed
    if (value < 0) fail(path, fmt::format("must be >= 0, got {}", value));
    const int64_t limit = integer_limit(name);
    if (value > limit) {
      fail(path, fmt::format("{} is above the supported limit {} (2^{})", value, limit,
                             static_cast<int>(std::log2(static_cast<double>(limit)))));
    }
  }

  const SourceMap& sources_;
};

// Products of sizes the workload builds in int64: each stays below 2^50 (so sums of a few
// thousand of them cannot overflow either).
void check_products(const config::Scenario& scenario, const SourceMap& sources) {
  constexpr double kLimit = 1125899906842624.0;  // 2^50
  const config::Model& model = scenario.model();
  const config::Training& training = scenario.training();
  auto check = [&](const std::string& field, const std::string& what, double product) {
    if (product > kLimit) {
      throw InputError(sources.find(field), field,
                       fmt::format("{} = {:.4g} exceeds the supported 2^50", what, product));
    }
  };
  const double widest = std::max({model.hidden_size(), model.ffn_hidden_size(),
                                  model.moe_ffn_hidden_size(), model.vocab_size()});
  check("training.seq_length", "global_batch_size x seq_length (tokens per step)",
        double(training.global_batch_size()) * double(training.seq_length()));
  check("training.seq_length", "micro_batch_size x seq_length x the widest layer",
        double(training.micro_batch_size()) * double(training.seq_length()) * widest);
  const double expert_width = std::max<double>(
      model.ffn_hidden_size(), double(model.moe_ffn_hidden_size()) * double(model.num_experts()));
  check("model.num_layers", "num_layers x hidden_size x the widest MLP (parameters)",
        double(model.num_layers()) * double(model.hidden_size()) * expert_width);
  if (scenario.has_inference()) {
    const config::Inference& inf = scenario.inference();
    check("inference.context_tokens", "batch x context_tokens x hidden_size",
          double(inf.batch()) * double(std::max(inf.context_tokens(), inf.prompt_tokens())) *
              double(model.hidden_size()));
  }
}

}  // namespace

void check_field_limits(const google::protobuf::Message& message, const std::string& prefix,
                        const SourceMap& sources) {
  LimitChecker(sources).message(message, prefix);
}

void check_scenario_limits(const config::Scenario& scenario, const SourceMap& sources) {
  check_field_limits(scenario, "", sources);
  check_products(scenario, sources);
}

}  // namespace racksim::config
