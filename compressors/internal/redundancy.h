// The redundancy guard of §4.2: after a compressor chose its keeps, every dropped unit must
// resemble something still visible, else it is kept ("promoted").
//
// Profiles are sets of tokens; tokens are stored as 64-bit hashes of their bytes so that the
// ≤ 64 + 128 classes fit in a few KiB and membership tests are cheap. (A collision would need
// two different tokens with equal 64-bit hashes; this is negligible and stays deterministic.)
//
// HowTo (streaming, bounded memory: ≤ 64 seeds + 128 promotions, each ≤ 128 tokens):
//   size_t kept = <number of kept units>;
//   RedundancyGuard g;
//   for each kept unit with ordinal j (0-based among kept units):
//     if (RedundancyGuard::IsSeed(j, kept)) g.AddSeed(unit);
//   for each not-kept unit in order:  if (g.Test(unit)) keep it;
// KeepNonRedundant() does exactly this over an in-memory list.
//
// Thread-safety: a guard belongs to one payload.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_REDUNDANCY_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_REDUNDANCY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace caveman::internal {

inline constexpr size_t kMaxSeedClasses = 64;
inline constexpr size_t kMaxPromotions = 128;
inline constexpr size_t kMaxProfileTokens = 128;

struct Profile {
  bool masked = true;            // masked (digit runs → '#') or the unmasked fallback
  std::vector<uint64_t> tokens;  // sorted, distinct token hashes
};

// Profile of a unit (§4.2).
Profile ComputeProfile(std::string_view unit);
// The same tokens as text (sorted byte-wise), for tests and debugging.
std::vector<std::string> ProfileTokenStrings(std::string_view unit, bool* masked);
// The hash a profile keeps for a token's text (for tests: ComputeProfile hashes as it scans).
uint64_t ProfileTokenHash(std::string_view token);

// ⌊0.9·n + 0.999999⌋.
size_t RepresentedNeed(size_t n);
// Represented by one of `classes` (§4.2).
bool IsRepresented(const Profile& p, const std::vector<Profile>& classes);

class RedundancyGuard {
 public:
  // step = 1, or ⌊kept/64⌋ when kept > 64.
  static size_t SeedStep(size_t kept_count);
  // True if the kept unit with ordinal `kept_ordinal` provides a seed class.
  static bool IsSeed(size_t kept_ordinal, size_t kept_count);

  // Adds a seed class (ignored once 64 seeds exist).
  void AddSeed(std::string_view unit);
  void AddSeedProfile(Profile p);

  // Tests the next not-kept unit in order. Returns true if it must be kept: promotions have
  // reached 128, or it is not represented (then it becomes a class and promotions += 1).
  bool Test(std::string_view unit);
  bool TestProfile(Profile p);

  // Whether `p` is represented by the current classes (no side effects). Added for the log
  // compressor's template grouping, which asks before deciding how to drop a unit.
  bool Represents(const Profile& p) const;

  size_t promotions() const { return promotions_; }
  size_t seed_count() const { return seeds_; }

 private:
  std::vector<Profile> classes_;
  size_t seeds_ = 0;
  size_t promotions_ = 0;
  // Index of a class representing `p`, or classes_.size() (through the memo below).
  size_t Find(const Profile& p) const;

  // A profile's last answer: classes [0, checked) were tried and `match` (< checked) is one
  // that represents it, or match == checked when none did. A search aid only: answers are
  // those of trying every class.
  struct MemoSlot {
    uint64_t key = 0;
    bool masked = false;
    std::vector<uint64_t> tokens;
    size_t checked = 0;
    size_t match = 0;
  };
  static constexpr size_t kMemoSlots = 256;
  mutable std::vector<MemoSlot> memo_;  // direct-mapped by a hash of the profile
  // Class that represented the previous unit (a search hint only).
  mutable size_t last_hit_ = 0;
};

// The guard of follow mode, where the kept units are known only as they arrive: every kept
// unit's profile is a class (forced keeps and promotions alike), so a unit is dropped only if
// it resembles something already shown. At most kMaxSeedClasses + kMaxPromotions classes;
// beyond that the class unused for longest is replaced, so the guard keeps working on a stream
// of any length instead of keeping everything after 128 promotions (docs/DECISIONS.md).
class OnlineGuard {
 public:
  static constexpr size_t kMaxClasses = kMaxSeedClasses + kMaxPromotions;
  // A kept unit: its profile becomes a class (unless one already represents it).
  void AddKept(const Profile& p);
  // Whether some class represents `p` (marks that class as used).
  bool Represents(const Profile& p);
  // Represents() or else AddKept(): returns true when `p` is novel (the unit must be kept).
  bool TestAndLearn(const Profile& p);
  size_t class_count() const { return classes_.size(); }

 private:
  void Insert(const Profile& p);
  std::vector<Profile> classes_;
  std::vector<uint64_t> last_use_;
  uint64_t clock_ = 0;
  size_t last_hit_ = 0;
};

// §4.2 keepNonRedundant over in-memory units; `keep` has one entry per unit.
void KeepNonRedundant(const std::vector<std::string_view>& units, std::vector<bool>* keep);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_REDUNDANCY_H_
