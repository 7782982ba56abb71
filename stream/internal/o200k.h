// The o200k_base tokenizer (§7.1–7.2): vocabulary parsing and verification, the
// pre-tokenizer (a hand-written matcher for the exact o200k pattern) and byte-pair merging.
// Public callers use stream/tokens.h; this header exists for tokens.cc and the tests.
//
// Thread-safety: an O200kTokenizer is immutable after construction; Count() and Encode()
// may run concurrently (each thread keeps its own small cache of merged pieces).
#ifndef CAVEMAN_STREAM_INTERNAL_O200K_H_
#define CAVEMAN_STREAM_INTERNAL_O200K_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "caveman/stream/status.h"
#include "caveman/stream/tokens.h"

namespace caveman::internal {

// SHA-256 of the only vocabulary accepted (§7.1), lowercase hex.
inline constexpr std::string_view kO200kSha256Hex =
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d";
inline constexpr std::string_view kO200kName = "o200k_base";

// The tiktoken file embedded in the library (stream/o200k_vocab.S).
std::string_view EmbeddedO200kVocabulary();

class O200kTokenizer final : public TokenCounter {
 public:
  // Parses `tiktoken` ("base64 SP rank" lines) after checking its SHA-256 against
  // kO200kSha256Hex. Errors: kCorruption (hash mismatch or malformed content).
  static Result<std::unique_ptr<O200kTokenizer>> Create(std::string_view tiktoken);
  ~O200kTokenizer() override;

  std::string_view name() const override { return kO200kName; }
  uint64_t Count(std::string_view text) const override;
  // Appends the token ids of `text` (encode_ordinary) to `ids`.
  void Encode(std::string_view text, std::vector<uint32_t>* ids) const;

  // Number of vocabulary entries (199,998 for o200k_base).
  size_t vocabulary_size() const;

 private:
  struct Vocabulary;
  explicit O200kTokenizer(std::unique_ptr<Vocabulary> vocab);
  uint64_t CountWellFormed(std::string_view text) const;
  void EncodeWellFormed(std::string_view text, std::vector<uint32_t>* ids) const;

  std::unique_ptr<Vocabulary> vocab_;
};

// The pre-tokenizer pieces of well-formed UTF-8 `text`, in order; concatenated they give
// back `text`. REQUIRES: text is well-formed UTF-8 (see SanitizeUtf8).
std::vector<std::string_view> O200kPieces(std::string_view text);

// Tests only: false makes pieces of any length use the plain heap merge (the reference the
// windowed merge of long pieces must equal). Default true.
void SetO200kWindowedMergeForTest(bool on);

}  // namespace caveman::internal

#endif  // CAVEMAN_STREAM_INTERNAL_O200K_H_
