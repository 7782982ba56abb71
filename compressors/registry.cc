#include "compressors/registry.h"

#include <cstdlib>
#include <iterator>

#include "stream/check.h"

#include "compressors/code.h"
#include "compressors/config.h"
#include "compressors/diff.h"
#include "compressors/json.h"
#include "compressors/json_best_of.h"
#include "compressors/log.h"
#include "compressors/search_result.h"
#include "compressors/tabular.h"
#include "compressors/terminal.h"
#include "compressors/text.h"
#include "compressors/text_util.h"
#include "compressors/a11y.h"
#include "compressors/html.h"
#include "compressors/repetition.h"
#include "compressors/test_report.h"
#include "compressors/toolschema.h"
#include "compressors/toolschema_annotations.h"
#include "compressors/toon.h"

namespace caveman {
namespace {

using Factory = std::unique_ptr<Compressor> (*)(const RegistryOptions&);

struct Entry {
  std::string_view content_type;
  Factory factory;
};

// The registry table: one row per compressor of §5. Order is documentation order; lookup is
// by content type. A content type without a row passes through (§1.3 step 5).
const Entry kEntries[] = {
    {"json", [](const RegistryOptions& o) { return o.toon_best_of ? NewJsonBestOfCompressor() : NewJsonCompressor(); }},
    {"code", [](const RegistryOptions&) { return NewCodeCompressor(); }},
    {"log", [](const RegistryOptions&) { return NewLogCompressor(); }},
    {"diff", [](const RegistryOptions&) { return NewDiffCompressor(); }},
    {"search-result", [](const RegistryOptions&) { return NewSearchResultCompressor(); }},
    {"test-report", [](const RegistryOptions&) { return NewTestReportCompressor(); }},
    {"html", [](const RegistryOptions&) { return NewHtmlCompressor(); }},
    {"toolschema", [](const RegistryOptions&) { return NewToolschemaCompressor(); }},
    {"toolschema-annotations", [](const RegistryOptions&) { return NewToolschemaAnnotationsCompressor(); }},
    {"toon", [](const RegistryOptions&) { return NewToonCompressor(); }},
    {"a11y", [](const RegistryOptions&) { return NewA11yCompressor(); }},
    {"tabular", [](const RegistryOptions&) { return NewTabularCompressor(); }},
    {"config", [](const RegistryOptions&) { return NewConfigCompressor(); }},
    {"repetition", [](const RegistryOptions&) { return NewRepetitionCompressor(); }},
    {"terminal", [](const RegistryOptions&) { return NewTerminalCompressor(); }},
    {"text", [](const RegistryOptions&) { return NewTextCompressor(); }},
};

}  // namespace

static_assert(std::size(kEntries) == Registry::kEntryCount);

Registry::Registry(RegistryOptions options) : options_(options) {}
Registry::~Registry() = default;

const Compressor* Registry::Find(std::string_view content_type) const {
  for (size_t i = 0; i < kEntryCount; ++i) {
    if (kEntries[i].content_type != content_type) continue;
    std::call_once(built_[i], [&] { compressors_[i] = kEntries[i].factory(options_); });
    CAVEMAN_DCHECK(compressors_[i]->content_type() == content_type);
    return compressors_[i].get();
  }
  return nullptr;
}

std::vector<std::string_view> Registry::content_types() const {
  std::vector<std::string_view> out;
  for (const Entry& e : kEntries) out.push_back(e.content_type);
  return out;
}

}  // namespace caveman
