#include "stream/internal/o200k.h"

#include <atomic>

#include <algorithm>
#include <cstring>
#include <queue>
#include <span>
#include <utility>

#include "stream/internal/o200k_classes.h"
#include "stream/internal/utf8_scan.h"
#include "stream/sha256.h"

namespace caveman::internal {
namespace {

constexpr uint32_t kNoRank = UINT32_MAX;
// Pieces up to this many bytes merge with the plain quadratic loop over a stack array;
// longer ones (base64 blobs, long identifiers) use a heap so the cost stays O(n log n).
constexpr size_t kSmallPiece = 64;
// Pieces longer than this merge window by window (bounded work per piece, see MergeWindowed).
constexpr size_t kWindowedPiece = 4096;
constexpr size_t kWindow = 2048;
constexpr size_t kMargin = 256;  // 2 × the longest o200k token (128 bytes)
constexpr int kMaxBackoff = 4;
// Tests switch the windowed merge off to compare with the plain heap merge.
std::atomic<bool> g_windowed_merge{true};
// Merged pieces up to this length are remembered per thread (see CountCache).
constexpr size_t kCacheKeyMax = 30;
constexpr size_t kCacheEntries = 4096;

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Fast hash of short byte strings (pieces are a few bytes long on average).
uint64_t HashBytes(const uint8_t* p, size_t n) {
  constexpr uint64_t kMulA = 0x9E3779B97F4A7C15ULL;
  constexpr uint64_t kMulB = 0xBF58476D1CE4E5B9ULL;
  uint64_t h = (n + 1) * kMulA;
  while (n > 8) {
    h = (h ^ Load64(p)) * kMulB;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  uint64_t tail;
  if (n >= 4) {
    tail = (uint64_t{Load32(p)} << 32) | Load32(p + n - 4);
  } else if (n > 0) {
    tail = (uint64_t{p[0]} << 16) | (uint64_t{p[n >> 1]} << 8) | p[n - 1];
  } else {
    tail = 0;
  }
  h = (h ^ tail) * kMulA;
  h ^= h >> 29;
  h *= kMulB;
  h ^= h >> 32;
  return h;
}

struct Base64Table {
  int8_t value[256];
  constexpr Base64Table() : value() {
    for (int c = 0; c < 256; ++c) value[c] = -1;
    for (int k = 0; k < 26; ++k) {
      value['A' + k] = static_cast<int8_t>(k);
      value['a' + k] = static_cast<int8_t>(26 + k);
    }
    for (int k = 0; k < 10; ++k) value['0' + k] = static_cast<int8_t>(52 + k);
    value[static_cast<int>('+')] = 62;
    value[static_cast<int>('/')] = 63;
  }
};
constexpr Base64Table kBase64;

int Base64Value(char c) { return kBase64.value[static_cast<uint8_t>(c)]; }

// Standard base64 with '=' padding, appended to *out; false on any malformed input.
bool DecodeBase64(std::string_view in, std::string* out) {
  if (in.empty() || in.size() % 4 != 0) return false;
  size_t pad = 0;
  while (pad < 2 && in[in.size() - 1 - pad] == '=') ++pad;
  const size_t old_size = out->size();
  out->resize(old_size + in.size() / 4 * 3);
  char* dst = out->data() + old_size;
  for (size_t k = 0; k < in.size(); k += 4) {
    const bool last = k + 4 == in.size();
    int32_t v[4];
    for (int j = 0; j < 4; ++j) {
      v[j] = last && j >= 4 - static_cast<int>(pad) ? 0 : Base64Value(in[k + j]);
    }
    if ((v[0] | v[1] | v[2] | v[3]) < 0) return false;
    const uint32_t group = (static_cast<uint32_t>(v[0]) << 18) |
                           (static_cast<uint32_t>(v[1]) << 12) |
                           (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    *dst++ = static_cast<char>(group >> 16);
    *dst++ = static_cast<char>((group >> 8) & 0xFF);
    *dst++ = static_cast<char>(group & 0xFF);
  }
  out->resize(out->size() - pad);
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Vocabulary: token bytes by rank plus an open-addressing map bytes → rank.

struct O200kTokenizer::Vocabulary {
  // tag = high hash bits, checked before touching the token bytes (another cache line).
  struct Slot {
    uint32_t tag;
    uint32_t rank;  // kNoRank = empty
  };

  // Views of the tables: into the owned_ vectors after Parse, into the embedded tables
  // (EmbeddedO200kTables) after View.
  std::string_view bytes;              // all tokens, concatenated in rank order
  std::span<const uint32_t> offsets;  // rank → offset in bytes; offsets[size] = bytes.size()
  std::span<const Slot> slots;
  uint64_t mask = 0;
  size_t max_len = 0;

  std::string owned_bytes;
  std::vector<uint32_t> owned_offsets;
  std::vector<Slot> owned_slots;

  size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }

  uint32_t Rank(const uint8_t* p, size_t n) const {
    if (n > max_len) return kNoRank;
    const uint64_t h = HashBytes(p, n);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (uint64_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots[i];
      if (s.rank == kNoRank) return kNoRank;
      if (s.tag == tag && offsets[s.rank + 1] - offsets[s.rank] == n &&
          std::memcmp(bytes.data() + offsets[s.rank], p, n) == 0) {
        return s.rank;
      }
    }
  }

  // Parses the tiktoken text. The file lists ranks in order, so tokens are decoded straight
  // into `bytes`; any other order is rearranged afterwards.
  Status Parse(std::string_view text) {
    std::vector<uint32_t> line_rank;  // rank of the k-th line
    std::vector<uint32_t> line_offset = {0};
    std::string& bytes = owned_bytes;
    bytes.clear();
    bytes.reserve(text.size() / 2);
    size_t pos = 0;
    size_t line_no = 0;
    bool in_order = true;
    while (pos < text.size()) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string_view::npos) eol = text.size();
      const std::string_view line = text.substr(pos, eol - pos);
      pos = eol + 1;
      ++line_no;
      if (line.empty()) continue;
      const size_t sp = line.find(' ');
      const std::string_view digits =
          sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
      uint64_t rank = 0;
      bool rank_ok = !digits.empty() && digits.size() <= 9;
      for (char c : digits) {
        rank_ok = rank_ok && c >= '0' && c <= '9';
        rank = rank * 10 + static_cast<uint64_t>(c - '0');
      }
      if (!rank_ok || !DecodeBase64(line.substr(0, sp), &bytes)) {
        return Status::Corruption("o200k vocabulary: malformed line " + std::to_string(line_no));
      }
      in_order = in_order && rank == line_rank.size();
      line_rank.push_back(static_cast<uint32_t>(rank));
      line_offset.push_back(static_cast<uint32_t>(bytes.size()));
    }
    const size_t count = line_rank.size();
    if (count == 0) return Status::Corruption("o200k vocabulary: empty");
    if (in_order) {
      owned_offsets = std::move(line_offset);
    } else {
      // Ranks must be dense (0..count-1, each once) so that rank order is token order.
      std::vector<uint32_t> line_of(count, kNoRank);
      for (uint32_t k = 0; k < count; ++k) {
        if (line_rank[k] >= count || line_of[line_rank[k]] != kNoRank) {
          return Status::Corruption("o200k vocabulary: ranks are not dense");
        }
        line_of[line_rank[k]] = k;
      }
      std::string sorted;
      sorted.reserve(bytes.size());
      owned_offsets.assign(count + 1, 0);
      for (size_t r = 0; r < count; ++r) {
        owned_offsets[r] = static_cast<uint32_t>(sorted.size());
        const uint32_t k = line_of[r];
        sorted.append(bytes, line_offset[k], line_offset[k + 1] - line_offset[k]);
      }
      owned_offsets[count] = static_cast<uint32_t>(sorted.size());
      bytes = std::move(sorted);
    }
    const std::vector<uint32_t>& offsets = owned_offsets;
    for (size_t r = 0; r < count; ++r) max_len = std::max<size_t>(max_len, offsets[r + 1] - offsets[r]);

    size_t capacity = 1;
    while (capacity < count * 5 / 2) capacity <<= 1;  // load factor <= 0.4
    std::vector<Slot>& slots = owned_slots;
    slots.assign(capacity, Slot{0, kNoRank});
    mask = capacity - 1;
    // Hash everything first so the (cache-missing) slot of a later token can be prefetched.
    std::vector<uint64_t> hashes(count);
    for (size_t r = 0; r < count; ++r) {
      hashes[r] = HashBytes(reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]),
                            offsets[r + 1] - offsets[r]);
    }
    constexpr size_t kPrefetchDistance = 16;
    for (size_t r = 0; r < count; ++r) {
      if (r + kPrefetchDistance < count) {
        __builtin_prefetch(&slots[hashes[r + kPrefetchDistance] & mask], 1);
      }
      const auto tag = static_cast<uint32_t>(hashes[r] >> 32);
      const size_t len = offsets[r + 1] - offsets[r];
      uint64_t i = hashes[r] & mask;
      for (; slots[i].rank != kNoRank; i = (i + 1) & mask) {
        const Slot& other = slots[i];
        if (other.tag == tag && offsets[other.rank + 1] - offsets[other.rank] == len &&
            std::memcmp(bytes.data() + offsets[other.rank], bytes.data() + offsets[r], len) == 0) {
          return Status::Corruption("o200k vocabulary: duplicate token");
        }
      }
      slots[i] = Slot{tag, static_cast<uint32_t>(r)};
    }
    this->bytes = owned_bytes;
    this->offsets = owned_offsets;
    this->slots = owned_slots;
    // Byte-pair merging starts from single bytes, so every byte must be a token.
    for (int b = 0; b < 256; ++b) {
      const auto byte = static_cast<uint8_t>(b);
      if (Rank(&byte, 1) == kNoRank) {
        return Status::Corruption("o200k vocabulary: a single byte is missing");
      }
    }
    return Status::OK();
  }

