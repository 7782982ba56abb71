#include "stream/internal/o200k.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <queue>
#include <sys/mman.h>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define CAVEMAN_O200K_AVX2 1
// What the AVX2 variants are compiled for (x86-64-v3 without FMA; HaveAvx2 checks each).
#define CAVEMAN_O200K_V3 "avx2,bmi,bmi2,lzcnt,popcnt"
#endif

#include "stream/huge_pages.h"
#include "stream/internal/o200k_classes.h"
#include "stream/utf8_scan.h"
#include "stream/sha256.h"

namespace caveman::internal {
namespace {

constexpr uint32_t kNoRank = UINT32_MAX;
// Pieces up to this many bytes merge with the plain quadratic loop over a stack array;
// longer ones (base64 blobs, long identifiers) use a heap so the cost stays O(n log n).
constexpr size_t kSmallPiece = 64;
// Pieces longer than kO200kLongPiece use the backtracking encoder (see MergeBacktrack); up to
// it, the heap merge (docs/DECISIONS.md, "Token counting of long pieces"). Tests switch the
// backtracking encoder off to compare with the heap merge, lower the threshold to run it on
// short pieces too, and shrink the number of tokens it keeps back to exercise its second pass.
std::atomic<bool> g_backtrack_merge{true};
std::atomic<size_t> g_long_piece{kO200kLongPiece};
constexpr size_t kKeepTokens = 1 << 14;
std::atomic<size_t> g_backtrack_keep{kKeepTokens};
std::atomic<uint64_t> g_backtrack_retries{0};
std::atomic<uint64_t> g_run_token_steps{0};  // tokens taken first as a run's token (tests)
// Tests make the run's token another token of its byte (see SetO200kRunTokenForTest): mostly
// wrong, so the search has to go back over frames that came first as a run's token.
std::atomic<int> g_run_token_choice{0};
std::atomic<bool> g_spine_check{true};
// Pair checks of two tokens of up to 2 bytes are remembered in a table
// (PrefixIndex::short_pairs); tests switch it off.
std::atomic<bool> g_short_pairs{true};
// Counting cuts pieces where two neighbouring bytes occur together in no token (CountPieces);
// tests switch it off for the reference.
std::atomic<bool> g_pair_cuts{true};
// Merges start with merge units as one part (Vocabulary::units); tests switch it off for the
// reference.
std::atomic<bool> g_units{true};
// Pieces of up to kSmallPiece parts merge on the stack (MergeSmall); tests switch it off so
// that the heap merge, the reference, merges every piece.
std::atomic<bool> g_small_merge{true};
// The stack merge runs its AVX2 variant on processors that have it (MergeSmallSlotsAvx2); tests
// switch it off to compare it with the portable one.
std::atomic<bool> g_simd{true};
// Text with ill-formed bytes is sanitized and counted in blocks of at least this many bytes
// (see Count); tests make it small. A per-thread buffer up to kSanitizeBufferKeep is kept.
constexpr size_t kSanitizeBlock = 64 << 10;
constexpr size_t kSanitizeBufferKeep = 1 << 20;
std::atomic<size_t> g_sanitize_block{kSanitizeBlock};
// Merged pieces up to this length are remembered per thread (see CountCache): first in
// kCacheFirstEntries slots, and in kCacheEntries once kCacheGrowMisses merges missed.
constexpr size_t kCacheKeyMax = 30;
constexpr size_t kCacheFirstEntries = 256;
constexpr size_t kCacheEntries = 4096;
constexpr uint64_t kCacheGrowMisses = 4096;
// Longer pieces that are a run of one byte with at most kRunMemoEdge bytes before and after it
// (rules of '-', '=', '#' of every length, after a space, before a newline) are remembered by
// that description instead of their bytes (see CountCache::RunSlot).
constexpr size_t kRunMemoEdge = 7;
constexpr size_t kRunMemoMinRun = 24;
constexpr unsigned kRunMemoBits = 16;
constexpr size_t kRunMemoEntries = size_t{1} << kRunMemoBits;
std::atomic<bool> g_run_memo{true};
// Bumped by every test switch below: a thread's merged-piece cache, run memo and line memo are
// forgotten when it changed, so a reference count and the count under test never share one
// (a count answered from a memo would not exercise the path the switch selects).
std::atomic<uint64_t> g_test_settings{0};

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
// Whether p[0, n) is all ASCII, eight bytes at a time.
bool AllAscii(const uint8_t* p, size_t n) {
  uint64_t any = 0;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) any |= Load64(p + k);
  for (; k < n; ++k) any |= p[k];
  return (any & 0x8080808080808080ULL) == 0;
}
#if defined(CAVEMAN_O200K_AVX2)
// Whether the processor runs AVX2 code (the stack merge has a variant for it).
bool HaveAvx2() {
  static const bool have = [] {
    __builtin_cpu_init();
    // LZCNT (ABM) from CPUID 0x80000001 ECX bit 5: clang's __builtin_cpu_supports has no
    // "lzcnt" feature string.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool lzcnt = __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 5)) != 0;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt") && lzcnt;
  }();
  return have;
}
#endif

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Allocator for the prefix index's large arrays (the trie nodes, the token records, the 3-byte
// bitmap: 2–3.4 MB each): blocks of 1 MiB or more are mapped in whole 2 MiB pages advised for
// transparent huge pages, so the encoder's scattered reads into them miss the TLB far less.
// Best effort: without THP they are ordinary pages.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kMin = size_t{1} << 20;
  HugePageAllocator() = default;
  template <class U>
  explicit HugePageAllocator(const HugePageAllocator<U>&) {}
  static size_t Rounded(size_t bytes) { return RoundUpToHugePages(bytes); }
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMin) return static_cast<T*>(::operator new(bytes));
    void* p = MapHugePages(Rounded(bytes));
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMin) {
      ::operator delete(p);
    } else {
      ::munmap(p, Rounded(bytes));
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

// calloc that throws like new: zeroed memory whose pages are only faulted in when used.
void* CheckedCalloc(size_t bytes) {
  void* p = std::calloc(1, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
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
    const uint32_t group = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                           (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    *dst++ = static_cast<char>(group >> 16);
    *dst++ = static_cast<char>((group >> 8) & 0xFF);
    *dst++ = static_cast<char>(group & 0xFF);
  }
  out->resize(out->size() - pad);
  return true;
}

// The pair check keeps the ranks of boundary spans up to this many bytes per side (see
// BacktrackScratch::across).
constexpr size_t kAcrossMax = 16;

// A token on the backtracking encoder's stack (see MergeBacktrack).
struct BacktrackFrame {
  uint32_t begin, token;  // token: an index into the prefix index's tokens
  uint32_t reach;         // no token starting at `begin` is longer (see LongestPrefixToken)
};

// Per-thread scratch of the backtracking encoder, allocated on first use (1 MiB): answers
// of the pair check for tokens it cannot walk, by token pair (an entry is
// ((key + 1) << 1) | compatible, 0 = empty), and the ranks across the current position.
struct BacktrackScratch {
  static constexpr size_t kPairSlots = size_t{1} << 16;
  uint64_t pairs[kPairSlots] = {};
  // The same for the answers of the spine walk (kept apart so that tests can compare the two).
  // Used while it pays: on random letters most pairs are new and a probe into 512 KiB costs
  // more than the walk, on runs of a few characters (white space) nearly every pair repeats.
  // After every kSpineWindow probes with fewer than a quarter hits, it rests for
  // kSpineRest checks.
  static constexpr size_t kSpinePairSlots = size_t{1} << 16;
  static constexpr uint32_t kSpineWindow = 4096;
  static constexpr uint32_t kSpineRest = 1 << 18;
  uint64_t spine_pairs[kSpinePairSlots] = {};
  uint32_t spine_probes = 0;
  uint32_t spine_hits = 0;
  uint32_t spine_rest = 0;
  // Ranks of p[m - right, m + left) at the position m the encoder is trying tokens at (all
  // the pair checks there share them); an entry is current when its stamp equals `stamp`.
  struct Across {
    uint32_t stamp = 0;
    uint32_t rank = 0;
  };
  Across across[kAcrossMax + 1][kAcrossMax + 1];
  uint32_t stamp = 0;
  uint32_t last_pair[3] = {kNoRank, kNoRank, 0};  // the last pair checked and its answer
  // The stack and the dead positions of pieces up to kReusedPiece bytes, kept from piece to
  // piece (pieces of 65 bytes to 4 KiB are many on text like random words).
  static constexpr size_t kReusedPiece = size_t{1} << 12;
  std::vector<BacktrackFrame> frames;
  std::vector<uint64_t> dead;
  void NewPosition() {
    if (++stamp == 0) {  // wrapped: forget everything
      for (auto& row : across) {
        for (Across& a : row) a.stamp = 0;
      }
      stamp = 1;
    }
  }
};

BacktrackScratch& ThreadBacktrackScratch(const void* owner) {
  thread_local std::unique_ptr<BacktrackScratch> scratch;
  thread_local const void* scratch_owner = nullptr;
  if (scratch == nullptr || scratch_owner != owner) {
    scratch = std::make_unique<BacktrackScratch>();
    scratch_owner = owner;
  }
  return *scratch;
}

uint64_t PairHash(uint64_t key) {
  key *= 0x9E3779B97F4A7C15ULL;
  return key ^ (key >> 29);
}

// Line memo of CountWellFormed: exact segment bytes → count, per counting thread. Open
// addressing over kLineMemoSlots slots, the bytes in one arena; when the arena or the table
// fills up, everything is forgotten at once (a bounded 1.5 MiB per thread, no eviction
// bookkeeping).
constexpr size_t kLineMemoMinText = 4096;  // shorter texts: straight to CountPieces
constexpr size_t kLineMemoMinLine = 12;    // shorter segments: counting is as cheap as a probe
constexpr size_t kLineMemoMaxLine = 1024;
constexpr size_t kLineMemoSlots = 1 << 15;
constexpr size_t kLineMemoArena = 1 << 20;
constexpr size_t kLineMemoWindow = 1024;
constexpr size_t kLineMemoPauseBytes = 8 << 20;

class LineMemo {
 public:
  // `hash` = HashBytes of seg when the caller hashed it ahead (see Prefetch), else nullptr.
  template <typename CountFn>
  uint64_t Count(std::string_view seg, const uint64_t* hash, CountFn&& count) {
    const auto* p = reinterpret_cast<const uint8_t*>(seg.data());
    // A line equal to the one before it (retry loops, progress lines) is found without a
    // probe: compared with the slot the last segment used.
    if (last_ != kNoSlot) {
      const Slot& slot = slots_[last_];
      if (slot.len == seg.size() && std::memcmp(arena_.get() + slot.offset, p, seg.size()) == 0) {
        ++hits_;
        return slot.count;
      }
    }
    const uint64_t h = hash != nullptr ? *hash : HashBytes(p, seg.size());
    size_t i = Find(p, seg.size(), h);
    if (slots_[i].tag != 0) {
      ++hits_;
      last_ = i;
      return slots_[i].count;
    }
    // A line of `key: value` (JSON and YAML members, `Name: value` headers) that was not seen
    // whole often has a key that was: the key is looked up alone and only the value counted.
    // A space after a byte that is not white space always starts a piece (no alternative of
    // the pre-token pattern has a space after its first character unless all of it is white
    // space), so the counts of the two sides add up to the line's (docs/DECISIONS.md, "Line
    // memo of the token counter").
    const size_t key = KeyEnd(seg);
    uint64_t c;
    if (key != 0) {
      c = Part(seg.substr(0, key), count) + count(seg.substr(key));
      i = Find(p, seg.size(), h);  // the key's insertion may have cleared the table
    } else {
      c = count(seg);
    }
    if (c > UINT32_MAX) return c;
    last_ = Insert(p, seg.size(), h, i, static_cast<uint32_t>(c));
    return c;
  }
  // Starts loading the home slot of a segment with hash h, to be looked up after the
  // segment before it is counted: the table (512 KiB) mostly misses the L1 and L2 caches.
  void Prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & (kLineMemoSlots - 1)]); }
  // Text whose lines do not repeat (most lines of a JSON dump differ by a name or an address)
  // or are too short to look up would only pay the scan, the probes and the per-segment
  // calls: after every kLineMemoWindow segments with fewer than a quarter of them hits, the
  // memo is left aside for the next kLineMemoPauseBytes of text counted on this thread, then
  // tried again. Called once per segment.
  bool ShouldPause() {
    if (++probes_ < kLineMemoWindow) return false;
    const bool pause = hits_ * 4 < probes_;
    probes_ = hits_ = 0;
    if (pause) paused_bytes_ = kLineMemoPauseBytes;
    return pause;
  }
  // Whether the memo is set aside for these `bytes` (which are then charged to the pause).
  bool Paused(size_t bytes) {
    if (paused_bytes_ == 0) return false;
    paused_bytes_ -= std::min(paused_bytes_, bytes);
    return true;
  }
  void Clear() {
    std::memset(slots_.get(), 0, kLineMemoSlots * sizeof(Slot));
    used_ = 0;
    filled_ = 0;
    last_ = kNoSlot;
  }
  const void* owner = nullptr;
  uint64_t settings = 0;  // g_test_settings when last cleared

 private:
  struct Slot {
    uint32_t tag;
    uint32_t offset;
    uint32_t len;
    uint32_t count;
  };

  static uint32_t Tag(uint64_t h) { return static_cast<uint32_t>(h >> 32) | 1u; }  // 0 = empty slot

  // The slot holding p[0, n) (h = its hash), or the empty slot where it would go.
  size_t Find(const uint8_t* p, size_t n, uint64_t h) const {
    const uint32_t tag = Tag(h);
    for (size_t i = h & (kLineMemoSlots - 1);; i = (i + 1) & (kLineMemoSlots - 1)) {
      const Slot& slot = slots_[i];
      if (slot.tag == 0) return i;
      if (slot.tag == tag && slot.len == n && std::memcmp(arena_.get() + slot.offset, p, n) == 0) return i;
    }
  }

  // Stores p[0, n) with count c in the empty slot i (Find's answer); forgets everything first
  // when the arena or the table is full. Returns the slot used.
  size_t Insert(const uint8_t* p, size_t n, uint64_t h, size_t i, uint32_t c) {
    if (used_ + n > kLineMemoArena || filled_ >= kLineMemoSlots / 2) {
      Clear();
      i = h & (kLineMemoSlots - 1);  // the table is empty now: the home slot is free
    }
    std::memcpy(arena_.get() + used_, p, n);
    slots_[i] = Slot{Tag(h), static_cast<uint32_t>(used_), static_cast<uint32_t>(n), c};
    used_ += n;
    ++filled_;
    return i;
  }

  // The length of seg's key: up to and including the first ':' that a space follows, when
  // that key is long enough to be worth a lookup and a value follows; else 0.
  static size_t KeyEnd(std::string_view seg) {
    const size_t colon = seg.find(": ");
    if (colon == std::string_view::npos || colon + 1 < kLineMemoMinLine || colon + 2 >= seg.size()) return 0;
    return colon + 1;
  }

  // The count of a key: from the memo, else counted and stored (not counted as a hit or a
  // probe: the pause rule looks at whole segments).
  template <typename CountFn>
  uint64_t Part(std::string_view part, CountFn&& count) {
    const auto* p = reinterpret_cast<const uint8_t*>(part.data());
    const uint64_t h = HashBytes(p, part.size());
    const size_t i = Find(p, part.size(), h);
    if (slots_[i].tag != 0) return slots_[i].count;
    const uint64_t c = count(part);
    if (c <= UINT32_MAX) Insert(p, part.size(), h, i, static_cast<uint32_t>(c));
    return c;
  }
  // calloc'd: zero slots are empty, and untouched pages are never faulted in.
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<Slot[], Free> slots_{static_cast<Slot*>(CheckedCalloc(kLineMemoSlots * sizeof(Slot)))};
  std::unique_ptr<char[], Free> arena_{static_cast<char*>(CheckedCalloc(kLineMemoArena))};
  static constexpr size_t kNoSlot = SIZE_MAX;
  size_t used_ = 0;
  size_t filled_ = 0;
  size_t last_ = kNoSlot;  // the slot of the last segment looked up or added
  size_t probes_ = 0;      // in the current window
  size_t hits_ = 0;
  size_t paused_bytes_ = 0;  // text still to count without the memo
};

