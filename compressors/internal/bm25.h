// BM25 scoring and the query fill of §4.3.
//
// HowTo (streaming, two passes over the documents):
//   Bm25Index idx(query);                  // distinct query terms in query order
//   pass 1: idx.AddDocument(doc) for every document (df + lengths; bounded memory)
//   pass 2: idx.Score(doc) for every document, in any order
// Bm25Scores() does both passes over an in-memory list.
//
// Thread-safety: Bm25Index is not synchronised; Score() is const once pass 1 is done.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_BM25_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_BM25_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace caveman::internal {

inline constexpr double kBm25K1 = 1.5;
inline constexpr double kBm25B = 0.75;

// Terms of `text` in order (duplicates kept): LOWER, maximal runs of letters (L*), decimal
// digits (Nd) and '_', runs of ≥ 2 bytes that are not stop words.
std::vector<std::string> Bm25Terms(std::string_view text);
// Distinct terms in order of first appearance.
std::vector<std::string> DistinctTerms(std::string_view text);

class Bm25Index {
 public:
  explicit Bm25Index(std::string_view query);

  // Pass 1: counts one document (its length and which query terms it contains).
  void AddDocument(std::string_view doc);
  // Pass 2: the score of `doc` against the statistics of pass 1. 0 when there are no query
  // terms or no documents.
  double Score(std::string_view doc) const;

  bool has_terms() const { return !terms_.empty(); }
  uint64_t document_count() const { return n_; }
  const std::vector<std::string>& terms() const { return terms_; }

 private:
  // Kept-term count of `doc` and tf per query term.
  uint64_t Analyze(std::string_view doc, std::vector<uint32_t>* tf) const;

  std::vector<std::string> terms_;
  std::vector<uint64_t> df_;
  uint64_t n_ = 0;
  uint64_t total_len_ = 0;
  mutable std::vector<uint32_t> tf_scratch_;
};

// Scores of every document (§4.3), in order.
std::vector<double> Bm25Scores(const std::vector<std::string_view>& docs, std::string_view query);

// §4.3 query fill: no-op if the query is empty or limit ≤ 0; max = the highest score over all
// documents (no-op when 0); keeps up to `limit` not-kept documents with score/max ≥ threshold,
// by score descending then position. `keep` has one entry per document.
void KeepQueryRelevant(std::vector<bool>* keep, const std::vector<std::string_view>& docs, std::string_view query,
                       int64_t limit, double threshold);
// The same with precomputed scores.
void KeepQueryRelevantScores(std::vector<bool>* keep, const std::vector<double>& scores, int64_t limit,
                             double threshold);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_BM25_H_