  // Byte-pair merging of the piece p[0, n): calls part(begin, end) for each resulting token,
  // in order. Repeatedly merges the adjacent pair whose concatenation has the lowest rank,
  // leftmost on ties (§7.2).
  //
  // Pieces longer than kWindowedPiece (one 64 MiB run of a letter is one piece) merge window
  // by window so the work and memory per piece stay bounded: see MergeWindowed. `part` must
  // then tolerate a rollback: Merge returns the number of parts it reported before the
  // windowed pass was abandoned (0 when it succeeded or was not used); the caller discards
  // that many parts, which MergeFull reports afresh.
  template <class PartFn>
  size_t Merge(const uint8_t* p, size_t n, PartFn&& part) const {
    if (n <= kSmallPiece) {
      MergeSmall(p, n, part);
      return 0;
    }
    if (n <= kWindowedPiece || !g_windowed_merge.load(std::memory_order_relaxed)) {
      MergeLarge(p, n, part);
      return 0;
    }
    size_t reported = 0;
    auto counted = [&](uint32_t b, uint32_t e) {
      ++reported;
      part(b, e);
    };
    if (MergeWindowed(p, n, counted)) return 0;
    MergeLarge(p, n, part);
    return reported;
  }

  // Merges p[0, n) exactly as MergeLarge would, or returns false (having reported a prefix of
  // parts the caller discards). BPE output is the unique tokenisation in which every token
  // is itself the merge result of its bytes and every adjacent pair of tokens merges back to
  // exactly that pair ("compatible"). So: merge a window of kWindow bytes, keep its tokens
  // that end before the last kMargin bytes, and start the next window at the end of the
  // last kept token; each seam (last kept token, first token of the next window) is
  // verified compatible. A seam that fails is retried from the held token's start (up to
  // kMaxBackoff tokens back); if that does not settle, false (MergeLarge takes over).
  // Work: O(n / (kWindow - kMargin) * kWindow log kWindow), memory O(kWindow).
  template <class PartFn>
  bool MergeWindowed(const uint8_t* p, size_t n, PartFn& part) const {
    struct Tok {
      uint32_t b, e;
    };
    std::vector<Tok> window;  // tokens of the current window, absolute offsets
    std::vector<Tok> held;    // verified-in-window tokens not yet reported (seam pending)
    window.reserve(kWindow);
    struct Memo {
      uint64_t hash = 0;
      std::string bytes;
      std::vector<Tok> toks;
    };
    constexpr size_t kMemoEntries = 8;
    Memo memo[kMemoEntries];
    size_t start = 0;
    int backoff = 0;
    while (start < n) {
      const size_t len = std::min(kWindow, n - start);
      const bool last = start + len == n;
      window.clear();
      // Runs of one letter (or any short period) give the same window bytes again and again:
      // a few windows are remembered by content (exact bytes compared, so a hit is exact).
      const uint64_t h = HashBytes(p + start, len);
      Memo& m = memo[h & (kMemoEntries - 1)];
      if (m.hash == h && m.bytes.size() == len && std::memcmp(m.bytes.data(), p + start, len) == 0) {
        for (const Tok& t : m.toks) {
          window.push_back(Tok{static_cast<uint32_t>(start + t.b), static_cast<uint32_t>(start + t.e)});
        }
      } else {
        auto collect = [&](uint32_t b, uint32_t e) {
          window.push_back(Tok{static_cast<uint32_t>(start + b), static_cast<uint32_t>(start + e)});
        };
        MergeLarge(p + start, len, collect);
        m.hash = h;
        m.bytes.assign(reinterpret_cast<const char*>(p + start), len);
        m.toks.clear();
        for (const Tok& t : window) {
          m.toks.push_back(Tok{static_cast<uint32_t>(t.b - start), static_cast<uint32_t>(t.e - start)});
        }
      }
      if (!held.empty() && !Compatible(p, held.back().b, held.back().e, window.front().e)) {
        if (++backoff > kMaxBackoff || held.size() < 2) return false;
        start = held.back().b;  // re-merge from the held token's start
        held.pop_back();
        continue;
      }
      backoff = 0;
      size_t keep = window.size();
      if (!last) {
        while (keep > 1 && window[keep - 1].e + kMargin > start + len) --keep;
        if (keep == window.size()) keep = window.size() - 1;  // always leave a seam
        if (keep == 0) return false;
      }
      // Everything held before this window is now settled except the seam token itself,
      // which the check above just verified against this window's first token.
      for (const Tok& t : held) part(t.b, t.e);
      held.clear();
      if (last) {
        for (const Tok& t : window) part(t.b, t.e);
        return true;
      }
      // Keep the last kMaxBackoff kept tokens back so a failing seam can be re-merged.
      const size_t report = keep > static_cast<size_t>(kMaxBackoff) ? keep - kMaxBackoff : 0;
      for (size_t k = 0; k < report; ++k) part(window[k].b, window[k].e);
      held.assign(window.begin() + static_cast<std::ptrdiff_t>(report),
                  window.begin() + static_cast<std::ptrdiff_t>(keep));
      start = window[keep - 1].e;
    }
    for (const Tok& t : held) part(t.b, t.e);
    return true;
  }

