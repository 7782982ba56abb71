#include "compressors/json_best_of.h"

#include <optional>
#include <string>

#include "compressors/json.h"
#include "compressors/toon.h"
#include "caveman/stream/tokens.h"

namespace caveman {
namespace {

class JsonBestOfCompressor final : public InMemoryCompressor {
 public:
  explicit JsonBestOfCompressor(const TokenCounter& counter) : counter_(counter) {}
  std::string_view content_type() const override { return "json"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): the TOON tree beside the JSON view.
  MemoryModel memory_model() const override { return {.per_byte = 9, .per_line = 0}; }
  bool query_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta* meta) const override {
    const uint64_t input_tokens = counter_.Count(body);
    std::optional<std::string> choice;
    uint64_t choice_tokens = 0;
    bool choice_is_toon = false;
    // Bounded: a longer TOON text has more tokens than the body has bytes (see toon.h).
    if (Result<std::string> toon = EncodeToon(body, kMaxTokenBytes * body.size()); toon.ok()) {
      uint64_t t = counter_.Count(toon.value());
      if (t < input_tokens) {
        choice = std::move(toon).value();
        choice_tokens = t;
        choice_is_toon = true;
      }
    }
    if (std::optional<std::string> elided = ElideJson(body, query)) {
      uint64_t t = counter_.Count(*elided);
      if (t < input_tokens && (!choice || t < choice_tokens)) {
        choice = std::move(elided);
        choice_is_toon = false;
      }
    }
    if (!choice) return std::nullopt;
    meta->method = choice_is_toon ? "toon" : "elision";
    meta->lossless_to_model = choice_is_toon;
    return choice;
  }

 private:
  const TokenCounter& counter_;
};

}  // namespace

std::unique_ptr<Compressor> NewJsonBestOfCompressor() {
  return std::make_unique<JsonBestOfCompressor>(DefaultTokenCounter());
}

std::unique_ptr<Compressor> NewJsonBestOfCompressor(const TokenCounter& counter) {
  return std::make_unique<JsonBestOfCompressor>(counter);
}

}  // namespace caveman
