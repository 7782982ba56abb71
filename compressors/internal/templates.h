// Line-template mining (Drain-style) for the template-aware redundancy extension of the line
// compressors (docs/DECISIONS.md, "template grouping"; not part of the §4.2 guard).
//
// A line is cut into tokens on SPACE/TAB (a final CR is ignored); a token holding an ASCII
// digit is a variable from the start (ids, timestamps, sizes, durations). Lines with the same
// token count and first token are compared with the clusters of that bucket: similarity =
// equal tokens / constant (non-wildcard) template positions; at ≥ 0.5 the line joins the most
// similar cluster (first created on ties) and every position where it differs becomes a
// wildcard; else it founds a new cluster. Lines with more than `max_tokens` tokens, or arriving
// when `max_clusters` clusters exist and none fits, get no template.
//
// Deterministic: the cluster id of a line depends only on the lines added before it, so
// replaying the same lines in the same order reproduces every id (the log compressor mines in
// its first pass and replays the ids it stored, two bytes per line, in a spool).
// Memory: ≤ max_clusters × max_tokens hashes.
//
// Thread-safety: a miner belongs to one payload.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_TEMPLATES_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_TEMPLATES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compressors/internal/invariants.h"

namespace caveman::internal {

struct TemplateMinerOptions {
  size_t max_clusters = 512;  // Default: 512 (bounded memory for streaming logs).
  size_t max_tokens = 64;     // Default: 64.
  double similarity = 0.5;    // Default: 0.5.
};

class TemplateMiner {
 public:
  static constexpr uint32_t kNoTemplate = UINT32_MAX;

  explicit TemplateMiner(TemplateMinerOptions options = {}) : options_(options) {}

  // Assigns `line` to a cluster (creating or generalising one). Returns its id or kNoTemplate.
  uint32_t Add(std::string_view line);
  // Whether position `pos` of cluster `id` is a wildcard now.
  bool IsWildcard(uint32_t id, size_t pos) const;
  size_t cluster_count() const { return clusters_.size(); }

 private:
  struct Cluster {
    std::vector<uint64_t> tokens;  // 0 = wildcard
    size_t constants = 0;
  };
  TemplateMinerOptions options_;
  std::vector<Cluster> clusters_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> buckets_;
  std::vector<uint64_t> scratch_;
};

// The miner's tokens of `line` (views into it).
void TemplateTokens(std::string_view line, std::vector<std::string_view>* out);

// §4.2 keepNonRedundant extended with template grouping, for in-memory compressors: a unit the
// guard would keep (not represented by a profile class, or promotions exhausted) stays dropped
// when its key equals the key of a kept unit (kept before the guard, or promoted earlier).
// keys[i] == 0 means "no template".
// `template_dropped` (optional) marks the units dropped only because of their key.
void KeepNonRedundantGrouped(const std::vector<std::string_view>& units, const std::vector<uint64_t>& keys,
                             std::vector<bool>* keep, std::vector<bool>* template_dropped = nullptr);

// Fields of a line for invariant summaries when it has no logfmt/JSON fields: its variable
// tokens (wildcard positions of template `template_id` in `miner`, and digit-bearing tokens)
// that are not number-like (first alphanumeric a digit), named `$k` by 1-based position.
// Views point into `line` and static storage.
void TemplateFields(std::string_view line, uint32_t template_id, const TemplateMiner& miner,
                    std::vector<std::string_view>* tokens, FieldList* out);

// Keys from mined templates (id + 1, 0 for none) of `units` in order.
std::vector<uint64_t> TemplateKeys(const std::vector<std::string_view>& units);

// The template-grouping extension as the in-memory compressors (terminal, text) apply it:
// mines one template per unit, runs KeepNonRedundantGrouped with those keys, and then
// summarises a dropped run by the invariants of its variable tokens.
// Lifetime: `units` must outlive the object (it keeps a pointer to it).
class TemplateGrouping {
 public:
  TemplateGrouping(const std::vector<std::string_view>& units, std::vector<bool>* keep);
  TemplateGrouping(const TemplateGrouping&) = delete;
  TemplateGrouping& operator=(const TemplateGrouping&) = delete;

  // The invariant summary of the dropped run [from, to), or "" unless the run is at least
  // kAlwaysElideCount units and at least half of them were dropped only by grouping (a
  // project extension: the spec's markers carry no summary there).
  std::string RunSummary(size_t from, size_t to) const;

 private:
  const std::vector<std::string_view>* units_;
  TemplateMiner miner_;
  std::vector<uint32_t> ids_;
  std::vector<bool> dropped_by_template_;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_TEMPLATES_H_