LineMemo& ThreadLineMemo(const void* owner) {
  thread_local std::unique_ptr<LineMemo> memo;
  if (memo == nullptr) {
    memo = std::make_unique<LineMemo>();  // calloc'd, so already empty: clearing it would
    memo->owner = owner;                  // fault in its 512 KiB of slots for nothing
  }
  const uint64_t settings = g_test_settings.load(std::memory_order_relaxed);
  if (memo->owner != owner || memo->settings != settings) {
    memo->Clear();  // another tokenizer or a test switch (only in tests) since its last use
    memo->owner = owner;
    memo->settings = settings;
  }
  return *memo;
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
  std::string_view bytes;             // all tokens, concatenated in rank order
  std::span<const uint32_t> offsets;  // rank → offset in bytes; offsets[size] = bytes.size()
  std::span<const Slot> slots;
  uint64_t mask = 0;
  size_t max_len = 0;

  std::string owned_bytes;
  std::vector<uint32_t> owned_offsets;
  std::vector<Slot> owned_slots;

  size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }

  // Tokens of 1 to 4 bytes are found by the value of their bytes without touching the
  // token bytes: 1 and 2 bytes in dense tables, 3 and 4 in small open-addressing tables
  // (1.3 MiB in all, so the pairs a merge asks about mostly hit the cache).
  struct ShortSlot {
    uint32_t key;
    uint32_t rank;  // kNoRank = empty
  };
  static constexpr uint32_t kShortBits = 16;
  static constexpr size_t kShortSlots = size_t{1} << kShortBits;
  std::span<const uint32_t> rank1, rank2;     // 256 and 65,536 entries
  std::span<const ShortSlot> short3, short4;  // kShortSlots entries each
  std::vector<uint32_t> owned_rank1, owned_rank2;
  std::vector<ShortSlot> owned_short3, owned_short4;
  // One bit per hash value of every longer token (256 KiB, so it stays in a core's cache):
  // most strings a merge asks about are not tokens and stop here.
  static constexpr uint64_t kFilterBits = uint64_t{1} << 21;
  static constexpr size_t kFilterWords = kFilterBits / 64;
  std::span<const uint64_t> filter;
  std::vector<uint64_t> owned_filter;
  // The same for 3- and 4-byte tokens (96 KiB), in front of short3 / short4: bits [0, 2^18)
  // hold 3-byte strings, the next 2^19 bits 4-byte ones.
  static constexpr uint32_t kFilter3Bits = 18;
  static constexpr uint32_t kFilter4Bits = 19;
  static constexpr size_t kShortFilterWords = ((size_t{1} << kFilter3Bits) + (size_t{1} << kFilter4Bits)) / 64;
  std::span<const uint64_t> short_filter;
  std::vector<uint64_t> owned_short_filter;
  static uint32_t ShortFilterBit3(uint32_t key) { return (key * 0x85EBCA6Bu) >> (32 - kFilter3Bits); }
  static uint32_t ShortFilterBit4(uint32_t key) {
    return (uint32_t{1} << kFilter3Bits) + ((key * 0x85EBCA6Bu) >> (32 - kFilter4Bits));
  }
  bool MaybeShort(uint32_t bit) const { return ((short_filter[bit >> 6] >> (bit & 63)) & 1) != 0; }
  // One bit per hash value of the first 4 bytes of every token of 5 bytes or more (128 KiB):
  // a string of 5 bytes or more whose first 4 bytes have no bit set is no token, without
  // hashing it whole. Random lowercase letters: 1.4 % of their 4-byte strings start such a
  // token.
  static constexpr uint32_t kLongPrefixBits = 20;
  static constexpr size_t kLongPrefixWords = (size_t{1} << kLongPrefixBits) / 64;
  std::span<const uint64_t> long_prefix;
  std::vector<uint64_t> owned_long_prefix;
  static uint32_t LongPrefixBit(const uint8_t* p) { return (Load32(p) * 0xC2B2AE35u) >> (32 - kLongPrefixBits); }
  bool MaybeLong(const uint8_t* p) const {
    const uint32_t bit = LongPrefixBit(p);
    return ((long_prefix[bit >> 6] >> (bit & 63)) & 1) != 0;
  }
  // Bit a << 8 | b is set when byte b follows byte a somewhere inside a token (8 KiB). Between
  // two neighbouring bytes of a piece that no token holds, no merge can ever join: the
  // piece's count is the sum of the counts of the two sides (see CountPieces).
  static constexpr size_t kBigramWords = (size_t{1} << 16) / 64;
  std::span<const uint64_t> bigrams;
  std::vector<uint64_t> owned_bigrams;
  bool InOneToken(uint8_t a, uint8_t b) const {
    const uint32_t k = (uint32_t{a} << 8) | b;
    return ((bigrams[k >> 6] >> (k & 63)) & 1) != 0;
  }
  // Bit c is set for a code point c of the BMP whose UTF-8 bytes merge into one token before
  // any merge can join one of them with a byte outside it, and whose token joins nothing
  // before that (8 KiB; see ComputeUnits and docs/DECISIONS.md, "Merge units"). A merge may
  // start with such a code point as one part instead of its bytes: the result is the same.
  // U+FFFD, which every ill-formed byte becomes, is one; o200k_base has 301.
  static constexpr size_t kUnitWords = (size_t{1} << 16) / 64;
  std::span<const uint64_t> units;
  std::vector<uint64_t> owned_units;
  bool IsUnit(uint32_t cp) const { return ((units[cp >> 6] >> (cp & 63)) & 1) != 0; }
  // Length of the part a merge starts with at p (left > 0 bytes remain): the code point's
  // bytes when it is a unit, else one byte.
  size_t UnitLength(const uint8_t* p, size_t left) const {
    const uint8_t b = p[0];
    if (b < 0xC2 || b >= 0xF0) return 1;
    if (b < 0xE0) {
      if (left < 2 || (p[1] & 0xC0) != 0x80) return 1;
      return IsUnit((uint32_t{b & 0x1Fu} << 6) | (p[1] & 0x3Fu)) ? 2 : 1;
    }
    if (left < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 1;
    const uint32_t cp = (uint32_t{b & 0x0Fu} << 12) | (uint32_t{p[1] & 0x3Fu} << 6) | (p[2] & 0x3Fu);
    return cp >= 0x800 && IsUnit(cp) ? 3 : 1;
  }

  static uint32_t ShortHash(uint32_t key) { return (key * 0x9E3779B1u) >> (32 - kShortBits); }
  static uint32_t FindShort(std::span<const ShortSlot> table, uint32_t key) {
    for (uint32_t i = ShortHash(key);; i = (i + 1) & ((1u << kShortBits) - 1)) {
      const ShortSlot& s = table[i];
      if (s.rank == kNoRank || s.key == key) return s.rank;
    }
  }
  static uint32_t Key3(const uint8_t* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16); }

  uint32_t Rank(const uint8_t* p, size_t n) const {
    switch (n) {
      case 1: return rank1[p[0]];
      case 2: return rank2[p[0] | (uint32_t{p[1]} << 8)];
      case 3: {
        const uint32_t key = Key3(p);
        return MaybeShort(ShortFilterBit3(key)) ? FindShort(short3, key) : kNoRank;
      }
      case 4: {
        const uint32_t key = Load32(p);
        return MaybeShort(ShortFilterBit4(key)) ? FindShort(short4, key) : kNoRank;
      }
      default: break;
    }
    if (n == 0 || n > max_len || !MaybeLong(p)) return kNoRank;
    return RankLong(p, n, HashBytes(p, n));
  }
  // Rank(p, n) for 4 < n <= max_len, h = HashBytes(p, n).
  uint32_t RankLong(const uint8_t* p, size_t n, uint64_t h) const {
    if (!MaybeLong(p)) return kNoRank;
    const uint64_t bit = (h >> 40) & (kFilterBits - 1);
    if (((filter[bit >> 6] >> (bit & 63)) & 1) == 0) return kNoRank;
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

  // A lookup in two halves: StartRank computes what Rank(p, n) will load and starts those
  // loads (the filter word and the first slot); FinishRank gives the rank. Two independent
  // lookups started one after the other overlap their cache misses instead of queueing.
  struct RankQuery {
    const uint8_t* p;
    size_t n;
    uint64_t h;  // HashBytes(p, n) when 4 < n <= max_len; for n = 3, 4: key | filter bit << 32
  };             // (n = SIZE_MAX: known to be no token)
  __attribute__((always_inline)) RankQuery StartRank(const uint8_t* p, size_t n) const {
    RankQuery q{p, n, 0};
    if (n == 3 || n == 4) {
      const uint32_t key = n == 3 ? Key3(p) : Load32(p);
      const uint32_t bit = n == 3 ? ShortFilterBit3(key) : ShortFilterBit4(key);
      __builtin_prefetch(&short_filter[bit >> 6]);
      __builtin_prefetch(&(n == 3 ? short3 : short4)[ShortHash(key)]);
      q.h = key | (uint64_t{bit} << 32);
    } else if (n > 4 && n <= max_len) {
      if (!MaybeLong(p)) {
        q.n = SIZE_MAX;
        return q;
      }
      q.h = HashBytes(p, n);
      __builtin_prefetch(&filter[((q.h >> 40) & (kFilterBits - 1)) >> 6]);
      __builtin_prefetch(&slots[q.h & mask]);
    }
    return q;
  }
  uint32_t FinishRank(const RankQuery& q) const {
    if (q.n == 3 || q.n == 4) {
      if (!MaybeShort(static_cast<uint32_t>(q.h >> 32))) return kNoRank;
      return FindShort(q.n == 3 ? short3 : short4, static_cast<uint32_t>(q.h));
    }
    if (q.n <= 2) return Rank(q.p, q.n);
    return q.n <= max_len ? RankLong(q.p, q.n, q.h) : kNoRank;
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
      const std::string_view digits = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
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
    // Ranks fit in 24 bits (the stack merge's keys and the encoder's token names rely on it).
    if (count >= (size_t{1} << 24)) return Status::Corruption("o200k vocabulary: too many tokens");
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
    std::vector<uint64_t>& filter = owned_filter;
    filter.assign(kFilterWords, 0);
    mask = capacity - 1;
    // Hash everything first so the (cache-missing) slot of a later token can be prefetched.
    std::vector<uint64_t> hashes(count);
    for (size_t r = 0; r < count; ++r) {
      hashes[r] = HashBytes(reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]), offsets[r + 1] - offsets[r]);
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
      const uint64_t bit = (hashes[r] >> 40) & (kFilterBits - 1);
      filter[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
    std::vector<uint32_t>& rank1 = owned_rank1;
    std::vector<uint32_t>& rank2 = owned_rank2;
    std::vector<ShortSlot>& short3 = owned_short3;
    std::vector<ShortSlot>& short4 = owned_short4;
    rank1.assign(256, kNoRank);
    rank2.assign(1 << 16, kNoRank);
    short3.assign(kShortSlots, ShortSlot{0, kNoRank});
    short4.assign(kShortSlots, ShortSlot{0, kNoRank});
    std::vector<uint64_t>& short_filter = owned_short_filter;
    short_filter.assign(kShortFilterWords, 0);
    auto set_short = [&short_filter](uint32_t bit) { short_filter[bit >> 6] |= uint64_t{1} << (bit & 63); };
    std::vector<uint64_t>& bigrams = owned_bigrams;
    bigrams.assign(kBigramWords, 0);
    std::vector<uint64_t>& long_prefix = owned_long_prefix;
    long_prefix.assign(kLongPrefixWords, 0);
    size_t used[5] = {};
    for (size_t r = 0; r < count; ++r) {
      const auto* t = reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]);
      const auto rank = static_cast<uint32_t>(r);
      for (size_t k = 1; k < offsets[r + 1] - offsets[r]; ++k) {
        const uint32_t pair = (uint32_t{t[k - 1]} << 8) | t[k];
        bigrams[pair >> 6] |= uint64_t{1} << (pair & 63);
      }
      if (offsets[r + 1] - offsets[r] >= 5) {
        const uint32_t bit = LongPrefixBit(t);
        long_prefix[bit >> 6] |= uint64_t{1} << (bit & 63);
      }
      auto insert = [&](std::vector<ShortSlot>& table, uint32_t key, size_t* n) {
        if (++*n > table.size() / 2) return false;  // o200k: 18,185 and 26,166 of 65,536
        uint32_t i = ShortHash(key);
        while (table[i].rank != kNoRank) i = (i + 1) & ((1u << kShortBits) - 1);
        table[i] = ShortSlot{key, rank};
        return true;
      };
      bool ok = true;
      switch (offsets[r + 1] - offsets[r]) {
        case 1: rank1[t[0]] = rank; break;
        case 2: rank2[t[0] | (uint32_t{t[1]} << 8)] = rank; break;
        case 3:
          ok = insert(short3, Key3(t), &used[3]);
          set_short(ShortFilterBit3(Key3(t)));
          break;
        case 4:
          ok = insert(short4, Load32(t), &used[4]);
          set_short(ShortFilterBit4(Load32(t)));
          break;
        default: break;
      }
      if (!ok) return Status::Corruption("o200k vocabulary: too many short tokens");
    }
    this->bytes = owned_bytes;
    this->offsets = owned_offsets;
    this->slots = owned_slots;
    this->rank1 = owned_rank1;
    this->rank2 = owned_rank2;
    this->short3 = owned_short3;
    this->short4 = owned_short4;
    this->filter = owned_filter;
    this->short_filter = owned_short_filter;
    this->bigrams = owned_bigrams;
    this->long_prefix = owned_long_prefix;
    // Byte-pair merging starts from single bytes, so every byte must be a token.
    for (int b = 0; b < 256; ++b) {
      const auto byte = static_cast<uint8_t>(b);
      if (Rank(&byte, 1) == kNoRank) {
        return Status::Corruption("o200k vocabulary: a single byte is missing");
      }
    }
    ComputeUnits();
    this->units = owned_units;
    return Status::OK();
  }

  // Fills owned_units. A code point c (2 or 3 bytes, itself a token) is a unit when, with R
  // the highest rank among the merges of c's own bytes (which must give the one token c):
  //   - every token that ends with a proper prefix of c's bytes, or starts with a proper
  //     suffix of them, and has bytes on the other side (a merge that would join part of c
  //     with its neighbour) has a rank above R, and
  //   - every longer token that holds c's bytes has a rank above R.
  // Then wherever c occurs in a piece, while c is not yet one part one of its own merges
  // (rank <= R) is pending, so no merge across its edge (rank > R) is the lowest; and the
  // merges of the unmerged run are those of a run that starts with c as one part, in the same
  // order (c's part joins nothing below rank R + 1). Proof: docs/DECISIONS.md, "Merge units".
  void ComputeUnits() {
    owned_units.assign(kUnitWords, 0);
    // Lowest rank of a token longer than s that ends (starts) with the 1- or 2-byte string s,
    // and of one longer than 2 (3) bytes that holds the 2-byte (3-byte) string.
    std::vector<uint32_t> end1(256, kNoRank), start1(256, kNoRank), end2(1 << 16, kNoRank), start2(1 << 16, kNoRank);
    std::vector<uint32_t> holds2(1 << 16, kNoRank);
    std::vector<uint32_t> candidates;  // ranks of 2- and 3-byte tokens that are one code point
    for (size_t r = 0; r < size(); ++r) {
      const auto* t = reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]);
      const size_t len = Length(static_cast<uint32_t>(r));
      if ((len == 2 && t[0] >= 0xC2 && t[0] < 0xE0 && (t[1] & 0xC0) == 0x80) ||
          (len == 3 && t[0] >= 0xE0 && t[0] < 0xF0 && (t[1] & 0xC0) == 0x80 && (t[2] & 0xC0) == 0x80)) {
        candidates.push_back(static_cast<uint32_t>(r));
      }
    }
    // For the 3-byte candidates: a bit per 3-byte string in front of a sorted (string,
    // candidate) list, and the lowest rank of a longer token holding it, by candidate.
    std::vector<uint64_t> is_candidate3((size_t{1} << 24) / 64, 0);
    std::vector<std::pair<uint32_t, uint32_t>> key3_to_candidate;
    for (size_t k = 0; k < candidates.size(); ++k) {
      const uint32_t r = candidates[k];
      if (Length(r) != 3) continue;
      const uint32_t key = Key3(reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]));
      is_candidate3[key >> 6] |= uint64_t{1} << (key & 63);
      key3_to_candidate.emplace_back(key, static_cast<uint32_t>(k));
    }
    std::sort(key3_to_candidate.begin(), key3_to_candidate.end());
    std::vector<uint32_t> holds3_min(candidates.size(), kNoRank);
    for (size_t r = 0; r < size(); ++r) {
      const auto* t = reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]);
      const size_t len = Length(static_cast<uint32_t>(r));
      const auto rank = static_cast<uint32_t>(r);
      auto lower = [rank](uint32_t& v) { v = std::min(v, rank); };
      if (len >= 2) {
        lower(end1[t[len - 1]]);
        lower(start1[t[0]]);
      }
      if (len >= 3) {
        lower(end2[t[len - 2] | (uint32_t{t[len - 1]} << 8)]);
        lower(start2[t[0] | (uint32_t{t[1]} << 8)]);
        for (size_t a = 0; a + 2 <= len; ++a) lower(holds2[t[a] | (uint32_t{t[a + 1]} << 8)]);
      }
      if (len >= 4) {
        for (size_t a = 0; a + 3 <= len; ++a) {
          const uint32_t key = Key3(t + a);
          if (((is_candidate3[key >> 6] >> (key & 63)) & 1) == 0) continue;
          auto it = std::lower_bound(key3_to_candidate.begin(), key3_to_candidate.end(), std::make_pair(key, 0u));
          lower(holds3_min[it->second]);
        }
      }
    }
    for (size_t k = 0; k < candidates.size(); ++k) {
      const uint32_t r = candidates[k];
      const auto* t = reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]);
      const size_t len = Length(r);
      size_t parts = 0;
      uint32_t highest = 0;
      auto one = [&parts](uint32_t, uint32_t) { ++parts; };
      MergeSmall(
          t, len, one, [&highest](uint32_t merged, const uint32_t*, size_t) { highest = std::max(highest, merged); },
          /*with_units=*/false);
      if (parts != 1) continue;
      uint32_t across = std::min(end1[t[0]], start1[t[len - 1]]);
      uint32_t holds = kNoRank;
      uint32_t cp;
      if (len == 2) {
        holds = holds2[t[0] | (uint32_t{t[1]} << 8)];
        cp = (uint32_t{t[0] & 0x1Fu} << 6) | (t[1] & 0x3Fu);
      } else {
        across = std::min({across, end2[t[0] | (uint32_t{t[1]} << 8)], start2[t[1] | (uint32_t{t[2]} << 8)]});
        holds = holds3_min[k];
        cp = (uint32_t{t[0] & 0x0Fu} << 12) | (uint32_t{t[1] & 0x3Fu} << 6) | (t[2] & 0x3Fu);
      }
      if (highest < across && highest < holds) owned_units[cp >> 6] |= uint64_t{1} << (cp & 63);
    }
  }

  // Byte-pair merging of the piece p[0, n): calls part(begin, end) for each resulting token,
  // in order. Repeatedly merges the adjacent pair whose concatenation has the lowest rank,
  // leftmost on ties (§7.2).
  //
  // Pieces longer than kO200kLongPiece (one 64 MiB run of a letter is one piece) use the
  // backtracking encoder (MergeBacktrack), linear in practice and with bounded memory; so do
  // pieces of more than kSmallPiece parts once the process has merged enough of them
  // (MediumByBacktracking), the others the stack or the heap merge. `part`
  // must then tolerate a rollback: Merge returns the number of parts it reported before a
  // bounded pass was abandoned (0 when nothing was abandoned); the caller discards that many
  // parts, which the second pass reports afresh.
  template <class PartFn>
  size_t Merge(const uint8_t* p, size_t n, PartFn&& part) const {
    const bool backtrack = g_backtrack_merge.load(std::memory_order_relaxed);
    if (n <= g_long_piece.load(std::memory_order_relaxed) || !backtrack) {
      if (n <= kSmallPiece * 3 && MergeSmall(p, n, part)) return 0;
      if (!backtrack || !MediumByBacktracking(n)) {
        MergeLarge(p, n, part);
        return 0;
      }
    }
    size_t reported = 0;
    auto counted = [&](uint32_t b, uint32_t e) {
      ++reported;
      part(b, e);
    };
    if (MergeBacktrack(p, n, g_backtrack_keep.load(std::memory_order_relaxed), counted)) return 0;
    // It had to go back into parts already reported: again, keeping every part (cannot fail,
    // see MergeBacktrack; the heap merge stays as a guard).
    g_backtrack_retries.fetch_add(1, std::memory_order_relaxed);
    if (!MergeBacktrack(p, n, SIZE_MAX, part)) MergeLarge(p, n, part);
    return reported;
  }

  // --- The backtracking encoder -------------------------------------------------------
  //
  // Facts it rests on (docs/DECISIONS.md, "Token counting of long pieces"): call a token
  // *self-merging* if the merge of its own bytes gives back that one token, and two tokens
  // t1, t2 *compatible* if the merge of t1+t2 gives exactly [t1, t2]. The merge of any string
  // S is the only tokenisation of S into self-merging tokens whose adjacent pairs are all
  // compatible. (Merges inside one final token, or inside two neighbouring ones, happen in
  // the same order as when those bytes are merged alone, because the merge chosen at each
  // step is the global minimum and hence the minimum of any span containing it; a merge
  // across a boundary of such a tokenisation would thus be a merge across the boundary of
  // some compatible pair merged alone, which does not happen.)
  //
  // So a depth-first search over "next token = a self-merging vocabulary token that is a
  // prefix of the rest and compatible with the previous one", longest first, finds the merge
  // result: every complete path is it. Whenever the search stands at position i, the tokens
  // behind it are a compatible tokenisation of p[0, i), i.e. the merge of p[0, i) — the same
  // every time — so a position the search once had to leave backwards can never lead to the
  // end and is marked dead. Each position is therefore entered at most once and each token
  // that is a prefix there tried at most once: O(n × prefix tokens per position) checks.
  //
  // Memory: the tokens not yet reported (at most 2 × keep) and one bit per position. Parts
  // more than `keep` tokens behind are reported; if the search has to go back past them it
  // returns false (only possible with keep < SIZE_MAX).
  // The reach of a frame whose token came first as a run's token (no trie walk there): no
  // string is ruled out by length in the pair check, and going back to it walks the trie.
  static constexpr uint32_t kUnknownReach = UINT32_MAX;

  template <class PartFn>
  bool MergeBacktrack(const uint8_t* p, size_t n, size_t keep, PartFn& part) const {
    const PrefixIndex& ix = Index();
    using Frame = BacktrackFrame;
    BacktrackScratch& scratch = ThreadBacktrackScratch(this);
    // stack[0, depth): at most `reported` + 2 × keep + 1 frames, and `reported` stays under
    // 4 × keep + 1 (see below); it grows only when everything is kept (keep = SIZE_MAX).
    const size_t limit = keep == SIZE_MAX ? SIZE_MAX : 2 * keep;
    const size_t frames = std::min(n, keep == SIZE_MAX ? size_t{1} << 16 : 6 * keep + 2) + 1;
    const size_t dead_words = (n >> 6) + 1;
    std::vector<Frame> own_stack;
    std::vector<uint64_t> own_dead;
    const bool reuse = n <= BacktrackScratch::kReusedPiece;
    std::vector<Frame>& stack = reuse ? scratch.frames : own_stack;
    std::vector<uint64_t>& dead = reuse ? scratch.dead : own_dead;
    if (stack.size() < frames) stack.resize(frames);
    if (dead.size() < dead_words) dead.resize(dead_words);
    std::fill_n(dead.begin(), dead_words, 0);
    size_t depth = 0;
    const bool spines = g_spine_check.load(std::memory_order_relaxed);
    const bool short_pairs = spines && g_short_pairs.load(std::memory_order_relaxed);
    // Raw pointers: the compiler cannot keep vector data pointers in registers across the
    // stores of the pair check (uint32_t, which may alias a frame).
    uint64_t* const dead_bits = dead.data();
    Frame* frame = stack.data();
    size_t capacity = stack.size();
    auto is_dead = [dead_bits](size_t i) { return (dead_bits[i >> 6] >> (i & 63)) & 1; };
    auto report = [&](const Frame& f) { part(f.begin, f.begin + ix.Length(f.token)); };
    size_t reported = 0;  // stack[0, reported) went to `part`
    size_t i = 0;
    uint32_t reach = 0;     // of position i
    Frame top{};            // stack[depth - 1] (when depth > 0)
    uint64_t top_info = 0;  // Info of top.token (when depth > 0)
    // Pushes f and reports the frames more than `keep` behind once more than `limit` wait.
    auto push = [&](const Frame& f) __attribute__((always_inline)) {
      if (depth == capacity) [[unlikely]] {
        stack.resize(2 * depth);
        frame = stack.data();
        capacity = stack.size();
      }
      frame[depth++] = f;
      top = f;
      if (depth - reported > limit) {
        for (const size_t upto = depth - keep; reported < upto; ++reported) report(frame[reported]);
        if (reported > 4 * keep) {  // drop reported frames but the last (the previous token)
          std::copy(stack.begin() + static_cast<std::ptrdiff_t>(reported - 1),
                    stack.begin() + static_cast<std::ptrdiff_t>(depth), stack.begin());
          depth -= reported - 1;
          reported = 1;
        }
      }
    };
    // Inside a long run of one byte, the token such runs merge into comes first (see
    // RunToken): step_through_run steps from i as long as it fits.
    RunSpan run;
    uint64_t run_steps = 0;
    auto count_run_steps = [&] {
      if (run_steps != 0) g_run_token_steps.fetch_add(run_steps, std::memory_order_relaxed);
    };
    // A run that begins a few bytes after i (p[i] differs): the bytes before it often join
    // its first block, after taking up to a few of its bytes themselves (' ' + '-' × 200
    // merges as ' ' + '-' × 64, '-' × 64, '-' × 72; ' ' + '=' × 250 as ' ' + '=' × 65, ...;
    // ' ' + '/' × 250 as ' ' + '/' × 66, ...). So the token from i that comes first is the
    // longest that ends at most kRunLead bytes past a (nonzero) multiple of the run's token
    // from the run's first byte, or at that byte, and the run's tokens follow from there.
    // (Not inlined, and given i by value: no loop variable of the search has its address taken.)
    auto enter_run = [ this, &ix, &run, p, n ](const size_t i) __attribute__((noinline))->uint32_t {
      const uint8_t c = p[i + 8];
      size_t b = i + 8;  // the run's first byte
      while (p[b - 1] == c) --b;
      run.Find(*this, ix, p, n, b, b);
      if (run.token == kNoRank) return kNoRank;
      uint32_t reach_i = 0;
      for (uint32_t t = LongestPrefixToken(ix, p + i, n - i, &reach_i); t != kNoRank; t = ix.tokens[t].shorter) {
        const size_t e = i + ix.Length(t);
        if (e < b) break;
        if (e == b || (e - b >= run.length && (e - b) % run.length <= kRunLead)) {
          run.origin = b + (e - b) % run.length;
          return t;
        }
      }
      return kNoRank;
    };
    // The token tried first at i: the run's, or the one into a run; kNoRank if none.
    auto preferred = [&]() __attribute__((always_inline))->uint32_t {
      if (i + kRunMin + 8 > n || Load64(p + i + 8) != Load64(p + i + 9)) return kNoRank;
      return p[i] == p[i + 8] ? run.TokenAt(*this, ix, p, n, i) : enter_run(i);
    };
    auto step_through_run = [&]() __attribute__((always_inline)) {
      while (true) {
        const uint32_t t = preferred();
        if (t == kNoRank) break;
        const size_t end = i + ix.Length(t);
        if (end >= n || is_dead(end)) break;  // (a run's token never ends the piece)
        const uint64_t info = Info(ix, t);
        if ((info & kSelfMerging) == 0) break;
        scratch.NewPosition();
        if (depth > 0 &&
            !Compatible(ix, scratch, p, top.begin, top.token, top_info, top.reach, static_cast<uint32_t>(i), t, info,
                        static_cast<uint32_t>(end), spines, short_pairs)) {
          break;
        }
        push(Frame{static_cast<uint32_t>(i), t, kUnknownReach});
        top_info = info;
        i = end;
        ++run_steps;
      }
    };
    // Positions [quiet_from, quiet_until) have no nine equal bytes 8 bytes on (found 57 at a
    // time by NextRunWindow): two compares per position is what random text pays.
    size_t quiet_from = 0, quiet_until = 0;
    auto maybe_run = [&]() __attribute__((always_inline)) {
      if (i >= quiet_from && i < quiet_until) return false;
      quiet_from = i;
      quiet_until = NextRunWindow(p, n, i);
      return quiet_until == i;
    };
    if (maybe_run()) step_through_run();
    uint32_t cand = LongestPrefixToken(ix, p + i, n - i, &reach);
    while (true) {
      size_t end = 0;
      uint64_t info = 0;
      scratch.NewPosition();
      for (; cand != kNoRank; cand = ix.tokens[cand].shorter) {
        info = Info(ix, cand);
        end = i + InfoLength(info);
        if ((end < n && is_dead(end)) || (info & kSelfMerging) == 0) continue;
        if (depth == 0) break;
        if (Compatible(ix, scratch, p, top.begin, top.token, top_info, top.reach, static_cast<uint32_t>(i), cand, info,
                       static_cast<uint32_t>(end), spines, short_pairs)) {
          break;
        }
      }
      if (cand != kNoRank) {
        push(Frame{static_cast<uint32_t>(i), cand, reach});
        top_info = info;
        i = end;
        if (i == n) break;
        if (maybe_run()) [[unlikely]] {
          step_through_run();
        }
        cand = LongestPrefixToken(ix, p + i, n - i, &reach);
        continue;
      }
      // Nothing fits at i: i is dead; retry the previous token's next shorter alternative
      // (all of them when it came first as a run's token).
      dead_bits[i >> 6] |= uint64_t{1} << (i & 63);
      if (depth == reported) {  // (empty stack: impossible, see above)
        count_run_steps();
        return false;
      }
      const Frame back = top;
      --depth;
      if (depth > 0) {
        top = frame[depth - 1];
        top_info = Info(ix, top.token);
      }
      i = back.begin;
      if (back.reach == kUnknownReach) {
        cand = LongestPrefixToken(ix, p + i, n - i, &reach);  // (back.token's end is dead now)
      } else {
        reach = back.reach;
        cand = ix.tokens[back.token].shorter;
      }
    }
    for (; reported < depth; ++reported) report(frame[reported]);
    count_run_steps();
    return true;
  }

  // Built on the first long piece: a byte trie of the vocabulary and what the encoder needs
  // per token. Tokens are numbered here in the order the trie meets them (breadth first), so
  // tokens that share a prefix — the ones a text keeps asking about — share cache lines.
  struct PrefixIndex {
    // Node 0 is the root; the children of a node are consecutive ids in byte order, from
    // nodes[node].first_child to nodes[node + 1].first_child (the last node is a sentinel).
    // Every byte is a token, so the root's child for byte c is nodes[0].first_child + c.
    struct Node {
      uint32_t first_child;
      uint32_t token;  // the token the node spells (an index into `tokens`), kNoRank if none
    };
    std::vector<Node, HugePageAllocator<Node>> nodes;
    std::vector<uint8_t> label;    // node → the byte on the edge into it
    std::vector<uint32_t> depth2;  // p[0] | p[1] << 8 → the node spelling those two bytes, or kNoRank
    struct Token {
      uint32_t rank;
      uint32_t shorter;  // the longest proper prefix that is a token, kNoRank if none
      // Bits 48–55 the length; the rest 0 until first use, then kKnown | ... (see Info);
      // racing threads store the same value.
      mutable std::atomic<uint64_t> info;
    };
    std::vector<Token, HugePageAllocator<Token>> tokens;
    std::vector<uint32_t> token_of_rank;
    size_t Length(uint32_t token) const {
      return (tokens[token].info.load(std::memory_order_relaxed) >> kLengthShift) & 0xFF;
    }
    // Most 3-byte strings the pair check asks about are no tokens: which are, exactly (bit
    // p[0] << 16 | p[1] << 8 | p[2], so the strings that share two bytes share a word; 2 MiB).
    std::vector<uint64_t, HugePageAllocator<uint64_t>> tokens3;
    static uint32_t Index3(const uint8_t* p) { return (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2]; }
    bool Maybe3(const uint8_t* p) const {
      const uint32_t bit = Index3(p);
      return ((tokens3[bit >> 6] >> (bit & 63)) & 1) != 0;
    }
    // Answers of the pair check for two tokens of 1 or 2 bytes each (two thirds of the checks
    // on random letters), filled on first use: tokens of up to 2 bytes come first in the
    // breadth-first order, so they are the indexes [0, short_tokens) and the pair (t1, t2) has
    // the two bits at 2 × (t1 × short_tokens + t2): bit 1 known, bit 0 compatible. Racing
    // threads store the same bits. 6 MB of address space (o200k: 4,909 tokens), calloc'd:
    // only the pages a text asks about are ever touched.
    uint32_t short_tokens = 0;
    struct Free {
      void operator()(void* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t[], Free> short_pairs;
  };

  // Long runs of one byte ('-' × 4096 is one piece): trying the token the run merges into
  // first (RunToken) steps through it a token at a time, where longest-first entered nearly
  // every position of the run (its long tokens are compatible with their neighbours but lead
  // nowhere; 700 ns per byte of '-'). Only the order of the candidates changes, which the
  // search does not depend on (see below).
  static constexpr size_t kRunMin = 16;  // shorter runs keep the plain order
  static constexpr size_t kRunLead = 3;  // see enter_run in MergeBacktrack
  // The first position j >= at where the encoder looks for a run (see MergeBacktrack): nine
  // equal bytes at j + 8, with j + kRunMin + 8 <= n; n if there is none.
  __attribute__((noinline)) static size_t NextRunWindow(const uint8_t* p, size_t n, size_t at) {
    if (n < kRunMin + 8) return n;
    const size_t last = n - kRunMin - 8;
    size_t j = at;
#if defined(__SSE2__)
    // Bit t of `equal`: p[j + 8 + t] == p[j + 9 + t]; a window at j + t needs bits t..t+7.
    for (; j <= last && j + 8 + 65 <= n; j += 57) {
      uint64_t equal = 0;
      for (int k = 0; k < 4; ++k) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j + 8 + 16 * k));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j + 9 + 16 * k));
        equal |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)))} << (16 * k);
      }
      uint64_t w = equal & (equal >> 1);
      w &= w >> 2;
      w &= w >> 4;
      w &= (uint64_t{1} << 57) - 1;
      if (w != 0) {
        const size_t r = j + static_cast<size_t>(__builtin_ctzll(w));
        return r <= last ? r : n;
      }
    }
