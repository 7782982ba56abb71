#include "compressors/internal/templates.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <unordered_set>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compressors/elision.h"
#include "compressors/internal/redundancy.h"

namespace caveman::internal {
namespace {

// Word-at-a-time hash: one multiply per 8 bytes (mining runs on every line of a log, twice).
uint64_t HashToken(std::string_view t) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ t.size();
  size_t i = 0;
  for (; i + 8 <= t.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, t.data() + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  if (i < t.size()) {
    uint64_t w = 0;
    std::memcpy(&w, t.data() + i, t.size() - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h == 0 ? 1 : h;  // 0 is the wildcard
}

// The separator (SPACE, TAB) and ASCII digit bits of the 64 bytes at p (bit k: p[k]).
void ClassifyWord(const char* p, uint64_t* sep, uint64_t* digit) {
#if defined(__SSE2__)
  uint64_t s = 0, d = 0;
  for (int k = 0; k < 64; k += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    const __m128i blank = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\t')));
    // Signed compares: bytes from 0x80 are negative, so never digits.
    const __m128i dig =
        _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
    s |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(blank))} << k;
    d |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(dig))} << k;
  }
#else
  uint64_t s = 0, d = 0;
  for (int k = 0; k < 64; ++k) {
    s |= uint64_t{p[k] == ' ' || p[k] == '\t'} << k;
    d |= uint64_t{static_cast<unsigned char>(p[k] - '0') < 10} << k;
  }
#endif
  *sep = s;
  *digit = d;
}

// Bits [from, to) of a word (0 ≤ from ≤ to ≤ 64).
uint64_t BitRange(size_t from, size_t to) {
  const uint64_t below_to = to == 64 ? ~uint64_t{0} : (uint64_t{1} << to) - 1;
  return below_to & (~uint64_t{0} << from);
}

// Calls fn(token, has_digit) for the SPACE/TAB-separated tokens of `line` (a final CR
// dropped), in order, until it returns false. The line is classified 64 bytes at a time as the
// walk reaches them, so a walk stopped early reads no further (issue 19: the byte-at-a-time
// split was two thirds of mining a CI log).
template <class Fn>
void ForEachToken(std::string_view line, Fn&& fn) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t n = line.size();
  constexpr size_t kNone = SIZE_MAX;
  size_t token = kNone;  // the start of the token being read
  bool digit = false;
  for (size_t base = 0; base < n; base += 64) {
    const size_t avail = std::min<size_t>(64, n - base);
    uint64_t sep, dig;
    if (avail == 64) {
      ClassifyWord(line.data() + base, &sep, &dig);
    } else {  // the padding bytes (0) are neither separators nor digits
      alignas(16) char tail[64] = {};
      std::memcpy(tail, line.data() + base, avail);
      ClassifyWord(tail, &sep, &dig);
    }
    const uint64_t valid = BitRange(0, avail);
    sep &= valid;
    const uint64_t other = ~sep & valid;
    size_t pos = 0;
    while (pos < avail) {
      if (token == kNone) {
        const uint64_t starts = other & (~uint64_t{0} << pos);
        if (starts == 0) break;
        pos = static_cast<size_t>(std::countr_zero(starts));
        token = base + pos;
        digit = false;
      }
      const uint64_t ends = sep & (~uint64_t{0} << pos);
      const size_t end = ends == 0 ? avail : static_cast<size_t>(std::countr_zero(ends));
      digit = digit || (dig & BitRange(pos, end)) != 0;
      if (ends == 0) break;  // the token goes on in the next word
      if (!fn(line.substr(token, base + end - token), digit)) return;
      token = kNone;
      pos = end;
    }
  }
  if (token != kNone) fn(line.substr(token), digit);
}

}  // namespace

void TemplateTokens(std::string_view line, std::vector<std::string_view>* out) {
  out->clear();
  ForEachToken(line, [&](std::string_view t, bool) {
    out->push_back(t);
    return true;
  });
}

uint32_t TemplateMiner::Add(std::string_view line) {
  // Split on SPACE/TAB; a token with a digit is a wildcard (0), the others are hashed.
  scratch_.clear();
  bool too_long = false;
  ForEachToken(line, [&](std::string_view t, bool digit) {
    if (scratch_.size() >= options_.max_tokens) {
      too_long = true;
      return false;
    }
    scratch_.push_back(digit ? 0 : HashToken(t));
    return true;
  });
  if (too_long || scratch_.empty()) return kNoTemplate;
  const uint64_t key = HashToken(std::string_view(reinterpret_cast<const char*>(&scratch_[0]), 8)) ^
                       (scratch_.size() * 0x9E3779B97F4A7C15ULL);
  uint32_t best = kNoTemplate;
  double best_sim = -1;
  auto bucket = buckets_.find(key);
  if (bucket != buckets_.end()) {
    for (uint32_t id : bucket->second) {
      const Cluster& c = clusters_[id];
      if (c.tokens.size() != scratch_.size() || c.tokens[0] != scratch_[0]) continue;
      size_t equal = 0;
      for (size_t i = 0; i < scratch_.size(); ++i) {
        if (c.tokens[i] != 0 && c.tokens[i] == scratch_[i]) ++equal;
      }
      const double sim = c.constants == 0 ? 1.0 : static_cast<double>(equal) / c.constants;
      if (sim > best_sim) {
        best_sim = sim;
        best = id;
      }
    }
  }
  if (best != kNoTemplate && best_sim >= options_.similarity) {
    Cluster& c = clusters_[best];
    for (size_t i = 0; i < scratch_.size(); ++i) {
      if (c.tokens[i] != 0 && c.tokens[i] != scratch_[i]) {
        c.tokens[i] = 0;
        --c.constants;
      }
    }
    return best;
  }
  if (clusters_.size() >= options_.max_clusters) return kNoTemplate;
  Cluster c;
  c.tokens = scratch_;
  for (uint64_t t : c.tokens) c.constants += t != 0;
  clusters_.push_back(std::move(c));
  const uint32_t id = static_cast<uint32_t>(clusters_.size() - 1);
  buckets_[key].push_back(id);  // buckets exist only for created clusters: bounded
  return id;
}

