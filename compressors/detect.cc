// INTERIM (walking skeleton): json/text only and no presentation layers. Issue 3 replaces
// this file with the full §3 detector.
#include "compressors/detect.h"

#include <simdjson.h>

#include "compressors/internal/text_util.h"

namespace caveman {

struct PresentationLayers::Impl {};
PresentationLayers::PresentationLayers() = default;
PresentationLayers::~PresentationLayers() = default;
PresentationLayers::PresentationLayers(PresentationLayers&&) noexcept = default;
PresentationLayers& PresentationLayers::operator=(PresentationLayers&&) noexcept = default;
bool PresentationLayers::empty() const { return true; }
std::string PresentationLayers::Rewrap(std::string_view output) const { return std::string(output); }

bool MayHavePresentationLayer(std::string_view) { return false; }
Unwrapped Unwrap(std::string_view input) { return Unwrapped{std::string(input), {}}; }

std::string_view DetectBody(std::string_view body) {
  std::string_view t = internal::Trim(body);
  if (t.empty()) return "text";
  if (t.front() == '{' || t.front() == '[') {
    simdjson::dom::parser parser;
    simdjson::padded_string padded(body);
    simdjson::dom::element doc;
    if (!parser.parse(padded).get(doc) && internal::IsValidUtf8(body)) return "json";
  }
  return "text";
}

std::string_view Detect(std::string_view input) { return DetectBody(input); }

Result<std::string_view> DetectLarge(const Body& body) {
  CAVEMAN_ASSIGN_OR_RETURN(std::string_view v, body.View());
  return DetectBody(v);
}

}  // namespace caveman
