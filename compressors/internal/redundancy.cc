#include "compressors/internal/redundancy.h"

#include <algorithm>
#include <cstring>

#include <unicode/uchar.h>

#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

constexpr uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

uint64_t HashToken(std::string_view t) {
  uint64_t h = kFnvOffset;
  for (unsigned char c : t) {
    h ^= c;
    h *= kFnvPrime;
  }
  return Mix(h ^ t.size());
}

// The token being scanned, as text (for ProfileTokenStrings) ...
struct TextToken {
  std::string text;
  void Push(char c) { text.push_back(c); }
  void PushCodePoint(uint32_t cp) { AppendUtf8(cp, &text); }
  bool empty() const { return text.empty(); }
  void Clear() { text.clear(); }
};

// ... or only as its HashToken, computed byte by byte as the text would be appended (profiles
// need only the hashes; no string is built per token: issue 19).
struct HashedToken {
  uint64_t h = kFnvOffset;
  size_t size = 0;
  void Push(char c) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
    ++size;
  }
  void PushCodePoint(uint32_t cp) {
    // The bytes AppendUtf8 writes.
    if (cp < 0x80) {
      Push(static_cast<char>(cp));
    } else if (cp < 0x800) {
      Push(static_cast<char>(0xC0 | (cp >> 6)));
      Push(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      Push(static_cast<char>(0xE0 | (cp >> 12)));
      Push(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      Push(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      Push(static_cast<char>(0xF0 | (cp >> 18)));
      Push(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      Push(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      Push(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  bool empty() const { return size == 0; }
  void Clear() {
    h = kFnvOffset;
    size = 0;
  }
  uint64_t Hash() const { return Mix(h ^ size); }
};

// Token scanner. Hands each finished token to `sink(token, has_letter)` (a TextToken or a
// HashedToken); stops when `sink` returns false.
template <class Token, class Sink>
void ScanTokens(std::string_view unit, bool mask, Sink&& sink) {
  Token cur;
  bool has_letter = false;
  bool prev_digit = false;
  auto flush = [&]() -> bool {
    bool go = true;
    if (!cur.empty()) go = sink(static_cast<const Token&>(cur), has_letter);
    cur.Clear();
    has_letter = false;
    prev_digit = false;
    return go;
  };
  size_t i = 0;
  while (i < unit.size()) {
    unsigned char c = static_cast<unsigned char>(unit[i]);
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      cp = (c >= 'A' && c <= 'Z') ? c + 32u : c;
      if (cp >= 'a' && cp <= 'z') {
        cur.Push(static_cast<char>(cp));
        has_letter = true;
        prev_digit = false;
        continue;
      }
      if (cp >= '0' && cp <= '9') {
        if (!mask) {
          cur.Push(static_cast<char>(cp));
        } else if (!prev_digit) {
          cur.Push('#');
        }
        prev_digit = true;
        continue;
      }
      if (cp == '_') {
        cur.Push('_');
        has_letter = true;
        prev_digit = false;
        continue;
      }
      if (!flush()) return;
      continue;
    }
    cp = DecodeUtf8(unit, &i);
    cp = static_cast<uint32_t>(u_tolower(static_cast<UChar32>(cp)));
    if (IsDecimalDigit(cp)) {
      if (!mask) {
        cur.PushCodePoint(cp);
      } else if (!prev_digit) {
        cur.Push('#');
      }
      prev_digit = true;
    } else if (IsLetter(cp)) {
      cur.PushCodePoint(cp);
      has_letter = true;
      prev_digit = false;
    } else {
      if (!flush()) return;
    }
  }
  flush();
}

// Small open-addressing set of token hashes that clears only the slots it used.
class TokenSet {
 public:
  TokenSet() : slots_(kSlots, 0) {}
  // Returns false if already present.
  bool Insert(uint64_t h) {
    if (h == 0) h = 1;  // 0 marks an empty slot
    size_t idx = h & (kSlots - 1);
    while (slots_[idx] != 0) {
      if (slots_[idx] == h) return false;
      idx = (idx + 1) & (kSlots - 1);
    }
    slots_[idx] = h;
    used_.push_back(idx);
    return true;
  }
  size_t size() const { return used_.size(); }
  std::vector<uint64_t> TakeSorted() {
    std::vector<uint64_t> out;
    out.reserve(used_.size());
    for (size_t idx : used_) {
      out.push_back(slots_[idx]);
      slots_[idx] = 0;
    }
    used_.clear();
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  static constexpr size_t kSlots = 512;
  std::vector<uint64_t> slots_;
  std::vector<size_t> used_;
};

thread_local TokenSet t_token_set;

Profile BuildProfile(std::string_view unit, bool mask) {
  TokenSet& set = t_token_set;
  bool any_letter = false;
  ScanTokens<HashedToken>(unit, mask, [&](const HashedToken& tok, bool has_letter) {
    const uint64_t h = tok.Hash();
    if (set.Insert(h) && has_letter) any_letter = true;
    return set.size() < kMaxProfileTokens;
  });
  Profile p;
  p.masked = mask;
  p.tokens = set.TakeSorted();
  // Remember letters for the caller through the masked flag: handled in ComputeProfile.
  if (mask && !any_letter) p.masked = false;  // signal "no letter"; caller rescans unmasked
  return p;
}

}  // namespace

uint64_t ProfileTokenHash(std::string_view token) { return HashToken(token); }

Profile ComputeProfile(std::string_view unit) {
  Profile p = BuildProfile(unit, /*mask=*/true);
  if (p.masked) return p;
  // No token with a letter: the profile is the unmasked token set.
  Profile u = BuildProfile(unit, /*mask=*/false);
  u.masked = false;
  return u;
}

std::vector<std::string> ProfileTokenStrings(std::string_view unit, bool* masked) {
  std::vector<std::string> toks;
  bool any_letter = false;
  auto collect = [&](bool mask) {
    toks.clear();
    ScanTokens<TextToken>(unit, mask, [&](const TextToken& tok, bool has_letter) {
      if (std::find(toks.begin(), toks.end(), tok.text) == toks.end()) {
        toks.emplace_back(tok.text);
        if (has_letter) any_letter = true;
      }
      return toks.size() < kMaxProfileTokens;
    });
  };
  collect(true);
  *masked = any_letter;
  if (!any_letter) collect(false);
  std::sort(toks.begin(), toks.end());
  return toks;
}

size_t RepresentedNeed(size_t n) { return static_cast<size_t>(0.9 * static_cast<double>(n) + 0.999999); }

namespace {

// One class test of §4.2 (same kind, ≥ need of p's tokens).
bool RepresentedBy(const Profile& p, const Profile& c, size_t need) {
  const size_t n = p.tokens.size();
  const size_t max_miss = n - need;
  if (c.masked != p.masked || c.tokens.size() < need) return false;
  size_t miss = 0, hit = 0;
  auto it = c.tokens.begin();
  const auto end = c.tokens.end();
  for (uint64_t t : p.tokens) {
    // Both lists are sorted and of similar length (profiles of lines): a few linear steps
    // find the next candidate faster than a binary search; far gaps still take one.
    int steps = 0;
    while (it != end && *it < t && steps < 8) {
      ++it;
      ++steps;
    }
    if (it != end && *it < t) it = std::lower_bound(it, end, t);
    if (it != end && *it == t) {
      ++hit;
    } else if (++miss > max_miss) {
      return false;
    }
  }
  return hit >= need;
}

// Index of a class representing p, or classes.size(); `hint` is tried first (the answer
// "some class represents p" does not depend on the order classes are tried).
size_t FindRepresenting(const Profile& p, const std::vector<Profile>& classes, size_t hint) {
  const size_t need = RepresentedNeed(p.tokens.size());
  if (hint < classes.size() && RepresentedBy(p, classes[hint], need)) return hint;
  for (size_t i = 0; i < classes.size(); ++i) {
    if (i != hint && RepresentedBy(p, classes[i], need)) return i;
  }
  return classes.size();
}

}  // namespace

bool IsRepresented(const Profile& p, const std::vector<Profile>& classes) {
  if (p.tokens.empty()) return true;
  return FindRepresenting(p, classes, 0) < classes.size();
}

size_t RedundancyGuard::SeedStep(size_t kept_count) {
  return kept_count > kMaxSeedClasses ? kept_count / kMaxSeedClasses : 1;
}

bool RedundancyGuard::IsSeed(size_t kept_ordinal, size_t kept_count) {
  size_t step = SeedStep(kept_count);
  return kept_ordinal % step == 0 && kept_ordinal / step < kMaxSeedClasses;
}

void RedundancyGuard::AddSeed(std::string_view unit) {
  if (seeds_ >= kMaxSeedClasses) return;
  AddSeedProfile(ComputeProfile(unit));
}

void RedundancyGuard::AddSeedProfile(Profile p) {
  if (seeds_ >= kMaxSeedClasses) return;
  ++seeds_;
  classes_.push_back(std::move(p));
}

bool RedundancyGuard::Test(std::string_view unit) {
  if (promotions_ >= kMaxPromotions) return true;
  return TestProfile(ComputeProfile(unit));
}

void OnlineGuard::Insert(const Profile& p) {
  ++clock_;
  if (classes_.size() < kMaxClasses) {
    classes_.push_back(p);
    last_use_.push_back(clock_);
    return;
  }
  size_t victim = 0;
  for (size_t i = 1; i < last_use_.size(); ++i) {
    if (last_use_[i] < last_use_[victim]) victim = i;
  }
  classes_[victim] = p;
  last_use_[victim] = clock_;
}

bool OnlineGuard::Represents(const Profile& p) {
  if (p.tokens.empty()) return true;
  const size_t found = FindRepresenting(p, classes_, last_hit_);
  if (found == classes_.size()) return false;
  last_hit_ = found;
  last_use_[found] = ++clock_;
  return true;
}

void OnlineGuard::AddKept(const Profile& p) {
  if (!Represents(p)) Insert(p);
}

bool OnlineGuard::TestAndLearn(const Profile& p) {
  if (Represents(p)) return false;
  Insert(p);
  return true;
}

size_t RedundancyGuard::Find(const Profile& p) const {
  // Lines of a log repeat their profiles (digits are masked): the memo remembers, per profile,
  // how many classes were already tried without a match, or that one matched. Classes are
  // only ever appended, so a match stays a match and a miss needs only the newer classes.
  uint64_t key = p.masked ? 0x9E3779B97F4A7C15ULL : 0;
  for (uint64_t t : p.tokens) key = Mix(key ^ t) + 0x632BE59BD9B4E019ULL;
  if (memo_.empty()) memo_.resize(kMemoSlots);
  MemoSlot& slot = memo_[key & (kMemoSlots - 1)];
  const bool known = slot.key == key && slot.masked == p.masked && slot.tokens == p.tokens;
  size_t found = classes_.size();
  if (known && slot.match < slot.checked) {
    found = slot.match;
  } else if (known) {
    const size_t need = RepresentedNeed(p.tokens.size());
    for (size_t i = slot.checked; i < classes_.size(); ++i) {
      if (RepresentedBy(p, classes_[i], need)) {
        found = i;
        break;
      }
    }
  } else {
    found = FindRepresenting(p, classes_, last_hit_);
    slot.key = key;
    slot.masked = p.masked;
    slot.tokens = p.tokens;
  }
  slot.checked = classes_.size();
  slot.match = found;
  if (found < classes_.size()) last_hit_ = found;
  return found;
}

bool RedundancyGuard::Represents(const Profile& p) const { return p.tokens.empty() || Find(p) < classes_.size(); }

bool RedundancyGuard::TestProfile(Profile p) {
  if (promotions_ >= kMaxPromotions) return true;
  if (p.tokens.empty()) return false;
  if (Find(p) < classes_.size()) return false;
  ++promotions_;
  classes_.push_back(std::move(p));
  return true;
}

void KeepNonRedundant(const std::vector<std::string_view>& units, std::vector<bool>* keep) {
  size_t kept = 0;
  for (size_t i = 0; i < units.size(); ++i) kept += (*keep)[i] ? 1 : 0;
  RedundancyGuard g;
  size_t ordinal = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!(*keep)[i]) continue;
    if (RedundancyGuard::IsSeed(ordinal, kept)) g.AddSeed(units[i]);
    ++ordinal;
  }
  for (size_t i = 0; i < units.size(); ++i) {
    if ((*keep)[i]) continue;
    if (g.Test(units[i])) (*keep)[i] = true;
  }
}

}  // namespace caveman::internal