  // Whether tokens p[b, m) and p[m, e) merge back to exactly themselves (and each is a token).
  bool Compatible(const uint8_t* p, size_t b, size_t m, size_t e) const {
    if (Rank(p + b, m - b) == kNoRank || Rank(p + m, e - m) == kNoRank) return false;
    size_t parts = 0;
    bool split_at_m = false;
    auto check = [&](uint32_t pb, uint32_t) {
      if (b + pb == m) split_at_m = true;
      ++parts;
    };
    if (e - b <= kSmallPiece) {
      MergeSmall(p + b, e - b, check);
    } else {
      MergeLarge(p + b, e - b, check);
    }
    return parts == 2 && split_at_m;
  }

  template <class PartFn>
  void MergeSmall(const uint8_t* p, size_t n, PartFn& part) const {
    uint32_t starts[kSmallPiece + 1];
    uint32_t pair[kSmallPiece];  // pair[k] = rank of parts k and k+1 joined
    size_t parts = n;
    for (size_t k = 0; k <= n; ++k) starts[k] = static_cast<uint32_t>(k);
    for (size_t k = 0; k + 1 < parts; ++k) pair[k] = Rank(p + k, 2);
    while (parts > 1) {
      uint32_t best = kNoRank;
      size_t at = 0;
      for (size_t k = 0; k + 1 < parts; ++k) {
        if (pair[k] < best) {
          best = pair[k];
          at = k;
        }
      }
      if (best == kNoRank) break;
      std::memmove(starts + at + 1, starts + at + 2, (parts - at - 1) * sizeof starts[0]);
      if (at + 2 < parts) {
        std::memmove(pair + at + 1, pair + at + 2, (parts - at - 2) * sizeof pair[0]);
      }
      --parts;
      if (at + 1 < parts) pair[at] = Rank(p + starts[at], starts[at + 2] - starts[at]);
      if (at > 0) pair[at - 1] = Rank(p + starts[at - 1], starts[at + 1] - starts[at - 1]);
    }
    for (size_t k = 0; k < parts; ++k) part(starts[k], starts[k + 1]);
  }

