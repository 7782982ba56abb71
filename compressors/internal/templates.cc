#include "compressors/internal/templates.h"

#include <cstring>

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

bool HasDigit(std::string_view t) {
  for (char c : t) {
    if (static_cast<unsigned char>(c - '0') < 10) return true;
  }
  return false;
}

template <class Fn>
size_t ForEachToken(std::string_view line, Fn&& fn) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t count = 0;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (!fn(line.substr(i, j - i))) return count + 1;
    ++count;
    i = j;
  }
  return count;
}

}  // namespace

void TemplateTokens(std::string_view line, std::vector<std::string_view>* out) {
  out->clear();
  ForEachToken(line, [&](std::string_view t) {
    out->push_back(t);
    return true;
  });
}

uint32_t TemplateMiner::Add(std::string_view line) {
  scratch_.clear();
  bool too_long = false;
  ForEachToken(line, [&](std::string_view t) {
    if (scratch_.size() >= options_.max_tokens) {
      too_long = true;
      return false;
    }
    scratch_.push_back(HasDigit(t) ? 0 : HashToken(t));
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

}  // namespace caveman::internal
