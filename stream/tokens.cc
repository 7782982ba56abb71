#include "caveman/stream/tokens.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <thread>

#include "stream/internal/o200k.h"
#include "stream/internal/o200k_classes.h"
#include "stream/check.h"
#include "stream/utf8_scan.h"

namespace caveman {
namespace {

constexpr std::string_view kApproxName = "approx-chars/4";
constexpr uint64_t kCharsPerToken = 4;

class ApproxCounter final : public TokenCounter {
 public:
  std::string_view name() const override { return kApproxName; }
  uint64_t Count(std::string_view text) const override { return ApproxTokenCount(text); }
};

uint64_t ApproxFromCodePoints(uint64_t code_points) {
  if (code_points == 0) return 0;
  return code_points / kCharsPerToken > 0 ? code_points / kCharsPerToken : 1;
}

// The o200k tokenizer over the embedded tables (built from the vocabulary at build time).
// Never destroyed: counting may still happen from other static destructors at exit.
const Result<std::unique_ptr<internal::O200kTokenizer>>& O200kState() {
  static const auto* const state = new Result<std::unique_ptr<internal::O200kTokenizer>>(
      internal::O200kTokenizer::FromTables(internal::EmbeddedO200kTables()));
  return *state;
}

// Whether the code point starting at text[p] allows a §7.4 cut right before it (after an
// LF): neither White_Space nor '/'. A code point that the bytes present do not determine yet
// (a truncated sequence at the end) does not.
bool SafeAfterLf(const uint8_t* text, size_t size, size_t p) {
  const uint8_t b = text[p];
  if (b < 0x80) {
    return b != '/' && (internal::CodePointClasses::Get().ascii()[b] & internal::kClsSpace) == 0;
  }
  const int len = internal::Utf8SeqLen(text + p, size - p);
  if (len == static_cast<int>(internal::Utf8Seq::kTruncated)) return false;
  if (len == static_cast<int>(internal::Utf8Seq::kInvalid)) return true;  // U+FFFD: a symbol
  const uint32_t cp = internal::DecodeWellFormed(text + p, len);
  return (internal::CodePointClasses::Get().Of(cp) & internal::kClsSpace) == 0;
}

// Whether a cut before byte p of `text` is count-additive by §7.4: byte p-1 is LF and the
// code point at p allows it (SafeAfterLf).
bool IsSafeCutAt(const uint8_t* text, size_t size, size_t p) {
  return p > 0 && p < size && text[p - 1] == '\n' && SafeAfterLf(text, size, p);
}

// The cut after an LF right before text[p] (the LF itself need not be in `text`): §7.4's
// rule, or its widening to indented lines, the line memo's cuts (docs/DECISIONS.md, "Line
// memo of the token counter", "Count cuts"): a run of spaces and tabs, then an ASCII byte
// that is not White_Space ('/' included). No piece spans such a place: the LF ends its piece
// because no LF, CR or '/' follows it, and the indentation starts a piece of its own. A run
// that reaches the end of `text` is no cut (what follows is unknown).
bool CountCutFollows(const uint8_t* text, size_t size, size_t p) {
  if (p >= size) return false;
  if (text[p] != ' ' && text[p] != '\t') return SafeAfterLf(text, size, p);
  size_t q = p;
  while (q < size && (text[q] == ' ' || text[q] == '\t')) ++q;
  return q < size && text[q] < 0x80 && (internal::CodePointClasses::Get().ascii()[text[q]] & internal::kClsSpace) == 0;
}

bool IsCountCutAt(const uint8_t* text, size_t size, size_t p) {
  return p > 0 && p < size && text[p - 1] == '\n' && CountCutFollows(text, size, p);
}

// Smallest count cut p >= from in text, or 0 if none.
size_t FirstCountCutFrom(std::string_view text, size_t from) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  size_t p = from == 0 ? 1 : from;
  while (p < text.size()) {
    if (s[p - 1] == '\n') {
      if (IsCountCutAt(s, text.size(), p)) return p;
      ++p;
      continue;
    }
    const void* nl = std::memchr(s + p, '\n', text.size() - p);
    if (nl == nullptr) return 0;
    p = static_cast<size_t>(static_cast<const uint8_t*>(nl) - s) + 1;
  }
  return 0;
}

// Largest p in (0, text.size()) with is_cut(s, size, p), or 0.
template <class IsCut>
size_t LastCut(std::string_view text, IsCut is_cut) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  size_t end = text.size();
  // Scan backwards over the LFs; most candidates are cuts, so this stops early.
  while (end > 0) {
    const void* nl = memrchr(s, '\n', end);
    if (nl == nullptr) return 0;
    const size_t p = static_cast<size_t>(static_cast<const uint8_t*>(nl) - s) + 1;
    if (is_cut(s, text.size(), p)) return p;
    end = p - 1;
  }
  return 0;
}

}  // namespace

uint64_t ApproxTokenCount(std::string_view text) { return ApproxFromCodePoints(internal::CountCodePoints(text)); }

const TokenCounter& ApproxTokenCounter() {
  static const ApproxCounter counter;
  return counter;
}