  template <class PartFn>
  void MergeLarge(const uint8_t* p, size_t n, PartFn& part) const {
    // Parts are named by their first byte offset; next[i] is the following part's start (n
    // at the end). Heap entries (rank << 32 | start) go stale when a part merges away or
    // its right pair changes; pair_rank[] tells which entries are current.
    std::vector<uint32_t> next(n), prev(n), pair_rank(n, kNoRank);
    std::vector<uint8_t> alive(n, 1);
    std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> heap;
    auto pair_of = [&](uint32_t i) -> uint32_t {
      const uint32_t j = next[i];
      if (j >= n) return kNoRank;
      const uint32_t end = next[j];
      return Rank(p + i, end - i);
    };
    for (uint32_t i = 0; i < n; ++i) {
      next[i] = i + 1;
      prev[i] = i == 0 ? kNoRank : i - 1;
    }
    for (uint32_t i = 0; i + 1 < n; ++i) {
      pair_rank[i] = Rank(p + i, 2);
      if (pair_rank[i] != kNoRank) heap.push((uint64_t{pair_rank[i]} << 32) | i);
    }
    while (!heap.empty()) {
      const uint64_t top = heap.top();
      heap.pop();
      const auto rank = static_cast<uint32_t>(top >> 32);
      const auto i = static_cast<uint32_t>(top);
      if (!alive[i] || pair_rank[i] != rank) continue;
      const uint32_t j = next[i];
      alive[j] = 0;
      next[i] = next[j];
      if (next[i] < n) prev[next[i]] = i;
      pair_rank[i] = pair_of(i);
      if (pair_rank[i] != kNoRank) heap.push((uint64_t{pair_rank[i]} << 32) | i);
      if (prev[i] != kNoRank) {
        const uint32_t h = prev[i];
        pair_rank[h] = pair_of(h);
        if (pair_rank[h] != kNoRank) heap.push((uint64_t{pair_rank[h]} << 32) | h);
      }
    }
    for (uint32_t i = 0; i < n; i = next[i]) part(i, next[i]);
  }
};