#endif
    for (; j <= last; ++j) {
      if (Load64(p + j + 8) == Load64(p + j + 9)) return j;
    }
    return n;
  }

  // The maximal run of one byte around the last position asked about.
  struct RunSpan {
    size_t begin = 0, end = 0;  // p[begin, end) is one byte repeated (empty at first)
    uint32_t token = kNoRank;   // RunToken of that byte
    size_t length = 1;          // the token's
    size_t origin = 0;          // the token is tried at origin + k × length only
    // The run's token if position `at` lies in a run of at least kRunMin bytes (and at least
    // kRunMin from `at`), at a multiple of the token's length from the origin, and the run
    // goes on for the token and one byte more; else kNoRank.
    uint32_t TokenAt(const Vocabulary& v, const PrefixIndex& ix, const uint8_t* p, size_t n, size_t at) {
      if (at < begin || at >= end) {
        if (at + kRunMin > n) return kNoRank;
        const uint64_t same = uint64_t{p[at]} * 0x0101010101010101ULL;
        if (Load64(p + at) != same || Load64(p + at + 8) != same) return kNoRank;
        size_t b = at;
        while (b > 0 && p[b - 1] == p[at]) --b;
        Find(v, ix, p, n, b, b);
      }
      const bool fits = token != kNoRank && end - at > length && at >= origin && (at - origin) % length == 0;
      return fits ? token : kNoRank;
    }
    // The run that starts at b, its origin at `from` (no token if it is shorter than kRunMin).
    void Find(const Vocabulary& v, const PrefixIndex& ix, const uint8_t* p, size_t n, size_t b, size_t from) {
      const uint8_t c = p[b];
      begin = b;
      for (end = b + 1; end < n && p[end] == c;) ++end;
      token = end - begin >= kRunMin ? v.RunToken(ix, c) : kNoRank;
      length = token == kNoRank ? 1 : ix.Length(token);
      origin = from;
    }
  };

  // The token a long run of byte c merges into: the first token of the merge of c repeated
  // 4 × max_len times when the second is the same (then the two are compatible); kNoRank when
  // there is none, or for c >= 0x80 (never a run in well-formed text). Remembered per byte.
  uint32_t RunToken(const PrefixIndex& ix, uint8_t c) const {
    if (const int choice = g_run_token_choice.load(std::memory_order_relaxed); choice != 0) {
      const std::string run(choice == 1 ? max_len : 2, static_cast<char>(c));
      uint32_t reach = 0;
      return LongestPrefixToken(ix, reinterpret_cast<const uint8_t*>(run.data()), run.size(), &reach);
    }
    uint32_t v = run_tokens[c].load(std::memory_order_relaxed);
    if (v == 0) {
      v = ComputeRunToken(ix, c);
      run_tokens[c].store(v, std::memory_order_relaxed);  // racing threads store the same
    }
    return v == kNoRank ? kNoRank : v - 1;
  }
  __attribute__((noinline)) uint32_t ComputeRunToken(const PrefixIndex& ix, uint8_t c) const {
    if (c >= 0x80) return kNoRank;
    const std::string run(4 * max_len, static_cast<char>(c));
    const auto* r = reinterpret_cast<const uint8_t*>(run.data());
    uint32_t first[2] = {0, 0};  // lengths of the first two parts
    size_t parts = 0;
    auto part = [&](uint32_t b, uint32_t e) {
      if (parts < 2) first[parts] = e - b;
      ++parts;
    };
    MergeLarge(r, run.size(), part);
    if (parts < 2 || first[0] != first[1]) return kNoRank;
    const uint32_t rank = Rank(r, first[0]);
    if (rank == kNoRank) return kNoRank;
    return ix.token_of_rank[rank] + 1;
  }

  // Info(ix, token): what the merge of the token's own bytes gives. kSelfMerging: one token;
  // kWalkable: also a merge run whose ranks never decrease (every o200k token of up to 64
  // bytes), and then bits 0–23 / 24–47 hold the left / right part its last merge joined, as
  // indexes into ix.tokens (a single byte has none). See CompatibleBySpines.
  static constexpr uint64_t kKnown = uint64_t{1} << 63;
  static constexpr uint64_t kSelfMerging = uint64_t{1} << 62;
  static constexpr uint64_t kWalkable = uint64_t{1} << 61;
  static constexpr uint64_t kPartMask = (uint64_t{1} << 24) - 1;
  static constexpr int kLengthShift = 48;
  static uint32_t InfoLength(uint64_t info) { return static_cast<uint32_t>((info >> kLengthShift) & 0xFF); }
  static uint32_t LeftPart(uint64_t info) { return static_cast<uint32_t>(info & kPartMask); }
  static uint32_t RightPart(uint64_t info) { return static_cast<uint32_t>((info >> 24) & kPartMask); }

  const PrefixIndex& Index() const {
    std::call_once(index_once, [this] {
      index = BuildPrefixIndex();
      index_built.store(true, std::memory_order_release);
    });
    return *index;
  }

  // Whether a piece of more than kSmallPiece parts and at most kO200kLongPiece bytes goes to
  // the backtracking encoder rather than the heap merge. Per byte the encoder is 2-3x faster
  // on such pieces (random letters in pieces of 100-300 bytes: 4 MiB in 157 instead of
  // 326 ms), but its index costs ≈ 0.1 CPU-s and 10 MB to build: so only once the process has
  // heap-merged kMediumHeapBudget bytes of such pieces, or built the index anyway. Either
  // way the result is the same (the encoder is exact on any piece).
  static constexpr uint64_t kMediumHeapBudget = uint64_t{1} << 20;
  bool MediumByBacktracking(size_t n) const {
    if (index_built.load(std::memory_order_acquire)) return true;
    return medium_heap_bytes.fetch_add(n, std::memory_order_relaxed) + n > kMediumHeapBudget;
  }

  size_t Length(uint32_t rank) const { return offsets[rank + 1] - offsets[rank]; }

  std::unique_ptr<PrefixIndex> BuildPrefixIndex() const {
    auto ix = std::make_unique<PrefixIndex>();
    const auto count = static_cast<uint32_t>(size());
    auto token = [&](uint32_t r) { return std::string_view(bytes.data() + offsets[r], offsets[r + 1] - offsets[r]); };
    // The tokens in byte order: sorted by their first 8 bytes as a big-endian number (zero
    // padded, so a string sorts with its extensions that continue with zero bytes), ties by the
    // whole strings — the order of the strings themselves, with integer compares for most pairs.
    // Then the sorted strings are copied side by side, so the level-by-level scan below reads
    // them in order instead of all over the vocabulary.
    struct Sorted {
      uint64_t head;
      uint32_t rank;
    };
    std::vector<Sorted> sorted(count);
    for (uint32_t r = 0; r < count; ++r) {
      const std::string_view t = token(r);
      uint64_t head = 0;
      for (size_t k = 0; k < 8; ++k) head = (head << 8) | (k < t.size() ? static_cast<uint8_t>(t[k]) : 0u);
      sorted[r] = Sorted{head, r};
    }
    std::sort(sorted.begin(), sorted.end(), [&](const Sorted& a, const Sorted& b) {
      return a.head != b.head ? a.head < b.head : token(a.rank) < token(b.rank);
    });
    std::vector<uint32_t> order(count);
    std::vector<uint32_t> at(count + 1);  // order[k]'s bytes: text[at[k], at[k + 1])
    std::string text;
    text.reserve(bytes.size());
    for (uint32_t k = 0; k < count; ++k) {
      order[k] = sorted[k].rank;
      at[k] = static_cast<uint32_t>(text.size());
      text += token(order[k]);
    }
    at[count] = static_cast<uint32_t>(text.size());
    std::vector<Sorted>().swap(sorted);
    // The trie's size: one node per distinct prefix (each token adds the bytes past its longest
    // common prefix with the one before it), plus the root and the sentinel.
    size_t node_count = 2;
    for (uint32_t k = 0; k < count; ++k) {
      size_t common = 0;
      if (k > 0) {
        const size_t limit = std::min(at[k] - at[k - 1], at[k + 1] - at[k]);
        while (common < limit && text[at[k - 1] + common] == text[at[k] + common]) ++common;
      }
      node_count += at[k + 1] - at[k] - common;
    }
    ix->nodes.reserve(node_count);
    ix->label.reserve(node_count + 16);
    ix->tokens = std::vector<PrefixIndex::Token, HugePageAllocator<PrefixIndex::Token>>(count);
    ix->token_of_rank.assign(count, kNoRank);
    uint32_t tokens_seen = 0;
    // Breadth first, one level at a time: a node is a run of sorted tokens order[lo, hi)
    // that share their first `depth` bytes; inherited = the longest token that is a proper
    // prefix of them. Node ids follow the order the nodes are visited in.
    struct Range {
      uint32_t lo, hi, depth, inherited;
    };
    std::vector<Range> level = {Range{0, count, 0, kNoRank}};
    std::vector<Range> next_level;
    uint32_t level_start = 0;  // id of level[0]
    ix->label.push_back(0);
    while (!level.empty()) {
      const auto next_start = static_cast<uint32_t>(level_start + level.size());
      next_level.clear();
      for (const Range& r : level) {
        const uint32_t first_child = next_start + static_cast<uint32_t>(next_level.size());
        uint32_t lo = r.lo;
        uint32_t here = kNoRank;
        if (lo < r.hi && at[lo + 1] - at[lo] == r.depth) {  // sorts first; tokens are distinct
          const uint32_t rank = order[lo++];
          here = tokens_seen++;
          PrefixIndex::Token& t = ix->tokens[here];
          t.rank = rank;
          t.shorter = r.inherited;
          t.info.store(uint64_t{r.depth} << kLengthShift, std::memory_order_relaxed);
          ix->token_of_rank[rank] = here;
        }
        ix->nodes.push_back({first_child, here});
        const uint32_t inherited = here != kNoRank ? here : r.inherited;
        while (lo < r.hi) {
          const char c = text[at[lo] + r.depth];
          uint32_t hi = lo + 1;
          while (hi < r.hi && text[at[hi] + r.depth] == c) ++hi;
          next_level.push_back(Range{lo, hi, r.depth + 1, inherited});
          ix->label.push_back(static_cast<uint8_t>(c));
          lo = hi;
        }
      }
      level_start = next_start;
      level.swap(next_level);
    }
    ix->nodes.push_back({level_start, kNoRank});  // sentinel: level_start = the number of nodes
    ix->label.resize(ix->label.size() + 32, 0);   // FindLabel reads 32 bytes at a time
    ix->depth2.assign(size_t{1} << 16, kNoRank);
    for (uint32_t c = 0; c < 256; ++c) {
      const uint32_t node = ix->nodes[0].first_child + c;
      for (uint32_t child = ix->nodes[node].first_child; child < ix->nodes[node + 1].first_child; ++child) {
        ix->depth2[c | (uint32_t{ix->label[child]} << 8)] = child;
      }
    }
    while (ix->short_tokens < count && ix->Length(ix->short_tokens) <= 2) ++ix->short_tokens;
    // The pair check sends two tokens below short_tokens to the table without asking whether
    // they are walkable (Compatible): true of every token of up to 2 bytes (one merge at most),
    // checked here, and short_tokens ends where it would not hold.
    for (uint32_t t = 0; t < ix->short_tokens; ++t) {
      if ((ComputeInfo(*ix, t) & (kSelfMerging | kWalkable)) != (kSelfMerging | kWalkable)) {
        ix->short_tokens = t;
        break;
      }
    }
    ix->short_pairs.reset(static_cast<uint8_t*>(CheckedCalloc((size_t{ix->short_tokens} * ix->short_tokens + 3) / 4)));
    ix->tokens3.assign((size_t{1} << 24) / 64, 0);
    for (uint32_t r = 0; r < count; ++r) {
      const auto* t = reinterpret_cast<const uint8_t*>(bytes.data() + offsets[r]);
      if (Length(r) == 3) {
        const uint32_t bit = PrefixIndex::Index3(t);
        ix->tokens3[bit >> 6] |= uint64_t{1} << (bit & 63);
      }
    }
    return ix;
  }

  // The longest token that is a prefix of p[0, n), n >= 1 (an index into ix.tokens);
  // *reach = how many bytes the trie matched, so no token that is a prefix is longer.
  __attribute__((always_inline)) static uint32_t LongestPrefixToken(const PrefixIndex& ix, const uint8_t* p, size_t n,
                                                                    uint32_t* reach) {
    const PrefixIndex::Node* nodes = ix.nodes.data();
    uint32_t node = nodes[0].first_child + p[0];
    uint32_t best = nodes[node].token;
    *reach = 1;
    if (n == 1) return best;
    node = ix.depth2[p[0] | (uint32_t{p[1]} << 8)];
    if (node == kNoRank) return best;
    if (nodes[node].token != kNoRank) best = nodes[node].token;
    const uint8_t* labels = ix.label.data();
    size_t d = 2;
    for (; d < n; ++d) {
      const uint32_t lo = nodes[node].first_child;
      const uint32_t hi = nodes[node + 1].first_child;
      const uint32_t child = FindLabel(labels, lo, hi, p[d]);
      if (child == kNoRank) break;
      node = child;
      if (nodes[node].token != kNoRank) best = nodes[node].token;
    }
    *reach = static_cast<uint32_t>(d);
    return best;
  }

  // The node among lo..hi-1 whose label is c, kNoRank if none. `labels` is padded with 32
  // bytes past its last node.
  static uint32_t FindLabel(const uint8_t* labels, uint32_t lo, uint32_t hi, uint8_t c) {
#if defined(__SSE2__)
    const __m128i want = _mm_set1_epi8(static_cast<char>(c));
    {
      // The first 32 labels without a loop: one mask of both compares, cut to the count, so
      // that the walk's branch here is only whether c was found (a loop over 16 at a time
      // mispredicted its exits; nodes with more children go on below).
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(labels + lo));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(labels + lo + 16));
      const uint32_t count = hi - lo;
      uint64_t bits = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, want))) |
                      (static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, want)))) << 16);
      bits &= (uint64_t{1} << std::min<uint32_t>(count, 32)) - 1;
      if (bits != 0) return lo + static_cast<uint32_t>(__builtin_ctzll(bits));
      if (count <= 32) return kNoRank;
      lo += 32;
    }
    for (uint32_t k = lo; k < hi; k += 16) {
      const __m128i got = _mm_loadu_si128(reinterpret_cast<const __m128i*>(labels + k));
      uint32_t bits = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(got, want)));
      if (hi - k < 16) bits &= (1u << (hi - k)) - 1;
      if (bits != 0) return k + static_cast<uint32_t>(__builtin_ctz(bits));
    }
    return kNoRank;
