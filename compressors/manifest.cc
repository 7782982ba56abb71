#include "compressors/manifest.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "stream/json_writer.h"
#include "stream/sha256.h"

namespace caveman {
namespace {

// The 16 content types of the default registry (§2.7). toolschema-annotations is registered
// but excluded from the manifest (§5.12).
constexpr std::string_view kManifestTypes[] = {
    "a11y",          "code",    "config",   "diff",        "html", "json",       "log",  "repetition",
    "search-result", "tabular", "terminal", "test-report", "text", "toolschema", "toon",
};

// The segment kinds a transform may be offered, in byte order.
std::vector<std::string_view> SegmentKinds(std::string_view type) {
  if (type == "toolschema") return {"tool_schema"};
  if (type == "a11y") return {"artifact", "tool_result"};
  if (type == "repetition") return {"history", "tool_result"};
  return {"artifact", "history", "skill", "tool_result"};
}

}  // namespace

std::string CapabilityManifest() {
  std::vector<std::string> entries;
  for (std::string_view type : kManifestTypes) {
    const std::string id = "caveman.engine." + std::string(type) + ".v1";
    JsonWriter e;
    e.BeginObject().Key("transform_id").String(id).Key("implementation_version").String("1");
    e.Key("safety_classes").BeginArray().String("S4").EndArray().Key("deterministic").Bool(true);
    e.Key("recovery").String("exact_ccr").Key("eligible_segment_kinds").BeginArray();
    for (std::string_view kind : SegmentKinds(type)) e.String(kind);
    e.EndArray().Key("requires_eval").Bool(true).Key("not_smaller_fallback").String("original");
    e.Key("provenance").BeginObject().Key("kind").String("native").Key("source_manifest_sha256").Null().EndObject();
    e.Key("conformance_digest").String(Sha256::Hex(Sha256::Digest("caveman.engine." + std::string(type) + ":v1")));
    e.EndObject();
    entries.push_back(e.Take());
  }
  // Ordered by transform_id byte-wise ("search-result" sorts before "tabular", "test-report"
  // before "text"): every entry starts with it.
  std::sort(entries.begin(), entries.end());
  JsonWriter caps;
  caps.BeginArray();
  for (const std::string& e : entries) caps.Raw(e);
  caps.EndArray();
  // The registry digest is over the capabilities array exactly as written here.
  JsonWriter m;
  m.BeginObject().Key("schema_version").Uint(1).Key("registry_sha256").String(Sha256::Hex(Sha256::Digest(caps.str())));
  m.Key("capabilities").Raw(caps.str()).EndObject();
  return m.Take();
}

}  // namespace caveman