// ---------------------------------------------------------------------------------------
// Pre-tokenizer: the o200k pattern of §7.2, alternatives tried in order at each position
// with the backtracking a leftmost-first regex engine would do. Every code point starts a
// match of some alternative, so pieces tile the text.
//
//   1  [^\r\n\p{L}\p{N}]?[Up]*[Lo]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//   2  [^\r\n\p{L}\p{N}]?[Up]+[Lo]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//   3  \p{N}{1,3}
//   4   ?[^\s\p{L}\p{N}]+[\r\n/]*
//   5  \s*[\r\n]+
//   6  \s+(?!\S)
//   7  \s+
// with Up = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and Lo = [\p{Ll}\p{Lm}\p{Lo}\p{M}].

namespace {

class Pretokenizer {
 public:
  Pretokenizer(std::string_view text, const CodePointClasses& classes)
      : s_(reinterpret_cast<const uint8_t*>(text.data())),
        n_(text.size()),
        classes_(classes),
        ascii_(classes.ascii()) {}

  // End of the piece starting at i. REQUIRES: i < size, i on a code point boundary.
  size_t PieceEnd(size_t i) const {
    const Cp c0 = At(i);
    const bool may_prefix = (c0.cls & (kClsLetter | kClsNumber | kClsCrLf)) == 0;
    // Alternative 1, first with the optional prefix taken, then without.
    if (may_prefix) {
      if (size_t e = LowerTail(i + c0.len)) return e;
    }
    if (size_t e = LowerTail(i)) return e;
    // Alternative 2.
    if (may_prefix) {
      if (size_t e = UpperHead(i + c0.len)) return e;
    }
    if (size_t e = UpperHead(i)) return e;
    // Alternative 3.
    if (c0.cls & kClsNumber) {
      size_t e = i + c0.len;
      for (int k = 1; k < 3 && e < n_; ++k) {
        const Cp c = At(e);
        if (!(c.cls & kClsNumber)) break;
        e += c.len;
      }
      return e;
    }
    // Alternative 4: the optional space only if a symbol follows it.
    {
      size_t q = i;
      if (s_[i] == ' ' && i + 1 < n_ && IsSymbol(At(i + 1).cls)) q = i + 1;
      if (IsSymbol(At(q).cls)) {
        size_t e = q;
        while (e < n_) {
          const Cp c = At(e);
          if (!IsSymbol(c.cls)) break;
          e += c.len;
        }
        while (e < n_ && (s_[e] == '\r' || s_[e] == '\n' || s_[e] == '/')) ++e;
        return e;
      }
    }
    // Alternatives 5–7: c0 is White_Space. Over the whitespace run: 5 ends after its last
    // CR/LF; else 6 takes the run minus its last character (which must then be followed by
    // a non-space) or all of it at the end of the text; else 7 takes the single character.
    size_t e = i;
    size_t last_start = i;
    size_t after_newline = 0;
    while (e < n_) {
      const Cp c = At(e);
      if (!(c.cls & kClsSpace)) break;
      last_start = e;
      e += c.len;
      if (c.cls & kClsCrLf) after_newline = e;
    }
    if (after_newline != 0) return after_newline;
    if (e == i) return i + c0.len;  // unreachable: every code point matches above
    if (e == n_ || last_start == i) return e;
    return last_start;
  }

 private:
  struct Cp {
    uint8_t cls;
    uint8_t len;
  };