#else
    const uint8_t* at = std::lower_bound(labels + lo, labels + hi, c);
    return at != labels + hi && *at == c ? static_cast<uint32_t>(at - labels) : kNoRank;
#endif
  }

  // Rank(p, n), answering 3-byte strings that are no tokens from the index's bitmap (the
  // pair check's lookups are mostly of 2 to 5 bytes; Rank filters 4-byte ones itself).
  uint32_t RankAcross(const PrefixIndex& ix, const uint8_t* p, size_t n) const {
    if (n == 3) {
      const uint32_t bit = PrefixIndex::Index3(p);
      if (((ix.tokens3[bit >> 6] >> (bit & 63)) & 1) == 0) return kNoRank;
    }
    return Rank(p, n);
  }

  uint64_t Info(const PrefixIndex& ix, uint32_t token) const {
    uint64_t info = ix.tokens[token].info.load(std::memory_order_relaxed);
    if ((info & kKnown) != 0) return info;
    return ComputeInfo(ix, token);
  }

  __attribute__((noinline)) uint64_t ComputeInfo(const PrefixIndex& ix, uint32_t token) const {
    const uint32_t rank = ix.tokens[token].rank;
    const auto* t = reinterpret_cast<const uint8_t*>(bytes.data() + offsets[rank]);
    const size_t len = Length(rank);
    uint64_t info = kKnown | (uint64_t{len} << kLengthShift);
    size_t parts = 0;
    auto one = [&parts](uint32_t, uint32_t) { ++parts; };
    if (len == 1) {
      info |= kSelfMerging | kWalkable;
    } else if (len <= kSmallPiece) {
      uint32_t cut = 1;  // where the last merge joined (for two bytes: the only merge)
      uint32_t last = 0;
      bool rising = true;
      MergeSmall(
          t, len, one,
          [&](uint32_t merged, const uint32_t* starts, size_t now) {
            rising = rising && merged >= last;
            last = merged;
            if (now == 2) cut = starts[1];
          },
          /*with_units=*/false);
      if (parts == 1) {
        info |= kSelfMerging;
        const uint32_t left = ix.token_of_rank[Rank(t, cut)];
        const uint32_t right = ix.token_of_rank[Rank(t + cut, len - cut)];
        if (rising && left <= kPartMask && right <= kPartMask) {
          info |= kWalkable | left | (uint64_t{right} << 24);
        }
      }
    } else {
      MergeLarge(t, len, one);
      if (parts == 1) info |= kSelfMerging;
    }
    ix.tokens[token].info.store(info, std::memory_order_relaxed);
    return info;
  }

  // Whether tokens t1 = p[b, m) and t2 = p[m, e) (indexes into ix.tokens), both
  // self-merging, merge back to exactly [t1, t2].
  // info1 / info2 = Info(ix, t1) / Info(ix, t2); spines = whether walking them is allowed.
  __attribute__((always_inline)) bool Compatible(const PrefixIndex& ix, BacktrackScratch& scratch, const uint8_t* p,
                                                 uint32_t b, uint32_t t1, uint64_t info1, uint32_t reach1, uint32_t m,
                                                 uint32_t t2, uint64_t info2, uint32_t e, bool spines,
                                                 bool short_pairs) const {
    if (short_pairs && std::max(t1, t2) < ix.short_tokens) {
      // Tokens of up to 2 bytes (all walkable, see BuildPrefixIndex): the table of their pairs
      // (PrefixIndex::short_pairs).
      const size_t at = size_t{t1} * ix.short_tokens + t2;
      std::atomic_ref<uint8_t> cell(ix.short_pairs[at >> 2]);
      const unsigned shift = static_cast<unsigned>(at & 3) * 2;
      const unsigned bits = cell.load(std::memory_order_relaxed) >> shift;
      if ((bits & 2) != 0) return (bits & 1) != 0;
      const bool ok = CompatibleBySpines(ix, scratch, p, m, t1, info1, reach1, t2, info2);
      cell.fetch_or(static_cast<uint8_t>((ok ? 3u : 2u) << shift), std::memory_order_relaxed);
      return ok;
    }
    // Runs of one letter or of a short period ask about the same pair again and again.
    if (t1 == scratch.last_pair[0] && t2 == scratch.last_pair[1]) return scratch.last_pair[2];
    bool ok;
    if ((info1 & info2 & kWalkable) != 0 && spines) {
      // Compatibility is a property of the two tokens alone: remembered by token pair while
      // that pays (see BacktrackScratch::spine_pairs).
      uint64_t* slot = nullptr;
      const uint64_t key = (uint64_t{t1} << 24) | t2;  // fewer than 2^24 tokens
      if (scratch.spine_rest > 0) {
        --scratch.spine_rest;
      } else {
        slot = &scratch.spine_pairs[PairHash(key) & (BacktrackScratch::kSpinePairSlots - 1)];
        const bool hit = (*slot >> 1) == key + 1;
        scratch.spine_hits += hit ? 1 : 0;
        if (++scratch.spine_probes == BacktrackScratch::kSpineWindow) {
          if (scratch.spine_hits * 4 < scratch.spine_probes) scratch.spine_rest = BacktrackScratch::kSpineRest;
          scratch.spine_probes = scratch.spine_hits = 0;
        }
        if (hit) {
          ok = *slot & 1;
          slot = nullptr;
          goto done;
        }
      }
      ok = CompatibleBySpines(ix, scratch, p, m, t1, info1, reach1, t2, info2);
      if (slot != nullptr) *slot = ((key + 1) << 1) | (ok ? 1 : 0);
    } else {
      ok = CompatibleByMerge(scratch, p, b, t1, m, t2, e);
    }
  done:
    scratch.last_pair[0] = t1;
    scratch.last_pair[1] = t2;
    scratch.last_pair[2] = ok ? 1 : 0;
    return ok;
  }

  // The pair check from the merge of the pair's bytes, remembered by token pair.
  __attribute__((noinline)) bool CompatibleByMerge(BacktrackScratch& scratch, const uint8_t* p, uint32_t b, uint32_t t1,
                                                   uint32_t m, uint32_t t2, uint32_t e) const {
    const uint64_t key = (uint64_t{t1} << 24) | t2;  // fewer than 2^24 tokens
    uint64_t& slot = scratch.pairs[PairHash(key) & (BacktrackScratch::kPairSlots - 1)];
    if ((slot >> 1) == key + 1) return slot & 1;
    size_t parts = 0;
    bool split_at_m = false;
    auto check = [&](uint32_t pb, uint32_t) {
      if (b + pb == m) split_at_m = true;
      ++parts;
    };
    if (e - b > kSmallPiece * 3 || !MergeSmall(p + b, e - b, check)) MergeLarge(p + b, e - b, check);
    const bool ok = parts == 2 && split_at_m;
    slot = ((key + 1) << 1) | (ok ? 1 : 0);
    return ok;
  }

  // The merge of t1 + t2, t1 = p[.., m) and t2 = p[m, ..) both walkable (see Info). Until
  // some merge joins a part of t1 with a part of t2, the merges inside t1 are t1's own run,
  // those inside t2 are t2's (each chosen merge is the lowest-ranked pair overall, hence
  // inside its side), interleaved by rank with t1's first on equal ranks (leftmost). The only
  // pair across is (t1's last part, t2's first part), and those parts are nodes of the
  // right spine of t1's merge tree (t1, its right part, that one's right part, ... its last
  // byte) and of the left spine of t2's. A spine node is made by the merge of its own rank,
  // so with non-decreasing runs the pair (x1, x2) stands across from the later of their
  // makings until the earlier making of the spine node above either, above1 / above2
  // (kNoRank above t1 / t2), and it is merged — t1, t2 incompatible — exactly when its rank
  // is below above1 and not above above2 (within that stretch the next merges of either side
  // only rise, so this last moment decides). The stretches are walked from the last one
  // back: the node made later steps down to its part; on equal ranks t1's was made first.
  //
  // While the left part is t1 itself, the string across starts where t1 does, and `reach1`
  // (LongestPrefixToken's there) rules out the ones too long to be a token without a lookup.
  __attribute__((always_inline)) bool CompatibleBySpines(const PrefixIndex& ix, BacktrackScratch& scratch,
                                                         const uint8_t* p, uint32_t m, uint32_t t1, uint64_t info1,
                                                         uint32_t reach1, uint32_t t2, uint64_t info2) const {
    uint32_t rank1 = ix.tokens[t1].rank;
    uint32_t rank2 = ix.tokens[t2].rank;
    uint32_t len1 = InfoLength(info1);
    uint32_t len2 = InfoLength(info2);
    uint32_t above1 = kNoRank;
    uint32_t above2 = kNoRank;
    while (true) {
      uint32_t across;
      if (above1 == kNoRank && len1 + len2 > reach1) {
        across = kNoRank;
      } else if (len1 + len2 == 2) {
        across = this->rank2[p[m - 1] | (uint32_t{p[m]} << 8)];  // one load: cheaper than the memo
      } else if (len1 + len2 == 3) {
        // Mostly one bit, exact: a string with its bit set is a token, so it is in short3.
        across = ix.Maybe3(p + m - len1) ? FindShort(short3, Key3(p + m - len1)) : kNoRank;
      } else if (len1 + len2 == 4) {
        const uint32_t key = Load32(p + m - len1);
        across = MaybeShort(ShortFilterBit4(key)) ? FindShort(short4, key) : kNoRank;  // Rank(.., 4) inlined
      } else if (len1 <= kAcrossMax && len2 <= kAcrossMax) {
        BacktrackScratch::Across& c = scratch.across[len1][len2];
        if (c.stamp != scratch.stamp) c = {scratch.stamp, RankAcross(ix, p + m - len1, len1 + len2)};
        across = c.rank;
      } else {
        across = RankAcross(ix, p + m - len1, len1 + len2);
      }
      if (across < above1 && across <= above2) return false;  // (kNoRank is never below)
      if (len1 == 1 && len2 == 1) return true;
      if (len2 == 1 || (len1 > 1 && rank1 > rank2)) {
        above1 = rank1;
        const uint32_t x = RightPart(info1);
        info1 = Info(ix, x);
        rank1 = ix.tokens[x].rank;
        len1 = InfoLength(info1);
      } else {
        above2 = rank2;
        const uint32_t x = LeftPart(info2);
        info2 = Info(ix, x);
        rank2 = ix.tokens[x].rank;
        len2 = InfoLength(info2);
      }
    }
  }

  // Two token strings side by side, for the pair-check test hooks below: their bytes, the
  // tokens' indexes and the boundary; false unless both strings are tokens.
  struct TestPair {
    std::string both;
    const uint8_t* p = nullptr;
    uint32_t t1 = 0, t2 = 0, m = 0, e = 0;
  };
  bool ResolveTestPair(std::string_view s1, std::string_view s2, TestPair* out) const {
    if (s1.empty() || s2.empty()) return false;
    const PrefixIndex& ix = Index();
    out->both = std::string(s1) + std::string(s2);
    out->p = reinterpret_cast<const uint8_t*>(out->both.data());
    const uint32_t r1 = Rank(out->p, s1.size());
    const uint32_t r2 = Rank(out->p + s1.size(), s2.size());
    if (r1 == kNoRank || r2 == kNoRank) return false;
    out->t1 = ix.token_of_rank[r1];
    out->t2 = ix.token_of_rank[r2];
    out->m = static_cast<uint32_t>(s1.size());
    out->e = static_cast<uint32_t>(out->both.size());
    return true;
  }

  bool PairCompatibleForTest(std::string_view s1, std::string_view s2, bool by_spines, bool* walked) const {
    const PrefixIndex& ix = Index();
    *walked = false;
    TestPair tp;
    if (!ResolveTestPair(s1, s2, &tp)) return false;
    BacktrackScratch& scratch = ThreadBacktrackScratch(this);
    scratch.NewPosition();
    if (by_spines && (Info(ix, tp.t1) & Info(ix, tp.t2) & kWalkable) != 0) {
      *walked = true;
      uint32_t reach = 0;
      LongestPrefixToken(ix, tp.p, tp.e, &reach);
      return CompatibleBySpines(ix, scratch, tp.p, tp.m, tp.t1, Info(ix, tp.t1), reach, tp.t2, Info(ix, tp.t2));
    }
    scratch.pairs[PairHash((uint64_t{tp.t1} << 24) | tp.t2) & (BacktrackScratch::kPairSlots - 1)] = 0;  // no memo
    return CompatibleByMerge(scratch, tp.p, 0, tp.t1, tp.m, tp.t2, tp.e);
  }

  // The pair check as the encoder runs it (Compatible), asked twice: the second answer, for
  // two tokens of up to 2 bytes (*in_table), comes from PrefixIndex::short_pairs.
  bool PairCompatibleByTableForTest(std::string_view s1, std::string_view s2, bool* in_table) const {
    const PrefixIndex& ix = Index();
    *in_table = false;
    TestPair tp;
    if (!ResolveTestPair(s1, s2, &tp)) return false;
    *in_table = std::max(tp.t1, tp.t2) < ix.short_tokens;
    uint32_t reach = 0;
    LongestPrefixToken(ix, tp.p, tp.e, &reach);
    BacktrackScratch& scratch = ThreadBacktrackScratch(this);
    bool ok = false;
    for (int k = 0; k < 2; ++k) {
      scratch.NewPosition();
      scratch.last_pair[0] = kNoRank;  // not the last-pair memo
      ok = Compatible(ix, scratch, tp.p, 0, tp.t1, Info(ix, tp.t1), reach, tp.m, tp.t2, Info(ix, tp.t2), tp.e, true,
                      g_short_pairs.load(std::memory_order_relaxed));
    }
    return ok;
  }

  mutable std::once_flag index_once;
  mutable std::unique_ptr<PrefixIndex> index;
  mutable std::atomic<bool> index_built{false};
  mutable std::atomic<uint64_t> medium_heap_bytes{0};
  // RunToken per byte: 0 unknown, kNoRank none, else the token (an index into the prefix
  // index's tokens) + 1.
  mutable std::array<std::atomic<uint32_t>, 256> run_tokens{};

  // Merging with a stack array, quadratic in the number of parts: false, before any call of
  // `part`, when p[0, n) starts as more than kSmallPiece parts. Parts start as single bytes,
  // or with `with_units` as merge units and single bytes (UnitLength; the same result).
  template <class PartFn>
  bool MergeSmall(const uint8_t* p, size_t n, PartFn& part) const {
    if (!g_small_merge.load(std::memory_order_relaxed)) return false;
#if defined(CAVEMAN_O200K_AVX2)
    if (HaveAvx2() && g_simd.load(std::memory_order_relaxed))
      return MergeSmallSlotsAvx2(p, n, part, g_units.load(std::memory_order_relaxed));
#endif
    return MergeSmallSlots<false>(p, n, part, g_units.load(std::memory_order_relaxed));
  }
