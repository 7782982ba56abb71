// The o200k_base tokenizer (§7.1–7.2): vocabulary parsing and verification, the
// pre-tokenizer (a hand-written matcher for the exact o200k pattern) and byte-pair merging.
// Public callers use stream/tokens.h; this header exists for tokens.cc and the tests.
//
// Thread-safety: an O200kTokenizer is immutable after construction; Count() and Encode()
// may run concurrently (each thread keeps its own small cache of merged pieces).
#ifndef CAVEMAN_STREAM_INTERNAL_O200K_H_
#define CAVEMAN_STREAM_INTERNAL_O200K_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "caveman/stream/status.h"
#include "caveman/stream/tokens.h"

namespace caveman::internal {

// SHA-256 of the only vocabulary accepted (§7.1), lowercase hex.
inline constexpr std::string_view kO200kSha256Hex = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d";
inline constexpr std::string_view kO200kName = "o200k_base";

// The tiktoken file embedded in the library (stream/o200k_vocab.S).
std::string_view EmbeddedO200kVocabulary();

// The tokenizer tables (vocabulary hash table and code point classes) built from that file
// at build time by o200k_tables_gen and embedded in the library (stream/o200k_tables.S),
// so a process does not parse 200,000 base64 lines before its first count.
std::string_view EmbeddedO200kTables();

// The code point class tables inside `tables` (the FromTables format), checked.
Status O200kClassTables(std::string_view tables, const uint16_t** index, const uint8_t** leaves, size_t* leaf_bytes);

class O200kTokenizer final : public TokenCounter {
 public:
  // Parses `tiktoken` ("base64 SP rank" lines) after checking its SHA-256 against
  // kO200kSha256Hex. Errors: kCorruption (hash mismatch or malformed content).
  static Result<std::unique_ptr<O200kTokenizer>> Create(std::string_view tiktoken);
  // A tokenizer over tables written by SerializeTables (the embedded ones, normally); the
  // tables are used in place and must outlive the tokenizer. Errors: kCorruption (wrong
  // magic or version, sizes that do not add up).
  static Result<std::unique_ptr<O200kTokenizer>> FromTables(std::string_view tables);
  // Appends the vocabulary and code point class tables in the FromTables format.
  void SerializeTables(std::string* out) const;
  ~O200kTokenizer() override;

  std::string_view name() const override { return kO200kName; }
  uint64_t Count(std::string_view text) const override;
  // Appends the token ids of `text` (encode_ordinary) to `ids`.
  void Encode(std::string_view text, std::vector<uint32_t>* ids) const;

  // Number of vocabulary entries (199,998 for o200k_base).
  size_t vocabulary_size() const;

  // Tests only: the backtracking encoder's pair check on tokens t1 and t2 (byte strings that
  // are tokens; otherwise false): whether the merge of t1 + t2 gives back [t1, t2], answered
  // from the merge-tree spines when `by_spines` and both tokens allow it (*walked = whether
  // they did), else by merging the pair's bytes.
  bool PairCompatibleForTest(std::string_view t1, std::string_view t2, bool by_spines, bool* walked) const;
  // Tests only: the same check as the encoder makes it, twice; for two tokens of up to 2
  // bytes each (*in_table) the second answer is read back from its table of such pairs.
  bool PairCompatibleByTableForTest(std::string_view t1, std::string_view t2, bool* in_table) const;
  // Tests only: the rank of the byte string as the merges look it up (Rank, and StartRank /
  // FinishRank when `split`), UINT32_MAX when it is no token.
  uint32_t RankForTest(std::string_view bytes, bool split) const;
  // Tests only: whether byte b follows byte a inside some token (the table counting cuts by).
  bool PairInTokenForTest(uint8_t a, uint8_t b) const;
  // Tests only: whether code point cp (< 0x10000) is a merge unit: merges may start with its
  // bytes as one part (see SetO200kUnitsForTest).
  bool IsMergeUnitForTest(uint32_t cp) const;