Result<const TokenCounter*> O200kCounter() {
  const auto& state = O200kState();
  if (!state.ok()) return state.status();
  return static_cast<const TokenCounter*>(state.value().get());
}

const TokenCounter& DefaultTokenCounter() {
  // §7.3: a vocabulary that does not load or verify degrades to approx-chars/4.
  static const TokenCounter* const counter = [] {
    const auto& state = O200kState();
    return state.ok() ? static_cast<const TokenCounter*>(state.value().get()) : &ApproxTokenCounter();
  }();
  return *counter;
}

std::vector<uint32_t> O200kEncode(std::string_view text) {
  std::vector<uint32_t> ids;
  const auto& state = O200kState();
  CAVEMAN_DCHECK(state.ok());
  if (state.ok()) state.value()->Encode(text, &ids);
  return ids;
}

size_t LastSafeCut(std::string_view text) { return LastCut(text, IsSafeCutAt); }

size_t LastCountCut(std::string_view text) { return LastCut(text, IsCountCutAt); }

void StreamingTokenCount::Reset() {
  std::string().swap(carry_);
  total_ = 0;
}

uint64_t StreamingTokenCount::counted_tokens() const {
  CAVEMAN_DCHECK(counter_.name() != kApproxName);
  return total_;
}

// Memory: carry_ holds only the text after the last safe cut found; each chunk is counted in
// place between its first and last safe cut, so only the text up to the first cut is copied.
void StreamingTokenCount::Feed(std::string_view chunk) {
  if (chunk.empty()) return;
  size_t first = 0;  // first safe cut in chunk; 0 = right before it
  bool cut_at_start = false;
  if (!carry_.empty() && carry_.back() == '\n') {
    // A cut between carry_ and chunk: judged from the chunk's bytes behind that LF.
    cut_at_start = CountCutFollows(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size(), 0);
  }
  if (!cut_at_start) {
    first = FirstCountCutFrom(chunk, 1);
    if (first == 0) {
      carry_.append(chunk);  // no safe cut yet: keep accumulating
      return;
    }
  }
  const size_t last = LastCountCut(chunk);  // >= first
  // approx-chars/4 is not additive as a formula, but its code point count is: sum those and
  // apply the formula in Finish().
  const bool approx = counter_.name() == kApproxName;
  auto add = [&](std::string_view part) { total_ += approx ? internal::CountCodePoints(part) : counter_.Count(part); };
  carry_.append(chunk.substr(0, first));
  add(carry_);
  if (last > first) add(chunk.substr(first, last - first));
  carry_.assign(chunk.substr(std::max(first, last)));
}

uint64_t StreamingTokenCount::Finish() {
  uint64_t total;
  if (counter_.name() == kApproxName) {
    total = ApproxFromCodePoints(total_ + internal::CountCodePoints(carry_));
  } else {
    total = total_ + counter_.Count(carry_);
  }
  carry_.clear();
  total_ = 0;
  return total;
}

struct BackgroundTokenCount::Impl {
  static constexpr size_t kMaxQueued = 4;
  explicit Impl(const TokenCounter& c) : counter(c), worker([this] { Run(); }) {}
  void Run() {
    for (;;) {
      std::string chunk;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [this] { return !queue.empty() || done; });
        if (queue.empty()) return;
        chunk = std::move(queue.front());
        queue.pop_front();
      }
      cv.notify_all();
      if (!failed) {
        try {
          counter.Feed(chunk);
        } catch (const std::bad_alloc&) {
          // Issue 15: not out of the thread (std::terminate); the count stops here and the
          // queue is still drained, so Feed never waits for ever.
          failed = true;
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      free.push_back(std::move(chunk));  // recycled: no allocation (or mmap) per chunk
    }
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_all();
    if (worker.joinable()) worker.join();
  }
  StreamingTokenCount counter;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> queue;
  std::vector<std::string> free;
  bool done = false;
  bool failed = false;  // worker only until Stop() joins it
  std::thread worker;   // last: starts after the other members exist
};

BackgroundTokenCount::BackgroundTokenCount(const TokenCounter& counter) : impl_(std::make_unique<Impl>(counter)) {}

BackgroundTokenCount::~BackgroundTokenCount() {
  if (impl_) impl_->Stop();
}

void BackgroundTokenCount::Feed(std::string_view chunk) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait(lock, [this] { return impl_->queue.size() < Impl::kMaxQueued; });
  std::string buf;
  if (!impl_->free.empty()) {
    buf = std::move(impl_->free.back());
    impl_->free.pop_back();
  }
  buf.assign(chunk);
  impl_->queue.push_back(std::move(buf));
  lock.unlock();
  impl_->cv.notify_all();
}

uint64_t BackgroundTokenCount::Finish() {
  impl_->Stop();
  if (impl_->failed) return 0;
  try {
    return impl_->counter.Finish();
  } catch (const std::bad_alloc&) {
    impl_->failed = true;
    return 0;
  }
}

bool BackgroundTokenCount::complete() const { return !impl_->failed; }

}  // namespace caveman