#if defined(CAVEMAN_O200K_AVX2)
  // The same merge compiled for AVX2 (one instruction per 8 keys in MinKey), for processors
  // that have it (checked once per process).
  template <class PartFn>
  __attribute__((target(CAVEMAN_O200K_V3), noinline, flatten)) bool MergeSmallSlotsAvx2(const uint8_t* p, size_t n,
                                                                                        PartFn& part,
                                                                                        bool with_units) const {
    return MergeSmallSlots<true>(p, n, part, with_units);
  }
#endif

  // The same merge without moving anything: a part keeps the slot of the first part it began
  // as (its first unit), `alive` has a bit per slot that still starts a part, and key[k] holds
  // (rank << 6) | k for the pair of slot k's part with the next part (kDeadKey: none). The
  // smallest key is the lowest rank, leftmost on ties (a slot's index grows with its start).
  // Ranks are clamped to kKeyCap (kNoRank and nothing else there: vocabularies have fewer
  // tokens, see View / Parse).
  static constexpr uint32_t kKeyCap = (uint32_t{1} << 25) - 1;
  static constexpr uint32_t kDeadKey = UINT32_MAX >> 1;
  static uint32_t PairKey(uint32_t rank, size_t slot) {
    return (std::min(rank, kKeyCap) << 6) | static_cast<uint32_t>(slot);
  }
  template <bool kAvx2, class PartFn>
  __attribute__((always_inline)) bool MergeSmallSlots(const uint8_t* p, size_t n, PartFn& part, bool with_units) const {
    static_assert(kSmallPiece == 64);
    alignas(32) uint32_t key[kSmallPiece];
    uint32_t starts[kSmallPiece + 1];
    size_t parts = 0;
    if (with_units) with_units = !AllAscii(p, n);  // most pieces: no unit, a byte per part
    if (!with_units) {
      if (n > kSmallPiece) return false;
      for (size_t k = 0; k <= n; ++k) starts[k] = static_cast<uint32_t>(k);
      parts = n;
      for (size_t k = 0; k + 1 < parts; ++k) key[k] = PairKey(Rank(p + k, 2), k);
    } else {
      for (size_t k = 0; k < n; k += UnitLength(p + k, n - k)) {
        if (parts == kSmallPiece) return false;
        starts[parts++] = static_cast<uint32_t>(k);
      }
      starts[parts] = static_cast<uint32_t>(n);
      for (size_t k = 0; k + 1 < parts; ++k) key[k] = PairKey(Rank(p + starts[k], starts[k + 2] - starts[k]), k);
    }
    if (parts == 0) return true;
    key[parts - 1] = kDeadKey;
    const size_t vectors = (parts + 7) / 8 * 2;  // an even number (MinKey)
    for (size_t k = parts; k < vectors * 4; ++k) key[k] = kDeadKey;
    uint64_t alive = parts == 64 ? ~uint64_t{0} : (uint64_t{1} << parts) - 1;
    // End of the part at slot k (alive): the start of the next alive slot, or n.
    auto end_of = [&](uint64_t live, size_t k) -> uint32_t {
      const uint64_t after = k == 63 ? 0 : live >> (k + 1);
      return after == 0 ? static_cast<uint32_t>(n) : starts[k + 1 + static_cast<size_t>(__builtin_ctzll(after))];
    };
    while (true) {
      const uint32_t best = MinKeyOf<kAvx2>(key, vectors);
      if ((best >> 6) >= kKeyCap) break;  // no pair is a token (or no pair left)
      const size_t at = best & 63;
      // The right part's slot j, merged into `at`.
      const size_t j = at + 1 + static_cast<size_t>(__builtin_ctzll(alive >> (at + 1)));
      alive &= ~(uint64_t{1} << j);
      SetKey<kAvx2>(key, j, kDeadKey);
      const uint32_t merged_end = end_of(alive, at);
      const uint32_t begin = starts[at];
      // The two new pairs, with the left neighbour and with the right one (when there are):
      // independent lookups, both started before either is finished.
      const uint64_t below = alive & ((uint64_t{1} << at) - 1);
      const size_t l = below == 0 ? 0 : 63 - static_cast<size_t>(__builtin_clzll(below));
      RankQuery left{}, right{};
      if (merged_end < n) {
        const size_t r = at + 1 + static_cast<size_t>(__builtin_ctzll(alive >> (at + 1)));
        right = StartRank(p + begin, end_of(alive, r) - begin);
      }
      if (below != 0) left = StartRank(p + starts[l], merged_end - starts[l]);
      SetKey<kAvx2>(key, at, merged_end < n ? PairKey(FinishRank(right), at) : kDeadKey);
      if (below != 0) SetKey<kAvx2>(key, l, PairKey(FinishRank(left), l));
    }
    for (uint64_t live = alive; live != 0; live &= live - 1) {
      const size_t k = static_cast<size_t>(__builtin_ctzll(live));
      part(starts[k], end_of(alive, k));
    }
    return true;
  }

  // The smallest of key[0, 4 * vectors) (all below 2^31; `vectors` even, see
  // MergeSmallSlots). Two running minimums, so that the two halves' compare-and-select
  // chains run side by side.
  static uint32_t MinKey(const uint32_t* key, size_t vectors) {
#if defined(__SSE2__)
    auto min = [](__m128i a, __m128i b) {
      const __m128i lt = _mm_cmplt_epi32(b, a);
      return _mm_or_si128(_mm_and_si128(lt, b), _mm_andnot_si128(lt, a));
    };
    __m128i m = _mm_load_si128(reinterpret_cast<const __m128i*>(key));
    __m128i m2 = _mm_load_si128(reinterpret_cast<const __m128i*>(key + 4));
    for (size_t v = 2; v < vectors; v += 2) {
      m = min(m, _mm_load_si128(reinterpret_cast<const __m128i*>(key + 4 * v)));
      m2 = min(m2, _mm_load_si128(reinterpret_cast<const __m128i*>(key + 4 * v + 4)));
    }
    m = min(m, m2);
    __m128i s = _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2));
    __m128i lt = _mm_cmplt_epi32(s, m);
    m = _mm_or_si128(_mm_and_si128(lt, s), _mm_andnot_si128(lt, m));
    s = _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1));
    lt = _mm_cmplt_epi32(s, m);
    m = _mm_or_si128(_mm_and_si128(lt, s), _mm_andnot_si128(lt, m));
    return static_cast<uint32_t>(_mm_cvtsi128_si32(m));