bool TemplateMiner::IsWildcard(uint32_t id, size_t pos) const {
  if (id >= clusters_.size()) return false;
  const Cluster& c = clusters_[id];
  return pos < c.tokens.size() && c.tokens[pos] == 0;
}

void KeepNonRedundantGrouped(const std::vector<std::string_view>& units, const std::vector<uint64_t>& keys,
                             std::vector<bool>* keep, std::vector<bool>* template_dropped) {
  if (template_dropped != nullptr) template_dropped->assign(units.size(), false);
  size_t kept = 0;
  std::unordered_set<uint64_t> kept_keys;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!(*keep)[i]) continue;
    ++kept;
    if (keys[i] != 0) kept_keys.insert(keys[i]);
  }
  RedundancyGuard guard;
  size_t ordinal = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!(*keep)[i]) continue;
    if (RedundancyGuard::IsSeed(ordinal, kept)) guard.AddSeed(units[i]);
    ++ordinal;
  }
  for (size_t i = 0; i < units.size(); ++i) {
    if ((*keep)[i]) continue;
    const bool key_kept = keys[i] != 0 && kept_keys.count(keys[i]) > 0;
    if (!key_kept) {
      if (guard.Test(units[i])) {
        (*keep)[i] = true;
        if (keys[i] != 0) kept_keys.insert(keys[i]);
      }
      continue;
    }
    // Represented by a kept unit of the same template: dropped whatever the profile says.
    if (template_dropped != nullptr && guard.promotions() < kMaxPromotions &&
        guard.Represents(ComputeProfile(units[i]))) {
      continue;  // the plain guard drops it too
    }
    if (template_dropped != nullptr) (*template_dropped)[i] = true;
  }
}

std::vector<uint64_t> TemplateKeys(const std::vector<std::string_view>& units) {
  TemplateMiner miner;
  std::vector<uint64_t> keys;
  keys.reserve(units.size());
  for (std::string_view u : units) {
    const uint32_t id = miner.Add(u);
    keys.push_back(id == TemplateMiner::kNoTemplate ? 0 : static_cast<uint64_t>(id) + 1);
  }
  return keys;
}

TemplateGrouping::TemplateGrouping(const std::vector<std::string_view>& units, std::vector<bool>* keep)
    : units_(&units) {
  std::vector<uint64_t> keys;
  ids_.reserve(units.size());
  keys.reserve(units.size());
  for (std::string_view u : units) {
    ids_.push_back(miner_.Add(u));
    keys.push_back(ids_.back() == TemplateMiner::kNoTemplate ? 0 : static_cast<uint64_t>(ids_.back()) + 1);
  }
  KeepNonRedundantGrouped(units, keys, keep, &dropped_by_template_);
}

std::string TemplateGrouping::RunSummary(size_t from, size_t to) const {
  size_t by_template = 0;
  int64_t bytes = 0;
  for (size_t k = from; k < to; ++k) {
    by_template += dropped_by_template_[k] ? 1 : 0;
    bytes += static_cast<int64_t>((*units_)[k].size()) + 1;
  }
  if (by_template * 2 < to - from || to - from < kAlwaysElideCount) return "";
  InvariantAccumulator acc;
  FieldList fields;
  std::vector<std::string_view> tokens;
  for (size_t k = from; k < to; ++k) {
    fields.clear();
    if (ids_[k] != TemplateMiner::kNoTemplate) {
      TemplateFields((*units_)[k], ids_[k], miner_, &tokens, &fields);
    }
    acc.Add(fields);
  }
  return acc.Render(bytes);
}

// Token positions as field names for template invariants ("$1" … "$64").
static std::string_view PositionName(size_t pos) {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>;
    for (size_t i = 1; i <= TemplateMinerOptions().max_tokens; ++i) {
      v->push_back("$" + std::to_string(i));
    }
    return v;
  }();
  return (*names)[pos];
}

static bool TokenHasDigit(std::string_view t) {
  return std::any_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Fields of a line without logfmt/JSON fields: its variable tokens (template wildcards, and
// digit-bearing tokens, which the miner treats as variable) that are not number-like, named
// by position.
void TemplateFields(std::string_view line, uint32_t template_id, const TemplateMiner& miner,
                    std::vector<std::string_view>* tokens, FieldList* out) {
  out->clear();
  TemplateTokens(line, tokens);
  for (size_t pos = 0; pos < tokens->size() && out->size() < kMaxUnitFields; ++pos) {
    std::string_view t = (*tokens)[pos];
    // Number-like tokens (first alphanumeric is a digit: timestamps, sizes, versions, addresses)
    // are left out: their ranges cost more marker bytes than they tell (measured on the CI log,
    // docs/DECISIONS.md). Names such as `libfoo:amd64` stay.
    auto first_alnum = std::find_if(t.begin(), t.end(), [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    });
    const bool number_like = first_alnum != t.end() && *first_alnum >= '0' && *first_alnum <= '9';
    const bool variable = miner.IsWildcard(template_id, pos) || TokenHasDigit(t);
    if (variable && !number_like) out->push_back({PositionName(pos), t});
  }
}

}  // namespace caveman::internal