  static bool IsSymbol(uint8_t cls) {
    return (cls & (kClsLetter | kClsNumber | kClsSpace)) == 0;
  }

  // REQUIRES: i < n_.
  Cp At(size_t i) const {
    const uint8_t b = s_[i];
    if (b < 0x80) return {ascii_[b], 1};
    const int len = b < 0xE0 ? 2 : (b < 0xF0 ? 3 : 4);
    return {classes_.Of(DecodeWellFormed(s_ + i, len)), static_cast<uint8_t>(len)};
  }

  // [Up]*[Lo]+ then the optional contraction, from s; 0 if no match. [Up]* backtracks to
  // the last position where a [Lo] character can follow it.
  size_t LowerTail(size_t s) const {
    size_t p = s;
    size_t last_lower = SIZE_MAX;
    while (p < n_) {
      const Cp c = At(p);
      if (c.cls & kClsLowerGroup) last_lower = p;
      if (!(c.cls & kClsUpperGroup)) break;
      p += c.len;
    }
    if (last_lower == SIZE_MAX) return 0;
    p = last_lower;
    while (p < n_) {
      const Cp c = At(p);
      if (!(c.cls & kClsLowerGroup)) break;
      p += c.len;
    }
    return Contraction(p);
  }

  // [Up]+[Lo]* then the optional contraction, from s; 0 if no match.
  size_t UpperHead(size_t s) const {
    if (s >= n_) return 0;
    Cp c = At(s);
    if (!(c.cls & kClsUpperGroup)) return 0;
    size_t p = s + c.len;
    while (p < n_ && ((c = At(p)).cls & kClsUpperGroup)) p += c.len;
    while (p < n_ && ((c = At(p)).cls & kClsLowerGroup)) p += c.len;
    return Contraction(p);
  }

  // (?i:'s|'t|'re|'ve|'m|'ll|'d)? at p; case-insensitive for ASCII letters only.
  size_t Contraction(size_t p) const {
    if (p + 1 < n_ && s_[p] == '\'') {
      const uint8_t a = s_[p + 1] | 0x20;
      if (a == 's' || a == 't' || a == 'm' || a == 'd') return p + 2;
      if (p + 2 < n_) {
        const uint8_t b = s_[p + 2] | 0x20;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
          return p + 3;
        }
      }
    }
    return p;
  }

  const uint8_t* s_;
  size_t n_;
  const CodePointClasses& classes_;
  const uint8_t* ascii_;
};

// Per-thread memo of merged piece counts: most pieces that are not whole tokens repeat
// (identifiers, paths, numbers in logs), and merging costs far more than a probe.
// Thread-local because Count() is const and called concurrently; there is only one
// tokenizer per process, and a key includes its bytes, so a stale hit is impossible.
struct CountCache {
  struct Entry {
    uint8_t len = 0xFF;  // 0xFF = empty
    uint8_t count = 0;
    char bytes[kCacheKeyMax];
  };
  Entry entries[kCacheEntries];
  const void* owner = nullptr;
};
static_assert(sizeof(CountCache::Entry) == 32);

CountCache& ThreadCache(const void* owner) {
  thread_local CountCache cache;
  if (cache.owner != owner) {
    // Another tokenizer (only in tests) used this thread: start afresh.
    for (auto& e : cache.entries) e.len = 0xFF;
    cache.owner = owner;
  }
  return cache;
}

}  // namespace

// ---------------------------------------------------------------------------------------

Result<std::unique_ptr<O200kTokenizer>> O200kTokenizer::Create(std::string_view tiktoken) {
  const std::string hex = Sha256::Hex(Sha256::Digest(tiktoken));
  if (hex != kO200kSha256Hex) {
    return Status::Corruption("o200k vocabulary: SHA-256 " + hex + " does not match " +
                              std::string(kO200kSha256Hex));
  }
  auto vocab = std::make_unique<Vocabulary>();
  CAVEMAN_RETURN_IF_ERROR(vocab->Parse(tiktoken));
  CodePointClasses::Get();  // build the tables now rather than inside the first Count()
  return std::unique_ptr<O200kTokenizer>(new O200kTokenizer(std::move(vocab)));
}

