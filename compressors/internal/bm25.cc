#include "compressors/internal/bm25.h"

#include <algorithm>
#include <cmath>

#include <unicode/uchar.h>

#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

constexpr std::string_view kStopWords[] = {"a",   "an",  "and",  "are",  "as",    "at",    "be",  "by",   "for", "from",
                                           "how", "in",  "is",   "it",   "of",    "on",    "or",  "that", "the", "this",
                                           "to",  "was", "what", "when", "where", "which", "who", "why",  "with"};

bool IsStopWord(std::string_view t) {
  for (std::string_view s : kStopWords) {
    if (s == t) return true;
  }
  return false;
}

bool IsTermChar(uint32_t cp) { return cp == '_' || IsLetter(cp) || IsDecimalDigit(cp); }

// Calls fn(term) for every kept term of `text`.
template <class Fn>
void ForEachTerm(std::string_view text, Fn&& fn) {
  std::string cur;
  size_t i = 0;
  auto flush = [&] {
    if (cur.size() >= 2 && !IsStopWord(cur)) fn(std::string_view(cur));
    cur.clear();
  };
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
        cur.push_back(static_cast<char>(c));
      } else if (c >= 'A' && c <= 'Z') {
        cur.push_back(static_cast<char>(c + 32));
      } else {
        flush();
      }
      continue;
    }
    uint32_t cp = DecodeUtf8(text, &i);
    cp = static_cast<uint32_t>(u_tolower(static_cast<UChar32>(cp)));
    if (IsTermChar(cp)) {
      AppendUtf8(cp, &cur);
    } else {
      flush();
    }
  }
  flush();
}

}  // namespace

std::vector<std::string> Bm25Terms(std::string_view text) {
  std::vector<std::string> out;
  ForEachTerm(text, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

std::vector<std::string> DistinctTerms(std::string_view text) {
  std::vector<std::string> out;
  ForEachTerm(text, [&](std::string_view t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.emplace_back(t);
  });
  return out;
}

Bm25Index::Bm25Index(std::string_view query)
    : terms_(DistinctTerms(query)), df_(terms_.size(), 0), tf_scratch_(terms_.size(), 0) {}

uint64_t Bm25Index::Analyze(std::string_view doc, std::vector<uint32_t>* tf) const {
  std::fill(tf->begin(), tf->end(), 0);
  uint64_t len = 0;
  ForEachTerm(doc, [&](std::string_view t) {
    ++len;
    for (size_t q = 0; q < terms_.size(); ++q) {
      if (terms_[q] == t) {
        ++(*tf)[q];
        break;
      }
    }
  });
  return len;
}

void Bm25Index::AddDocument(std::string_view doc) {
  ++n_;
  total_len_ += Analyze(doc, &tf_scratch_);
  for (size_t q = 0; q < terms_.size(); ++q) {
    if (tf_scratch_[q] > 0) ++df_[q];
  }
}

double Bm25Index::Score(std::string_view doc) const {
  if (terms_.empty() || n_ == 0) return 0.0;
  uint64_t len = Analyze(doc, &tf_scratch_);
  double avgdl = total_len_ == 0 ? 1.0 : static_cast<double>(total_len_) / static_cast<double>(n_);
  double n = static_cast<double>(n_);
  double score = 0.0;
  for (size_t q = 0; q < terms_.size(); ++q) {
    double tf = tf_scratch_[q];
    if (tf <= 0) continue;
    double df = static_cast<double>(df_[q]);
    double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    score += idf * tf * (kBm25K1 + 1.0) / (tf + kBm25K1 * (1.0 - kBm25B + kBm25B * static_cast<double>(len) / avgdl));
  }
  return score;
}

std::vector<double> Bm25Scores(const std::vector<std::string_view>& docs, std::string_view query) {
  Bm25Index idx(query);
  std::vector<double> scores(docs.size(), 0.0);
  if (!idx.has_terms() || docs.empty()) return scores;
  for (std::string_view d : docs) idx.AddDocument(d);
  for (size_t i = 0; i < docs.size(); ++i) scores[i] = idx.Score(docs[i]);
  return scores;
}

void KeepQueryRelevantScores(std::vector<bool>* keep, const std::vector<double>& scores, int64_t limit,
                             double threshold) {
  if (limit <= 0) return;
  double max = 0.0;
  for (double s : scores) max = std::max(max, s);
  if (max <= 0.0) return;
  std::vector<size_t> cand;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (!(*keep)[i] && scores[i] / max >= threshold) cand.push_back(i);
  }
  std::stable_sort(cand.begin(), cand.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  for (size_t k = 0; k < cand.size() && static_cast<int64_t>(k) < limit; ++k) {
    (*keep)[cand[k]] = true;
  }
}

void KeepQueryRelevant(std::vector<bool>* keep, const std::vector<std::string_view>& docs, std::string_view query,
                       int64_t limit, double threshold) {
  if (query.empty() || limit <= 0) return;
  KeepQueryRelevantScores(keep, Bm25Scores(docs, query), limit, threshold);
}

}  // namespace caveman::internal