#else
    uint32_t best = kDeadKey;
    for (size_t k = 0; k < 4 * vectors; ++k) best = std::min(best, key[k]);
    return best;
#endif
  }

  // The stack merge's two key operations, in the variant kAvx2 picks. Keys change one at a
  // time; the AVX2 variant rewrites the whole 32-byte vector holding the key, so that the next
  // minimum's loads are forwarded from that store instead of waiting for a narrower one.
  template <bool kAvx2>
  __attribute__((always_inline)) static uint32_t MinKeyOf(const uint32_t* key, size_t vectors) {
#if defined(CAVEMAN_O200K_AVX2)
    if constexpr (kAvx2) return MinKeyAvx2(key, vectors);
#endif
    return MinKey(key, vectors);
  }
  template <bool kAvx2>
  __attribute__((always_inline)) static void SetKey(uint32_t* key, size_t k, uint32_t v) {
#if defined(CAVEMAN_O200K_AVX2)
    if constexpr (kAvx2) {
      SetKeyAvx2(key, k, v);
      return;
    }
#endif
    key[k] = v;
  }

#if defined(CAVEMAN_O200K_AVX2)
  // MinKey with AVX2: `vectors` / 2 loads of 8 keys, one unsigned minimum each.
  __attribute__((target(CAVEMAN_O200K_V3))) static uint32_t MinKeyAvx2(const uint32_t* key, size_t vectors) {
    __m256i m = _mm256_load_si256(reinterpret_cast<const __m256i*>(key));
    for (size_t v = 2; v < vectors; v += 2) {
      m = _mm256_min_epu32(m, _mm256_load_si256(reinterpret_cast<const __m256i*>(key + 4 * v)));
    }
    __m128i x = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
    return static_cast<uint32_t>(_mm_cvtsi128_si32(x));
  }
  // key[k] = v by a load, a blend and a store of the aligned 8 keys around it.
  __attribute__((target(CAVEMAN_O200K_V3))) static void SetKeyAvx2(uint32_t* key, size_t k, uint32_t v) {
    auto* at = reinterpret_cast<__m256i*>(key + (k & ~size_t{7}));
    const __m256i lane =
        _mm256_cmpeq_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(k & 7)));
    _mm256_store_si256(at, _mm256_blendv_epi8(_mm256_load_si256(at), _mm256_set1_epi32(static_cast<int>(v)), lane));
  }
