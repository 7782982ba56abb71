// Token counting (§7): exact o200k_base BPE with the vocabulary embedded in the library, and
// the approx-chars/4 fallback.
//
// Thread-safety: a TokenCounter is immutable after construction; Count() and Encode() may be
// called from any number of threads at once. StreamingTokenCount is per stream.
#ifndef CAVEMAN_STREAM_TOKENS_H_
#define CAVEMAN_STREAM_TOKENS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "caveman/stream/export.h"
#include "caveman/stream/status.h"

namespace caveman {

class CAVEMAN_EXPORT TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  // Reported as token_count_basis: "o200k_base" or "approx-chars/4".
  virtual std::string_view name() const = 0;
  // Token count of `text` (any bytes; invalid UTF-8 per §7.2). Empty → 0.
  virtual uint64_t Count(std::string_view text) const = 0;
};

// The process-wide default: o200k_base from the embedded vocabulary (verified by SHA-256 on
// first use), or approx-chars/4 if the vocabulary fails to load or verify.
CAVEMAN_EXPORT const TokenCounter& DefaultTokenCounter();

// approx-chars/4 (§7.3): 0 for empty, else max(1, floor(code points / 4)), each invalid byte
// one code point.
CAVEMAN_EXPORT const TokenCounter& ApproxTokenCounter();
CAVEMAN_EXPORT uint64_t ApproxTokenCount(std::string_view text);

// Exact o200k_base. Errors: kCorruption when the embedded vocabulary does not verify.
CAVEMAN_EXPORT Result<const TokenCounter*> O200kCounter();
// Token ids of `text` (encode_ordinary). REQUIRES: O200kCounter() succeeded.
CAVEMAN_EXPORT std::vector<uint32_t> O200kEncode(std::string_view text);

// Counts a stream chunk by chunk with totals identical to Count(whole) (§7.4): text after the
// last count cut (LastCountCut: §7.4's safe cuts and indented line starts) is carried into
// the next chunk, so memory is one chunk plus that carry (which grows only while no cut
// appears, e.g. one huge line). With approx-chars/4 it sums code points and applies the
// formula once in Finish().
class CAVEMAN_EXPORT StreamingTokenCount {
 public:
  explicit StreamingTokenCount(const TokenCounter& counter) : counter_(counter) {}
  void Feed(std::string_view chunk);
  // Counts the carried tail; returns the total. The object may then be reused from zero.
  uint64_t Finish();
  // Bytes held back for the next Feed (the text after the last cut seen): always the last
  // carried_bytes() bytes fed.
  size_t carried_bytes() const { return carry_.size(); }
  // Tokens of everything fed except the carried bytes (o200k_base only: the count of text
  // that ends at a cut). Count(fed) = counted_tokens() + Count(the carried bytes).
  uint64_t counted_tokens() const;
  // Drops the carried bytes (their memory too) and the total, uncounted.
  void Reset();

 private:
  const TokenCounter& counter_;
  std::string carry_;
  uint64_t total_ = 0;
};

// StreamingTokenCount on a worker thread: Feed copies the chunk into a bounded queue (at most
// kMaxQueued chunks, so memory stays bounded) and returns; the worker counts while the caller
// hashes, spools and compresses the same bytes. Totals equal StreamingTokenCount's.
// Thread-safety: Feed/Finish from one producer thread.
class CAVEMAN_EXPORT BackgroundTokenCount {
 public:
  explicit BackgroundTokenCount(const TokenCounter& counter);
  ~BackgroundTokenCount();  // joins the worker (discarding the count) if Finish was not called
  BackgroundTokenCount(const BackgroundTokenCount&) = delete;
  BackgroundTokenCount& operator=(const BackgroundTokenCount&) = delete;
  void Feed(std::string_view chunk);
  // The total; 0 when memory ran out while counting (then complete() is false). Once only.
  uint64_t Finish();
  // After Finish(): false when the worker ran out of memory (std::bad_alloc, caught there)
  // and the count is unknown.
  bool complete() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Largest p in (0, text.size()) such that cutting `text` before byte p is count-additive
// (§7.4 safe cut: byte p-1 is LF and the code point starting at p is neither White_Space nor
// '/'), or 0 if none exists. p == text.size() is never returned, and neither is a p whose
// code point is cut off at the end of `text`: what follows is unknown.
// Valid for any TokenCounter whose count is additive at those cuts (o200k_base);
// StreamingTokenCount handles approx-chars/4 itself.
CAVEMAN_EXPORT size_t LastSafeCut(std::string_view text);
// The same with the safe cuts widened to indented lines: also p where byte p-1 is LF, then a
// run of spaces and tabs, then an ASCII byte that is not White_Space ('/' included). Still
// count-additive for o200k_base (docs/DECISIONS.md, "Count cuts"); indented JSON, YAML and
// code have one at nearly every line, where LastSafeCut has none.
CAVEMAN_EXPORT size_t LastCountCut(std::string_view text);

}  // namespace caveman

#endif  // CAVEMAN_STREAM_TOKENS_H_