namespace {

// Layout of the serialized tables (host byte order: they are built and used on one machine
// type). A 64-byte header, then sections, each starting on a 64-byte boundary:
//   offsets (count + 1 × u32), slots (slot_count × {u32 tag, u32 rank}), token bytes,
//   class index (kBlocks × u16), class leaves (leaf_bytes).
struct TablesHeader {
  char magic[8];
  uint32_t version;
  uint32_t count;
  uint32_t max_len;
  uint32_t slot_count;
  uint32_t bytes_size;
  uint32_t index_count;
  uint32_t leaf_bytes;
  uint32_t reserved[7];
};
static_assert(sizeof(TablesHeader) == 64);
constexpr char kTablesMagic[8] = {'C', 'V', 'O', '2', '0', '0', 'K', '\0'};
constexpr uint32_t kTablesVersion = 1;
constexpr size_t kTablesAlign = 64;

size_t AlignUp(size_t n) { return (n + kTablesAlign - 1) / kTablesAlign * kTablesAlign; }

struct TablesLayout {
  size_t offsets, slots, bytes, index, leaves, end;
};

TablesLayout LayoutOf(const TablesHeader& h) {
  TablesLayout l;
  l.offsets = sizeof(TablesHeader);
  l.slots = AlignUp(l.offsets + (size_t{h.count} + 1) * sizeof(uint32_t));
  l.bytes = AlignUp(l.slots + size_t{h.slot_count} * 2 * sizeof(uint32_t));
  l.index = AlignUp(l.bytes + h.bytes_size);
  l.leaves = AlignUp(l.index + size_t{h.index_count} * sizeof(uint16_t));
  l.end = l.leaves + h.leaf_bytes;
  return l;
}

Status CheckTables(std::string_view tables, TablesHeader* header, TablesLayout* layout) {
  if (tables.size() < sizeof(TablesHeader)) return Status::Corruption("o200k tables: truncated");
  std::memcpy(header, tables.data(), sizeof *header);
  const TablesHeader& h = *header;
  if (std::memcmp(h.magic, kTablesMagic, sizeof kTablesMagic) != 0 || h.version != kTablesVersion) {
    return Status::Corruption("o200k tables: wrong magic or version");
  }
  *layout = LayoutOf(h);
  const bool sizes_ok = h.count > 0 && h.slot_count >= h.count &&
                        (h.slot_count & (h.slot_count - 1)) == 0 &&
                        h.index_count == CodePointClasses::kBlocks && h.leaf_bytes > 0 &&
                        h.leaf_bytes % 256 == 0 && layout->end == tables.size();
  if (!sizes_ok) return Status::Corruption("o200k tables: sizes do not add up");
  uint32_t last_offset;
  std::memcpy(&last_offset, tables.data() + layout->offsets + size_t{h.count} * sizeof(uint32_t),
              sizeof last_offset);
  if (last_offset != h.bytes_size) return Status::Corruption("o200k tables: offsets do not end");
  const auto* index = reinterpret_cast<const uint16_t*>(tables.data() + layout->index);
  for (size_t b = 0; b < h.index_count; ++b) {
    if (size_t{index[b]} * 256 >= h.leaf_bytes) return Status::Corruption("o200k tables: bad index");
  }
  return Status::OK();
}

}  // namespace

Status O200kClassTables(std::string_view tables, const uint16_t** index, const uint8_t** leaves,
                        size_t* leaf_bytes) {
  TablesHeader h;
  TablesLayout l;
  CAVEMAN_RETURN_IF_ERROR(CheckTables(tables, &h, &l));
  *index = reinterpret_cast<const uint16_t*>(tables.data() + l.index);
  *leaves = reinterpret_cast<const uint8_t*>(tables.data() + l.leaves);
  *leaf_bytes = h.leaf_bytes;
  return Status::OK();
}

Result<std::unique_ptr<O200kTokenizer>> O200kTokenizer::FromTables(std::string_view tables) {
  TablesHeader h;
  TablesLayout l;
  CAVEMAN_RETURN_IF_ERROR(CheckTables(tables, &h, &l));
  auto vocab = std::make_unique<Vocabulary>();
  vocab->offsets = std::span<const uint32_t>(
      reinterpret_cast<const uint32_t*>(tables.data() + l.offsets), size_t{h.count} + 1);
  vocab->slots = std::span<const Vocabulary::Slot>(
      reinterpret_cast<const Vocabulary::Slot*>(tables.data() + l.slots), h.slot_count);
  vocab->bytes = tables.substr(l.bytes, h.bytes_size);
  vocab->mask = h.slot_count - 1;
  vocab->max_len = h.max_len;
  return std::unique_ptr<O200kTokenizer>(new O200kTokenizer(std::move(vocab)));
}

