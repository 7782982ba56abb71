#include "compressors/manifest.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "stream/sha256.h"

namespace caveman {
namespace {

// The 16 content types of the default registry (§2.7). toolschema-annotations is registered
// but excluded from the manifest (§5.12).
constexpr std::string_view kManifestTypes[] = {
    "a11y", "code", "config", "diff", "html", "json", "log", "repetition", "search-result",
    "tabular", "terminal", "test-report", "text", "toolschema", "toon",
};

std::string_view SegmentKinds(std::string_view type) {
  if (type == "toolschema") return R"(["tool_schema"])";
  if (type == "a11y") return R"(["artifact","tool_result"])";
  if (type == "repetition") return R"(["history","tool_result"])";
  return R"(["artifact","history","skill","tool_result"])";
}

}  // namespace

std::string CapabilityManifest() {
  std::vector<std::string> entries;
  for (std::string_view type : kManifestTypes) {
    std::string id = "caveman.engine." + std::string(type) + ".v1";
    std::string digest = Sha256::Hex(Sha256::Digest("caveman.engine." + std::string(type) + ":v1"));
    std::string e = "{\"transform_id\":\"" + id + "\"";
    e += ",\"implementation_version\":\"1\",\"safety_classes\":[\"S4\"],\"deterministic\":true";
    e += ",\"recovery\":\"exact_ccr\",\"eligible_segment_kinds\":" + std::string(SegmentKinds(type));
    e += ",\"requires_eval\":true,\"not_smaller_fallback\":\"original\"";
    e += ",\"provenance\":{\"kind\":\"native\",\"source_manifest_sha256\":null}";
    e += ",\"conformance_digest\":\"" + digest + "\"}";
    entries.push_back(std::move(e));
  }
  // Ordered by transform_id byte-wise ("search-result" sorts before "tabular", "test-report"
  // before "text").
  std::sort(entries.begin(), entries.end());
  std::string caps = "[";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) caps += ",";
    caps += entries[i];
  }
  caps += "]";
  return "{\"schema_version\":1,\"registry_sha256\":\"" + Sha256::Hex(Sha256::Digest(caps)) +
         "\",\"capabilities\":" + caps + "}";
}

}  // namespace caveman