#endif

  // As above; step(rank, starts, parts) after each merge (`rank` the merged pair's, the parts
  // then starting at starts[0, parts), starts[parts] = n).
  template <class PartFn, class StepFn>
  bool MergeSmall(const uint8_t* p, size_t n, PartFn& part, StepFn&& step, bool with_units) const {
    uint32_t starts[kSmallPiece + 1];
    uint32_t pair[kSmallPiece];  // pair[k] = rank of parts k and k+1 joined
    size_t parts = 0;
    if (with_units) with_units = !AllAscii(p, n);  // most pieces: no unit, a byte per part
    if (!with_units) {
      if (n > kSmallPiece) return false;
      for (size_t k = 0; k <= n; ++k) starts[k] = static_cast<uint32_t>(k);
      parts = n;
      for (size_t k = 0; k + 1 < parts; ++k) pair[k] = Rank(p + k, 2);
    } else {
      for (size_t k = 0; k < n; k += UnitLength(p + k, n - k)) {
        if (parts == kSmallPiece) return false;
        starts[parts++] = static_cast<uint32_t>(k);
      }
      starts[parts] = static_cast<uint32_t>(n);
      for (size_t k = 0; k + 1 < parts; ++k) pair[k] = Rank(p + starts[k], starts[k + 2] - starts[k]);
    }
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
      step(best, starts, parts);
    }
    for (size_t k = 0; k < parts; ++k) part(starts[k], starts[k + 1]);
    return true;
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
    // The first parts: bytes, and merge units (see MergeSmall).
    const bool with_units = g_units.load(std::memory_order_relaxed) && !AllAscii(p, n);
    uint32_t last = kNoRank;
    for (uint32_t i = 0; i < n;) {
      const auto len = static_cast<uint32_t>(with_units ? UnitLength(p + i, n - i) : 1);
      next[i] = i + len;
      prev[i] = last;
      for (uint32_t k = 1; k < len; ++k) alive[i + k] = 0;
      last = i;
      i += len;
    }
    for (uint32_t i = 0; i < n; i = next[i]) {
      pair_rank[i] = pair_of(i);
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
        ascii_(classes.ascii()),
        replacement_cls_(classes.Of(kReplacementChar)) {}

  // End of the piece starting at i. REQUIRES: i < size, i on a code point boundary.
  size_t PieceEnd(size_t i) const {
    const Cp c0 = At(i);
    const bool may_prefix = (c0.cls & (kClsLetter | kClsNumber | kClsCrLf)) == 0;
    // Alternatives 1 and 2 match only where a character of [Up] or [Lo] starts them, at i or
    // (after the optional prefix) right behind c0; most symbols and spaces skip both here.
    constexpr uint8_t kGroups = kClsUpperGroup | kClsLowerGroup;
    if ((c0.cls & kGroups) != 0 || (may_prefix && i + c0.len < n_ && (At(i + c0.len).cls & kGroups) != 0)) {
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
    }
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
      if (IsSymbol(q == i ? c0.cls : At(q).cls)) {
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

  static bool IsSymbol(uint8_t cls) { return (cls & (kClsLetter | kClsNumber | kClsSpace)) == 0; }

  // REQUIRES: i < n_. Always inlined: it is the innermost step of every scan below, and GCC's
  // unit-growth limit otherwise leaves it out of line once the file grows (that cost 15 % of
  // counting).
  __attribute__((always_inline)) Cp At(size_t i) const {
    const uint8_t b = s_[i];
    if (b < 0x80) return {ascii_[b], 1};
    const uint8_t* p = s_ + i;
    if (b < 0xE0) return {classes_.Of((uint32_t{b & 0x1Fu} << 6) | (p[1] & 0x3Fu)), 2};
    if (b < 0xF0) {
      // U+FFFD (EF BF BD), what every ill-formed byte became: most 3-byte sequences of
      // random bytes.
      if (b == 0xEF && p[1] == 0xBF && p[2] == 0xBD) return {replacement_cls_, 3};
      return {classes_.Of((uint32_t{b & 0x0Fu} << 12) | (uint32_t{p[1] & 0x3Fu} << 6) | (p[2] & 0x3Fu)), 3};
    }
    return {classes_.Of((uint32_t{b & 0x07u} << 18) | (uint32_t{p[1] & 0x3Fu} << 12) | (uint32_t{p[2] & 0x3Fu} << 6) |
                        (p[3] & 0x3Fu)),
            4};
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
    // Eight ASCII lowercase letters at a time (all of them [Lo]); the loop below does the rest.
    constexpr uint64_t kOnes = 0x0101010101010101ULL;
    constexpr uint64_t kHigh = 0x8080808080808080ULL;
    while (p + 8 <= n_) {
      const uint64_t w = Load64(s_ + p);
      // Per byte b < 0x80 (no carry leaves a byte): the high bit of b + 0x1F is b >= 'a', of
      // b + 0x05 is b > 'z'.
      if (((w + 0x1F * kOnes) & ~(w + 0x05 * kOnes) & ~w & kHigh) != kHigh) break;
      p += 8;
    }
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
  uint8_t replacement_cls_;
};

// Per-thread memo of merged piece counts: most pieces that are not whole tokens repeat
// (identifiers, paths, numbers in logs), and merging costs far more than a probe.
// Thread-local because Count() is const and called concurrently; there is only one
// tokenizer per process, and a key includes its bytes, so a stale hit is impossible.
// Zero bytes are an empty slot (a piece is never empty), so a calloc'd table needs no
// initialising pass. It starts small (8 KiB): a 4 KiB `compress` merges a few hundred pieces,
// and touching all 128 KiB of the full table cost it ≈ 30 page faults (issue 19); it grows,
// empty, after kCacheGrowMisses misses. Sizes change nothing but the hit rate.
struct CountCache {
  struct Entry {
    uint8_t len;  // 0 = empty
    uint8_t count;
    char bytes[kCacheKeyMax];
  };
  Entry* entries = nullptr;
  size_t mask = 0;
  uint64_t misses = 0;
  const void* owner = nullptr;
  uint64_t settings = 0;  // g_test_settings when made

  Entry& Slot(uint64_t hash) { return entries[hash & mask]; }
  // After a miss: the larger table once enough merges missed the small one.
  void Missed() {
    if (++misses == kCacheGrowMisses && mask + 1 < kCacheEntries) Reset(kCacheEntries);
  }
  void Reset(size_t n) {
    std::free(entries);
    entries = static_cast<Entry*>(CheckedCalloc(n * sizeof(Entry)));
    mask = n - 1;
  }

  // Run memo: a piece of more than kCacheKeyMax bytes that is `head` + byte × run + `tail`
  // (head and tail of at most kRunMemoEdge bytes, run >= kRunMemoMinRun) is keyed by that
  // description, which spells its bytes exactly: separator rules of every length, after any
  // lead and before any line end, take about ten thousand keys where their bytes would take
  // megabytes (issue 15 item 11: 64 MiB of such lines cost 1.95 s of merging). Direct-mapped,
  // a new key replaces the old; allocated at the first such piece only.
  struct RunKey {
    uint64_t head;  // byte i of the head in bits 8i..8i+7, the head's length + 1 in the top byte
    uint64_t tail;  // the same for the tail
    uint64_t run;   // run length << 8 | the byte
    bool operator==(const RunKey&) const = default;
  };
  struct RunEntry {
    RunKey key;  // all zero: an empty slot (every key has its length bytes set)
    uint64_t count;
  };
  RunEntry* runs = nullptr;

  // Up to kRunMemoEdge bytes and their length, packed as RunKey says (whatever the byte order).
  static uint64_t PackEdge(const uint8_t* p, size_t n) {
    static_assert(kRunMemoEdge < 8, "the top byte holds the length");
    uint64_t v = uint64_t{n + 1} << 56;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
  }
  // The first j >= at with p[j] != c, or n.
  static size_t RunEnd(const uint8_t* p, size_t n, size_t at, uint8_t c) {
    const uint64_t all = 0x0101010101010101ULL * c;
    size_t j = at;
    for (; j + 8 <= n; j += 8) {
      const uint64_t diff = Load64(p + j) ^ all;
      if (diff != 0) {
        const unsigned bit =
            std::endian::native == std::endian::little ? std::countr_zero(diff) : std::countl_zero(diff);
        return j + bit / 8;
      }
    }
    while (j < n && p[j] == c) ++j;
    return j;
  }
  // The description of piece[0, len), when it has one; else false.
  static bool Describe(const uint8_t* piece, size_t len, RunKey* key) {
    for (size_t h = 0; h <= kRunMemoEdge && h < len; ++h) {
      const uint8_t c = piece[h];
      const size_t j = RunEnd(piece, len, h + 1, c);
      if (j - h < kRunMemoMinRun) continue;  // not the run; it may start further in
      if (len - j > kRunMemoEdge) return false;
      key->head = PackEdge(piece, h);
      key->tail = PackEdge(piece + j, len - j);
      key->run = (uint64_t{j - h} << 8) | c;
      return true;
    }
    return false;
  }
  RunEntry& RunSlot(const RunKey& key) {
    if (runs == nullptr) runs = static_cast<RunEntry*>(CheckedCalloc(kRunMemoEntries * sizeof(RunEntry)));
    uint64_t h =
        (key.head * 0x9E3779B97F4A7C15ULL) ^ (key.tail * 0xC2B2AE3D27D4EB4FULL) ^ (key.run * 0x165667B19E3779F9ULL);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return runs[h >> (64 - kRunMemoBits)];  // the top bits: every bit of the key reaches them
  }
  ~CountCache() {
    std::free(entries);
    std::free(runs);
  }
};
static_assert(sizeof(CountCache::Entry) == 32);

// On the heap, only for threads that count: a 128 KiB thread_local object would be static TLS,
// which glibc zero-fills at the creation of every thread of the process, counting or not
// (four per `compress`; issue 19, docs/PERFORMANCE.md "Small inputs").
CountCache& ThreadCache(const void* owner) {
  thread_local std::unique_ptr<CountCache> cache;
  const uint64_t settings = g_test_settings.load(std::memory_order_relaxed);
  if (cache == nullptr || cache->owner != owner || cache->settings != settings) {
    // First use on this thread, or another tokenizer or a test switch (only in tests) since
    // its last use: start afresh.
    cache = std::make_unique<CountCache>();
    cache->Reset(kCacheFirstEntries);
    cache->owner = owner;
    cache->settings = settings;
  }
  return *cache;
}

}  // namespace

// ---------------------------------------------------------------------------------------

Result<std::unique_ptr<O200kTokenizer>> O200kTokenizer::Create(std::string_view tiktoken) {
  const std::string hex = Sha256::Hex(Sha256::Digest(tiktoken));
  if (hex != kO200kSha256Hex) {
    return Status::Corruption("o200k vocabulary: SHA-256 " + hex + " does not match " + std::string(kO200kSha256Hex));
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
constexpr uint32_t kTablesVersion =
    6;  // 2: short-token tables and the filter; 3: the short filter; 4: bigrams; 5: units;
        // 6: long-token prefixes
constexpr size_t kTablesAlign = 64;

// Sizes of the short-token tables and the filter (checked against Vocabulary in FromTables).
constexpr size_t kTablesShortSlots = size_t{1} << 16;
constexpr size_t kTablesShortSlotBytes = 8;
constexpr size_t kTablesFilterWords = (size_t{1} << 21) / 64;
constexpr size_t kTablesShortFilterWords = ((size_t{1} << 18) + (size_t{1} << 19)) / 64;
constexpr size_t kTablesBigramWords = (size_t{1} << 16) / 64;
constexpr size_t kTablesUnitWords = (size_t{1} << 16) / 64;
constexpr size_t kTablesLongPrefixWords = (size_t{1} << 20) / 64;

size_t AlignUp(size_t n) { return (n + kTablesAlign - 1) / kTablesAlign * kTablesAlign; }

struct TablesLayout {
  size_t offsets, slots, bytes, index, leaves, rank1, rank2, short3, short4, filter, short_filter, bigrams, units,
      long_prefix, end;
};

TablesLayout LayoutOf(const TablesHeader& h) {
  TablesLayout l;
  l.offsets = sizeof(TablesHeader);
  l.slots = AlignUp(l.offsets + (size_t{h.count} + 1) * sizeof(uint32_t));
  l.bytes = AlignUp(l.slots + size_t{h.slot_count} * 2 * sizeof(uint32_t));
  l.index = AlignUp(l.bytes + h.bytes_size);
  l.leaves = AlignUp(l.index + size_t{h.index_count} * sizeof(uint16_t));
  l.rank1 = AlignUp(l.leaves + h.leaf_bytes);
  l.rank2 = AlignUp(l.rank1 + 256 * sizeof(uint32_t));
  l.short3 = AlignUp(l.rank2 + 65536 * sizeof(uint32_t));
  l.short4 = AlignUp(l.short3 + kTablesShortSlots * kTablesShortSlotBytes);
  l.filter = AlignUp(l.short4 + kTablesShortSlots * kTablesShortSlotBytes);
  l.short_filter = AlignUp(l.filter + kTablesFilterWords * sizeof(uint64_t));
  l.bigrams = AlignUp(l.short_filter + kTablesShortFilterWords * sizeof(uint64_t));
  l.units = AlignUp(l.bigrams + kTablesBigramWords * sizeof(uint64_t));
  l.long_prefix = AlignUp(l.units + kTablesUnitWords * sizeof(uint64_t));
  l.end = l.long_prefix + kTablesLongPrefixWords * sizeof(uint64_t);
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
  const bool sizes_ok = h.count > 0 && h.count < (uint32_t{1} << 24) && h.slot_count >= h.count &&
                        (h.slot_count & (h.slot_count - 1)) == 0 && h.index_count == CodePointClasses::kBlocks &&
                        h.leaf_bytes > 0 && h.leaf_bytes % 256 == 0 && layout->end == tables.size();
  if (!sizes_ok) return Status::Corruption("o200k tables: sizes do not add up");
  uint32_t last_offset;
  std::memcpy(&last_offset, tables.data() + layout->offsets + size_t{h.count} * sizeof(uint32_t), sizeof last_offset);
  if (last_offset != h.bytes_size) return Status::Corruption("o200k tables: offsets do not end");
  const auto* index = reinterpret_cast<const uint16_t*>(tables.data() + layout->index);
  for (size_t b = 0; b < h.index_count; ++b) {
    if (size_t{index[b]} * 256 >= h.leaf_bytes) return Status::Corruption("o200k tables: bad index");
  }
  return Status::OK();
}

}  // namespace

Status O200kClassTables(std::string_view tables, const uint16_t** index, const uint8_t** leaves, size_t* leaf_bytes) {
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
  vocab->offsets =
      std::span<const uint32_t>(reinterpret_cast<const uint32_t*>(tables.data() + l.offsets), size_t{h.count} + 1);
  vocab->slots = std::span<const Vocabulary::Slot>(reinterpret_cast<const Vocabulary::Slot*>(tables.data() + l.slots),
                                                   h.slot_count);
  vocab->bytes = tables.substr(l.bytes, h.bytes_size);
  vocab->mask = h.slot_count - 1;
  vocab->max_len = h.max_len;
  auto view = [&tables](size_t at, auto* type, size_t n) {
    using T = std::remove_pointer_t<decltype(type)>;
    return std::span<const T>(reinterpret_cast<const T*>(tables.data() + at), n);
  };
  using V = Vocabulary;
  static_assert(V::kShortSlots == kTablesShortSlots && sizeof(V::ShortSlot) == kTablesShortSlotBytes &&
                V::kFilterWords == kTablesFilterWords && V::kShortFilterWords == kTablesShortFilterWords &&
                V::kBigramWords == kTablesBigramWords && V::kUnitWords == kTablesUnitWords &&
                V::kLongPrefixWords == kTablesLongPrefixWords);
  vocab->rank1 = view(l.rank1, static_cast<uint32_t*>(nullptr), 256);
  vocab->rank2 = view(l.rank2, static_cast<uint32_t*>(nullptr), 65536);
  vocab->short3 = view(l.short3, static_cast<V::ShortSlot*>(nullptr), V::kShortSlots);
  vocab->short4 = view(l.short4, static_cast<V::ShortSlot*>(nullptr), V::kShortSlots);
  vocab->filter = view(l.filter, static_cast<uint64_t*>(nullptr), V::kFilterWords);
  vocab->short_filter = view(l.short_filter, static_cast<uint64_t*>(nullptr), V::kShortFilterWords);
  vocab->bigrams = view(l.bigrams, static_cast<uint64_t*>(nullptr), V::kBigramWords);
  vocab->units = view(l.units, static_cast<uint64_t*>(nullptr), V::kUnitWords);
  vocab->long_prefix = view(l.long_prefix, static_cast<uint64_t*>(nullptr), V::kLongPrefixWords);
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
  std::memcpy(d + l.rank1, v.rank1.data(), v.rank1.size_bytes());
  std::memcpy(d + l.rank2, v.rank2.data(), v.rank2.size_bytes());
  std::memcpy(d + l.short3, v.short3.data(), v.short3.size_bytes());
  std::memcpy(d + l.short4, v.short4.data(), v.short4.size_bytes());
  std::memcpy(d + l.filter, v.filter.data(), v.filter.size_bytes());
  std::memcpy(d + l.short_filter, v.short_filter.data(), v.short_filter.size_bytes());
  std::memcpy(d + l.bigrams, v.bigrams.data(), v.bigrams.size_bytes());
  std::memcpy(d + l.units, v.units.data(), v.units.size_bytes());
  std::memcpy(d + l.long_prefix, v.long_prefix.data(), v.long_prefix.size_bytes());
}

O200kTokenizer::O200kTokenizer(std::unique_ptr<Vocabulary> vocab) : vocab_(std::move(vocab)) {}
O200kTokenizer::~O200kTokenizer() = default;

size_t O200kTokenizer::vocabulary_size() const { return vocab_->size(); }

bool O200kTokenizer::PairCompatibleForTest(std::string_view t1, std::string_view t2, bool by_spines,
                                           bool* walked) const {
  return vocab_->PairCompatibleForTest(t1, t2, by_spines, walked);
}

bool O200kTokenizer::PairCompatibleByTableForTest(std::string_view t1, std::string_view t2, bool* in_table) const {
  return vocab_->PairCompatibleByTableForTest(t1, t2, in_table);
}

uint32_t O200kTokenizer::RankForTest(std::string_view bytes, bool split) const {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  return split ? vocab_->FinishRank(vocab_->StartRank(p, bytes.size())) : vocab_->Rank(p, bytes.size());
}

bool O200kTokenizer::PairInTokenForTest(uint8_t a, uint8_t b) const { return vocab_->InOneToken(a, b); }

bool O200kTokenizer::IsMergeUnitForTest(uint32_t cp) const { return cp < 0x10000 && vocab_->IsUnit(cp); }

// Text with ill-formed bytes is sanitized and counted block by block: a block ends at the
// first line-memo cut (an LF, spaces and tabs, then an ASCII byte that is not white space, and
// not '/' right after the LF; see CountWellFormed) at least kSanitizeBlock bytes in, so the
// sanitized copy (up to three times the block) stays in the cache and its buffer is reused,
// instead of one copy of up to three times the whole text. The cut is placed on the raw bytes:
// it is made of ASCII bytes, which sanitizing keeps as they are and never produces, and the
// byte before it is an LF, so no sequence spans it and the sanitized blocks put together are
// the sanitized text, cut at the same place (docs/DECISIONS.md, "Token counting of long
// pieces", third step).
uint64_t O200kTokenizer::Count(std::string_view text) const {
  if (text.empty()) return 0;
  if (FirstInvalidUtf8(text) == text.size()) return CountWellFormed(text);
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  const uint8_t* ascii = CodePointClasses::Get().ascii();
  const size_t block = g_sanitize_block.load(std::memory_order_relaxed);
  // Kept while small; a block without a cut can be the whole text. Not zero-filled, and from
  // 1 MiB on in huge pages: a 64 MiB block without a cut (random bytes 0x80-0xFF: no ASCII at
  // all) needs 192 MiB, which cost a memset and ≈ 49,000 page faults per count.
  struct Buffer {
    char* data = nullptr;
    size_t size = 0;
    void Reset(size_t n) {
      if (data != nullptr) HugePageAllocator<char>().deallocate(data, size);
      data = n == 0 ? nullptr : HugePageAllocator<char>().allocate(n);
      size = n;
    }
    ~Buffer() { Reset(0); }
  };
  thread_local Buffer buffer;
  uint64_t total = 0;
  size_t begin = 0;
  while (begin < n) {
    size_t end = n;
    for (size_t scan = begin + block; scan < n;) {
      const void* nl = std::memchr(s + scan, '\n', n - scan);
      if (nl == nullptr) break;
      const size_t p = static_cast<size_t>(static_cast<const uint8_t*>(nl) - s) + 1;
      size_t q = p;
      while (q < n && (s[q] == ' ' || s[q] == '\t')) ++q;
      if (q < n && s[q] < 0x80 && (ascii[s[q]] & kClsSpace) == 0 && (q > p || s[q] != '/')) {
        end = p;
        break;
      }
      scan = q;
    }
    const std::string_view part = text.substr(begin, end - begin);
    if (buffer.size < 3 * part.size() + 1) {
      buffer.Reset(0);
      buffer.Reset(3 * part.size() + 1);
    }
    total += CountWellFormed(std::string_view(buffer.data, SanitizeUtf8To(part, buffer.data)));
    begin = end;
  }
  if (buffer.size > kSanitizeBufferKeep) buffer.Reset(0);
  return total;
}

void O200kTokenizer::Encode(std::string_view text, std::vector<uint32_t>* ids) const {
  if (text.empty()) return;
  if (FirstInvalidUtf8(text) != text.size()) {
    EncodeWellFormed(SanitizeUtf8(text), ids);
  } else {
    EncodeWellFormed(text, ids);
  }
}

// Counts are additive across safe cuts (§7.4: after an LF, before a code point that is
// neither White_Space nor '/'), and tool output repeats whole lines heavily (a CI log: progress
// lines, retries, the same warning; the generated 64 MiB log has 7 % distinct lines). So a
// long text is counted segment by segment between safe cuts, and a segment of a usual line's
// length is looked up in a per-thread memo of exact byte strings first. A miss costs a hash
// and a probe (well under a tenth of counting the bytes); a hit skips pre-tokenisation and
// merging entirely. The result is the same number either way: entries are compared byte for
// byte, and the cuts are the count-additive ones.
uint64_t O200kTokenizer::CountWellFormed(std::string_view text) const {
  if (text.size() < kLineMemoMinText) return CountPieces(text);
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  const uint8_t* ascii = CodePointClasses::Get().ascii();
  LineMemo& memo = ThreadLineMemo(this);
  if (memo.Paused(n)) return CountPieces(text);
  size_t scan = 0;
  // The next cut after the last one: an LF, then any run of spaces and tabs (indentation),
  // then an ASCII byte that is not white space — and not '/' right after the LF; n if none.
  // No piece can span such a place (docs/DECISIONS.md, "Line memo of the token counter"):
  // the LF ends a `\s*[\r\n]+` or punctuation-`[\r\n/]*` piece because no LF (or '/')
  // follows, and the indentation starts a piece of its own. §7.4's safe cut is the case of
  // an empty run. Other places are simply not cuts here (fewer cuts never change a count).
  auto next_cut = [&]() -> size_t {
    while (scan < n) {
      const void* nl = std::memchr(s + scan, '\n', n - scan);
      if (nl == nullptr) {
        scan = n;
        break;
      }
      const size_t p = static_cast<size_t>(static_cast<const uint8_t*>(nl) - s) + 1;
      size_t q = p;
      while (q < n && (s[q] == ' ' || s[q] == '\t')) ++q;
      scan = q;
      if (q < n && s[q] < 0x80 && (ascii[s[q]] & kClsSpace) == 0 && (q > p || s[q] != '/')) return p;
    }
    return n;
  };
  auto memo_len = [](size_t b, size_t e) { return e - b >= kLineMemoMinLine && e - b <= kLineMemoMaxLine; };
  uint64_t total = 0;
  size_t begin = 0;  // start of the current segment (a safe cut, or 0)
  size_t plain = 0;  // start of the segments not yet counted (they skipped the memo)
  size_t end = next_cut();
  bool looked_up = memo_len(begin, end);  // whether [begin, end) goes to the memo
  bool hashed = looked_up;                // whether `hash` is its HashBytes
  uint64_t hash = looked_up ? HashBytes(s, end) : 0;
  while (begin < n) {
    // The segment after this one is found and hashed first, and its slot prefetched, so
    // that its probe finds the slot loaded while this one is counted. A segment equal to
    // this one (most lines of some logs) is not hashed: the memo finds it without a probe.
    const size_t next_end = end < n ? next_cut() : n;
    const bool next_looked_up = end < n && memo_len(end, next_end);
    const bool next_hashed = next_looked_up && !(next_end - end == end - begin && looked_up &&
                                                 std::memcmp(s + begin, s + end, end - begin) == 0);
    const uint64_t next_hash = next_hashed ? HashBytes(s + end, next_end - end) : 0;
    if (next_hashed) memo.Prefetch(next_hash);
    if (looked_up) {
      // Segments that skip the memo are counted together, in one call (adjacent segments
      // between cuts concatenate to a text whose count is their sum).
      if (plain < begin) total += CountPieces(text.substr(plain, begin - plain));
      total += memo.Count(text.substr(begin, end - begin), hashed ? &hash : nullptr,
                          [this](std::string_view seg) { return CountPieces(seg); });
      plain = end;
    }
    if (memo.ShouldPause()) break;  // the rest in one CountPieces call below
    begin = end;
    end = next_end;
    looked_up = next_looked_up;
    hashed = next_hashed;
    hash = next_hash;
  }
  if (plain < n) total += CountPieces(text.substr(plain));
  return total;
}

// Not inlined into CountWellFormed: its hot loop keeps the code and registers it had alone.
//
// A piece that is not itself a token is first cut where two neighbouring bytes occur together
// in no token (Vocabulary::bigrams): no merge can join across such a place, since every merge
// makes a token, so the merge of the piece is the merges of its segments side by side
// (docs/DECISIONS.md, "Byte-pair cuts"). Random bytes and symbol runs fall apart into
// segments that are mostly single tokens, and the rest repeat far more than whole pieces do.
__attribute__((noinline)) uint64_t O200kTokenizer::CountPieces(std::string_view text) const {
  const Vocabulary& vocab = *vocab_;
  const Pretokenizer pre(text, CodePointClasses::Get());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  CountCache& cache = ThreadCache(this);
  const bool cuts = g_pair_cuts.load(std::memory_order_relaxed);
  const bool run_memo = g_run_memo.load(std::memory_order_relaxed);
  // Count of a segment known not to be a token.
  // `hash` = HashBytes(piece, len) when the caller has it, else 0.
  auto merged = [&](const uint8_t* piece, size_t len, uint64_t hash) -> uint64_t {
    CountCache::Entry* slot = nullptr;
    if (len <= kCacheKeyMax) {
      slot = &cache.Slot(hash != 0 ? hash : HashBytes(piece, len));
      if (slot->len == len && std::memcmp(slot->bytes, piece, len) == 0) return slot->count;
    }
    CountCache::RunKey run_key;
    CountCache::RunEntry* run = nullptr;
    if (slot == nullptr && run_memo && CountCache::Describe(piece, len, &run_key)) {
      run = &cache.RunSlot(run_key);
      if (run->key == run_key) return run->count;
    }
    uint64_t parts = 0;
    parts -= vocab.Merge(piece, len, [&parts](uint32_t, uint32_t) { ++parts; });
    if (run != nullptr) *run = {run_key, parts};
    if (slot != nullptr) {
      slot->len = static_cast<uint8_t>(len);
      slot->count = static_cast<uint8_t>(parts);  // parts <= len <= kCacheKeyMax
      std::memcpy(slot->bytes, piece, len);
      cache.Missed();  // (may replace the table: `slot` is not used after this)
    }
    return parts;
  };
  uint64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = pre.PieceEnd(i);
    const uint8_t* piece = s + i;
    const size_t len = end - i;
    i = end;
    // Whole-piece lookup first: most pieces of text are tokens (looking for cuts first saves
    // 3 % on random bytes but costs 13 % on a JSON dump, callgrind).
    // (Longer pieces are hashed once, for the lookup and the count cache.)
    uint64_t hash = 0;
    if (len > 4 && len <= vocab.max_len) {
      hash = HashBytes(piece, len);
      if (vocab.RankLong(piece, len, hash) != kNoRank) {
        ++total;
        continue;
      }
    } else if (vocab.Rank(piece, len) != kNoRank) {
      ++total;
      continue;
    }
    size_t cut = 1;  // the first place no merge can join across, or len
    if (cuts && len <= kO200kLongPiece) {
      while (cut < len && vocab.InOneToken(piece[cut - 1], piece[cut])) ++cut;
    } else {
      cut = len;
    }
    if (cut == len) {
      total += merged(piece, len, hash);
      continue;
    }
    size_t begin = 0;
    while (true) {
      const size_t n = cut - begin;
      if (n == 1 || vocab.Rank(piece + begin, n) != kNoRank) {
        ++total;
      } else {
        total += merged(piece + begin, n, 0);
      }
      if (cut == len) break;
      begin = cut;
      for (++cut; cut < len && vocab.InOneToken(piece[cut - 1], piece[cut]);) ++cut;
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
    const size_t discard =
        vocab.Merge(piece, len, [&](uint32_t b, uint32_t e) { ids->push_back(vocab.Rank(piece + b, e - b)); });
    if (discard > 0)
      ids->erase(ids->begin() + static_cast<std::ptrdiff_t>(before),
                 ids->begin() + static_cast<std::ptrdiff_t>(before + discard));
  }
}

namespace {
// A test switch: the new value, and every thread's memos forgotten (g_test_settings).
template <typename T, typename V>
void SetForTest(std::atomic<T>& flag, V value) {
  flag.store(static_cast<T>(value));
  g_test_settings.fetch_add(1);
}
}  // namespace

void SetO200kBacktrackMergeForTest(bool on) { SetForTest(g_backtrack_merge, on); }
void SetO200kLongPieceForTest(size_t bytes) { SetForTest(g_long_piece, bytes); }
void SetO200kBacktrackKeepForTest(size_t tokens) { SetForTest(g_backtrack_keep, tokens == 0 ? kKeepTokens : tokens); }
uint64_t O200kBacktrackRetriesForTest() { return g_backtrack_retries.load(); }
uint64_t O200kRunTokenStepsForTest() { return g_run_token_steps.load(); }
void SetO200kRunTokenForTest(int choice) { SetForTest(g_run_token_choice, choice); }
void SetO200kSpineCheckForTest(bool on) { SetForTest(g_spine_check, on); }
void SetO200kShortPairsForTest(bool on) { SetForTest(g_short_pairs, on); }
void SetO200kPairCutsForTest(bool on) { SetForTest(g_pair_cuts, on); }
void SetO200kRunMemoForTest(bool on) { SetForTest(g_run_memo, on); }
void SetO200kUnitsForTest(bool on) { SetForTest(g_units, on); }
void SetO200kSmallMergeForTest(bool on) { SetForTest(g_small_merge, on); }
void SetO200kSimdForTest(bool on) { SetForTest(g_simd, on); }
bool O200kHasSimdMergeForTest() {
#if defined(CAVEMAN_O200K_AVX2)
  return HaveAvx2();
#else
  return false;
#endif
}
void SetO200kSanitizeBlockForTest(size_t bytes) { SetForTest(g_sanitize_block, bytes == 0 ? kSanitizeBlock : bytes); }

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