void O200kTokenizer::SerializeTables(std::string* out) const {
  const Vocabulary& v = *vocab_;
  const CodePointClasses& classes = CodePointClasses::Get();
  TablesHeader h{};
  std::memcpy(h.magic, kTablesMagic, sizeof kTablesMagic);
  h.version = kTablesVersion;
  h.count = static_cast<uint32_t>(v.size());
  h.max_len = static_cast<uint32_t>(v.max_len);
  h.slot_count = static_cast<uint32_t>(v.slots.size());
  h.bytes_size = static_cast<uint32_t>(v.bytes.size());
  h.index_count = static_cast<uint32_t>(CodePointClasses::kBlocks);
  h.leaf_bytes = static_cast<uint32_t>(classes.leaf_bytes());
  const TablesLayout l = LayoutOf(h);
  const size_t base = out->size();
  out->resize(base + l.end, '\0');
  char* d = out->data() + base;
  std::memcpy(d, &h, sizeof h);
  std::memcpy(d + l.offsets, v.offsets.data(), v.offsets.size_bytes());
  std::memcpy(d + l.slots, v.slots.data(), v.slots.size_bytes());
  std::memcpy(d + l.bytes, v.bytes.data(), v.bytes.size());
  std::memcpy(d + l.index, classes.index(), CodePointClasses::kBlocks * sizeof(uint16_t));
  std::memcpy(d + l.leaves, classes.leaves(), classes.leaf_bytes());
}

O200kTokenizer::O200kTokenizer(std::unique_ptr<Vocabulary> vocab) : vocab_(std::move(vocab)) {}
O200kTokenizer::~O200kTokenizer() = default;

size_t O200kTokenizer::vocabulary_size() const { return vocab_->size(); }

uint64_t O200kTokenizer::Count(std::string_view text) const {
  if (text.empty()) return 0;
  if (FirstInvalidUtf8(text) != text.size()) return CountWellFormed(SanitizeUtf8(text));
  return CountWellFormed(text);
}

void O200kTokenizer::Encode(std::string_view text, std::vector<uint32_t>* ids) const {
  if (text.empty()) return;
  if (FirstInvalidUtf8(text) != text.size()) {
    EncodeWellFormed(SanitizeUtf8(text), ids);
  } else {
    EncodeWellFormed(text, ids);
  }
}

uint64_t O200kTokenizer::CountWellFormed(std::string_view text) const {
  const Vocabulary& vocab = *vocab_;
  const Pretokenizer pre(text, CodePointClasses::Get());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  CountCache& cache = ThreadCache(this);
  uint64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = pre.PieceEnd(i);
    const uint8_t* piece = s + i;
    const size_t len = end - i;
    i = end;
    if (vocab.Rank(piece, len) != kNoRank) {
      ++total;
      continue;
    }
    CountCache::Entry* slot = nullptr;
    if (len <= kCacheKeyMax) {
      slot = &cache.entries[HashBytes(piece, len) & (kCacheEntries - 1)];
      if (slot->len == len && std::memcmp(slot->bytes, piece, len) == 0) {
        total += slot->count;
        continue;
      }
    }
    uint64_t parts = 0;
    parts -= vocab.Merge(piece, len, [&parts](uint32_t, uint32_t) { ++parts; });
    total += parts;
    if (slot != nullptr) {
      slot->len = static_cast<uint8_t>(len);
      slot->count = static_cast<uint8_t>(parts);  // parts <= len <= kCacheKeyMax
      std::memcpy(slot->bytes, piece, len);
    }
  }
  return total;
}

void O200kTokenizer::EncodeWellFormed(std::string_view text, std::vector<uint32_t>* ids) const {
  const Vocabulary& vocab = *vocab_;
  const Pretokenizer pre(text, CodePointClasses::Get());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = pre.PieceEnd(i);
    const uint8_t* piece = s + i;
    const size_t len = end - i;
    i = end;
    const uint32_t rank = vocab.Rank(piece, len);
    if (rank != kNoRank) {
      ids->push_back(rank);
      continue;
    }
    const size_t before = ids->size();
    const size_t discard = vocab.Merge(piece, len, [&](uint32_t b, uint32_t e) {
      ids->push_back(vocab.Rank(piece + b, e - b));
    });
    if (discard > 0) ids->erase(ids->begin() + static_cast<std::ptrdiff_t>(before),
                                ids->begin() + static_cast<std::ptrdiff_t>(before + discard));
  }
}

void SetO200kWindowedMergeForTest(bool on) { g_windowed_merge.store(on); }

std::vector<std::string_view> O200kPieces(std::string_view text) {
  std::vector<std::string_view> pieces;
  const Pretokenizer pre(text, CodePointClasses::Get());
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = pre.PieceEnd(i);
    pieces.push_back(text.substr(i, end - i));
    i = end;
  }
  return pieces;
}

}  // namespace caveman::internal