 private:
  struct Vocabulary;
  explicit O200kTokenizer(std::unique_ptr<Vocabulary> vocab);
  uint64_t CountWellFormed(std::string_view text) const;
  // CountWellFormed without the line memo: the pieces of `text`, one by one.
  uint64_t CountPieces(std::string_view text) const;
  void EncodeWellFormed(std::string_view text, std::vector<uint32_t>* ids) const;

  std::unique_ptr<Vocabulary> vocab_;
};

// The pre-tokenizer pieces of well-formed UTF-8 `text`, in order; concatenated they give
// back `text`. REQUIRES: text is well-formed UTF-8 (see SanitizeUtf8).
std::vector<std::string_view> O200kPieces(std::string_view text);

// Pieces (pre-tokens) longer than this many bytes are merged by the backtracking encoder
// (linear in practice, bounded memory); shorter ones by the heap merge.
inline constexpr size_t kO200kLongPiece = 4096;

// Tests only. false makes pieces of any length use the plain heap merge (the reference the
// backtracking encoder of long pieces must equal); default true.
void SetO200kBacktrackMergeForTest(bool on);
// Tests only: pieces longer than `bytes` use the backtracking encoder (kO200kLongPiece by
// default; 0 = every piece that is not itself a token).
void SetO200kLongPieceForTest(size_t bytes);
// Tests only: how many tokens the backtracking encoder keeps back before reporting them
// (0 = the default); a small value makes its second pass (keep everything) run more often.
void SetO200kBacktrackKeepForTest(size_t tokens);
// Tests only: how many long pieces needed that second pass since the process started.
uint64_t O200kBacktrackRetriesForTest();
// Tests only: how many tokens the backtracking encoder tried first, and took, as the token a
// long run of one byte merges into, since the process started.
uint64_t O200kRunTokenStepsForTest();
// Tests only: which token the encoder takes first inside a long run of one byte: 0 the one
// such runs merge into (the default), 1 the longest token of that byte, 2 the token of two
// such bytes if there is one (else the byte). 1 and 2 are mostly wrong, so the encoder has
// to go back over them.
void SetO200kRunTokenForTest(int choice);
// Tests only. false makes the backtracking encoder check every pair by merging its bytes
// instead of walking the merge-tree spines (the reference for that walk); default true.
void SetO200kSpineCheckForTest(bool on);
// Tests only. false makes the backtracking encoder walk the spines of every pair of tokens of
// up to 2 bytes instead of remembering the answers in its table of such pairs; default true.
void SetO200kShortPairsForTest(bool on);
// Tests only. false makes counting merge every piece whole instead of cutting it where two
// neighbouring bytes occur together in no token (the reference for those cuts); default true.
void SetO200kPairCutsForTest(bool on);
// Tests only. false makes counting merge every long piece that is one byte's run between at
// most 7 bytes each side, instead of once per description (CountCache's run memo); default true.
void SetO200kRunMemoForTest(bool on);
// Tests only. false makes every merge start from single bytes instead of merge units (code
// points whose bytes always become one token first, U+FFFD among them; the reference for that
// start); default true.
void SetO200kUnitsForTest(bool on);
// Tests only. false makes pieces of up to 64 parts use the heap merge too instead of the stack
// merge (the reference for the stack merge); default true.
void SetO200kSmallMergeForTest(bool on);
// Tests only. false makes the stack merge use its portable variant instead of the one compiled
// for AVX2 (on processors that have AVX2; the reference for it); default true.
void SetO200kSimdForTest(bool on);
// Tests only: whether this process runs the AVX2 variant of the stack merge (when allowed).
bool O200kHasSimdMergeForTest();
// Tests only: text with ill-formed bytes is sanitized and counted in blocks of at least this
// many bytes (0 = the default, 64 KiB).
void SetO200kSanitizeBlockForTest(size_t bytes);

}  // namespace caveman::internal

#endif  // CAVEMAN_STREAM_INTERNAL_O200K_H_
