// Shared machinery of §4: lines, redundancy guard, BM25, invariant summaries, elision.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compressors/internal/bm25.h"
#include "compressors/cj.h"
#include "compressors/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/internal/json_tree.h"
#include "compressors/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/registry.h"

namespace caveman::internal {
namespace {

// ---------------------------------------------------------------- lines (§4.1)

TEST(Lines, SplitKeepsCrAndRemembersTrailingLf) {
  SplitResult r = SplitLines("a\r\nb\n");
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[0], "a\r");
  EXPECT_EQ(r.lines[1], "b");
  EXPECT_TRUE(r.trailing);
  EXPECT_EQ(JoinLines(r.lines, r.trailing), "a\r\nb\n");
}

TEST(Lines, SplitWithoutTrailingAndEmptyLines) {
  SplitResult r = SplitLines("x\n\ny");
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[1], "");
  EXPECT_FALSE(r.trailing);
  EXPECT_EQ(JoinLines(r.lines, r.trailing), "x\n\ny");
  EXPECT_EQ(SplitLines("").lines.size(), 1u);
  EXPECT_EQ(SplitLines("\n").lines.size(), 1u);
  EXPECT_TRUE(SplitLines("\n").trailing);
}

TEST(Lines, MajorityCrlf) {
  EXPECT_FALSE(IsMajorityCrlf("no newline\r"));
  EXPECT_TRUE(IsMajorityCrlf("a\r\nb\r\nc\n"));   // 2 × 2 > 3
  EXPECT_FALSE(IsMajorityCrlf("a\r\nb\nc\n\n"));  // 2 × 1 > 4 is false
  EXPECT_FALSE(IsMajorityCrlf("a\r\nb\n"));       // 2 × 1 > 2 is false
  CrlfCounter c;
  c.Feed("a\r");
  c.Feed("\nb\r");
  c.Feed("\n");
  EXPECT_TRUE(c.majority_crlf());
  EXPECT_EQ(c.crlf_count(), 2u);
  EXPECT_EQ(SynthesizedLine("m", true), "m\r");
  EXPECT_EQ(SynthesizedLine("m", false), "m");
}

// ---------------------------------------------------------------- redundancy guard (§4.2)

TEST(Profile, MasksDigitRunsAndLowercases) {
  bool masked = false;
  std::vector<std::string> t = ProfileTokenStrings("Order ord_12 AB12cd345 7 x9", &masked);
  EXPECT_TRUE(masked);
  EXPECT_EQ(t, (std::vector<std::string>{"#", "ab#cd#", "ord_#", "order", "x#"}));
}

TEST(Profile, UnmaskedFallbackWhenNoLetters) {
  bool masked = true;
  std::vector<std::string> t = ProfileTokenStrings("12, 345; 12", &masked);
  EXPECT_FALSE(masked);
  EXPECT_EQ(t, (std::vector<std::string>{"12", "345"}));
  EXPECT_FALSE(ComputeProfile("1 2 3").masked);
  EXPECT_TRUE(ComputeProfile("a 2 3").masked);
}

TEST(Profile, UnicodeDigitsAndLettersAndCap) {
  bool masked = false;
  // U+0663 ARABIC-INDIC DIGIT THREE is Nd; É lowercases to é.
  std::vector<std::string> t = ProfileTokenStrings("\xC3\x89t\xD9\xA3\xD9\xA3", &masked);
  EXPECT_EQ(t, (std::vector<std::string>{"\xC3\xA9t#"}));
  std::string many;
  for (int i = 0; i < 300; ++i)
    many +=
        "w" + std::string(1, static_cast<char>('a' + i % 26)) + std::string(1, static_cast<char>('a' + i / 26)) + " ";
  EXPECT_EQ(ProfileTokenStrings(many, &masked).size(), kMaxProfileTokens);
  EXPECT_EQ(ComputeProfile(many).tokens.size(), kMaxProfileTokens);
}

TEST(Redundancy, NinetyPercentRule) {
  EXPECT_EQ(RepresentedNeed(10), 9u);
  EXPECT_EQ(RepresentedNeed(1), 1u);
  EXPECT_EQ(RepresentedNeed(20), 18u);
  std::vector<Profile> classes = {ComputeProfile("a b c d e f g h i j")};
  EXPECT_TRUE(IsRepresented(ComputeProfile("a b c d e f g h i zz"), classes));    // 9 of 10
  EXPECT_FALSE(IsRepresented(ComputeProfile("a b c d e f g h yy zz"), classes));  // 8 of 10
  EXPECT_TRUE(IsRepresented(ComputeProfile("..."), classes));                     // empty
  // Kinds never mix: an unmasked profile is not represented by a masked class.
  std::vector<Profile> digits = {ComputeProfile("1 2 3")};
  EXPECT_TRUE(IsRepresented(ComputeProfile("3 2 1"), digits));
  EXPECT_FALSE(IsRepresented(ComputeProfile("3 2 1"), classes));
  EXPECT_FALSE(IsRepresented(ComputeProfile("a b c"), digits));
  // Digit masking makes ids resemble each other.
  std::vector<Profile> ids = {ComputeProfile("id=ord-1000 status=ok")};
  EXPECT_TRUE(IsRepresented(ComputeProfile("id=ord-1077 status=ok"), ids));
}

TEST(Redundancy, SeedStepAndPromotions) {
  EXPECT_EQ(RedundancyGuard::SeedStep(10), 1u);
  EXPECT_EQ(RedundancyGuard::SeedStep(64), 1u);
  EXPECT_EQ(RedundancyGuard::SeedStep(130), 2u);
  EXPECT_TRUE(RedundancyGuard::IsSeed(0, 130));
  EXPECT_FALSE(RedundancyGuard::IsSeed(1, 130));
  EXPECT_TRUE(RedundancyGuard::IsSeed(126, 130));
  EXPECT_FALSE(RedundancyGuard::IsSeed(128, 130));  // would be the 65th seed

  std::vector<std::string> store = {"alpha beta", "gamma delta", "alpha beta", "zeta eta", "zeta eta", "gamma delta"};
  std::vector<std::string_view> units(store.begin(), store.end());
  std::vector<bool> keep = {true, false, false, false, false, false};
  KeepNonRedundant(units, &keep);
  // gamma delta (new) and zeta eta (new) are promoted once; their repeats stay dropped.
  EXPECT_EQ(keep, (std::vector<bool>{true, true, false, true, false, false}));
}

TEST(Redundancy, AfterMaxPromotionsEverythingIsKept) {
  RedundancyGuard g;
  g.AddSeed("seed");
  for (size_t i = 0; i < kMaxPromotions; ++i) {
    std::string u =
        "tok" + std::string(1, static_cast<char>('a' + i % 26)) + std::string(1, static_cast<char>('a' + i / 26));
    EXPECT_TRUE(g.Test(u));
  }
  EXPECT_EQ(g.promotions(), kMaxPromotions);
  EXPECT_TRUE(g.Test("seed"));  // even a represented unit is kept now
}

// ComputeProfile hashes each token as it scans it (no string per token): its hashes must be
// those of the tokens ProfileTokenStrings spells out, masked or not, for ASCII, Unicode letters
// and digits, case mappings that leave ASCII (U+212A KELVIN SIGN -> 'k'), invalid bytes and
// the 128-token cap.
TEST(Profile, HashesAreThoseOfTheTokenTexts) {
  std::vector<std::string> units = {
      "Order ord_12 AB12cd345 7 x9",
      "12, 345; 12",
      "\xC3\x89t\xD9\xA3\xD9\xA3 \xE2\x84\xAA elvin \xC4\xB0stanbul",
      "\xF0\x9D\x90\x80\xF0\x9D\x9F\x8E x \xE4\xB8\xAD\xE6\x96\x87 \xFF\xFE bad",
      "",
      "....",
  };
  std::string many;
  for (int i = 0; i < 300; ++i) many += "w" + std::to_string(i) + std::string(1, static_cast<char>('a' + i % 26)) + " ";
  units.push_back(many);
  uint64_t seed = 7;
  for (int k = 0; k < 200; ++k) {
    std::string u;
    for (int j = 0; j < 40; ++j) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      static const char* kPieces[] = {"a",    "Z", "7", "_", " ", "-", "\xC3\xA9", "\xD9\xA3", "\xE2\x84\xAA",
                                      "\x80", "x1"};
      u += kPieces[(seed >> 33) % 11];
    }
    units.push_back(u);
  }
  for (const std::string& u : units) {
    bool masked = false;
    std::vector<std::string> texts = ProfileTokenStrings(u, &masked);
    std::vector<uint64_t> want;
    for (const std::string& t : texts) want.push_back(ProfileTokenHash(t));
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    const Profile p = ComputeProfile(u);
    EXPECT_EQ(p.masked, masked) << u;
    EXPECT_EQ(p.tokens, want) << u;
  }
}

// The guard remembers each profile's last answer (classes tried, class found); its answers must
// be those of trying every class each time (IsRepresented), through promotions that add classes
// between two tests of the same profile.
TEST(Redundancy, GuardMemoAnswersAsTryingEveryClass) {
  std::vector<std::string> words = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"};
  uint64_t seed = 11;
  auto next = [&]() {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  for (int round = 0; round < 20; ++round) {
    RedundancyGuard g;
    std::vector<Profile> classes;  // the reference: every seed and promotion, in order
    for (int i = 0; i < 3; ++i) {
      std::string u = words[next() % words.size()] + " " + words[next() % words.size()];
      g.AddSeed(u);
      classes.push_back(ComputeProfile(u));
    }
    for (int i = 0; i < 400; ++i) {
      std::string u;
      const size_t n = 1 + next() % 4;
      for (size_t j = 0; j < n; ++j) u += words[next() % words.size()] + " " + std::to_string(next() % 100) + " ";
      const Profile p = ComputeProfile(u);
      const bool represented = p.tokens.empty() || IsRepresented(p, classes);
      ASSERT_EQ(g.Represents(p), represented) << u;
      if (next() % 2 == 0) continue;
      const bool promotions_left = g.promotions() < kMaxPromotions;
      const bool kept = g.Test(u);
      ASSERT_EQ(kept, !promotions_left || (!represented && !p.tokens.empty())) << u;
      if (kept && promotions_left) classes.push_back(p);
    }
  }
}

// ---------------------------------------------------------------- BM25 (§4.3)

TEST(Bm25, TermsDropStopWordsAndShortRuns) {
  EXPECT_EQ(Bm25Terms("The ERROR in x_y 42 a b ÉTÉ"),
            (std::vector<std::string>{"error", "x_y", "42", "\xC3\xA9t\xC3\xA9"}));
  EXPECT_EQ(DistinctTerms("disk error disk"), (std::vector<std::string>{"disk", "error"}));
}

TEST(Bm25, HandComputedScores) {
  // d0 = [error disk full] (3), d1 = [disk ok] (2), d2 = [all good here] (3); N = 3,
  // avgdl = 8/3, df(disk) = 2, df(error) = 1.
  std::vector<std::string_view> docs = {"error disk full", "disk ok", "all good here"};
  std::vector<double> s = Bm25Scores(docs, "disk error");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 1.3735695926697864, 1e-12);
  EXPECT_NEAR(s[1], 0.5295815540797021, 1e-12);
  EXPECT_EQ(s[2], 0.0);
  EXPECT_EQ(Bm25Scores(docs, "the of")[0], 0.0);  // only stop words: no terms
}

TEST(Bm25, QueryFillOrderThresholdAndLimit) {
  std::vector<std::string_view> docs = {"disk ok", "error disk full", "nothing", "disk ok"};
  std::vector<bool> keep(4, false);
  KeepQueryRelevant(&keep, docs, "disk error", 1, 0.30);
  EXPECT_EQ(keep, (std::vector<bool>{false, true, false, false}));
  // "disk ok" scores ≈ 0.28 of the best here: below 0.30, above 0.20.
  KeepQueryRelevant(&keep, docs, "disk error", 5, 0.30);
  EXPECT_EQ(keep, (std::vector<bool>{false, true, false, false}));
  KeepQueryRelevant(&keep, docs, "disk error", 5, 0.20);
  EXPECT_EQ(keep, (std::vector<bool>{true, true, false, true}));
  std::vector<bool> keep2(4, false);
  KeepQueryRelevant(&keep2, docs, "disk error", 5, 0.99);
  EXPECT_EQ(keep2, (std::vector<bool>{false, true, false, false}));
  std::vector<bool> keep3(4, false);
  KeepQueryRelevant(&keep3, docs, "", 5, 0.0);
  EXPECT_EQ(keep3, std::vector<bool>(4, false));
}

// ---------------------------------------------------------------- invariants (§4.4)

std::vector<FieldList> Units(const std::vector<std::vector<std::pair<std::string, std::string>>>& in,
                             std::vector<std::string>* store) {
  store->clear();
  store->reserve(1024);
  std::vector<FieldList> out;
  for (const auto& u : in) {
    FieldList f;
    for (const auto& [n, v] : u) {
      store->push_back(n);
      std::string_view name = store->back();
      store->push_back(v);
      f.push_back({name, store->back()});
    }
    out.push_back(f);
  }
  return out;
}

TEST(Invariants, ConstantRangeAndEnum) {
  std::vector<std::string> st;
  auto units = Units({{{"kind", "pod"}, {"cpu", "2"}, {"phase", "Running"}},
                      {{"kind", "pod"}, {"cpu", "10"}, {"phase", "Running"}},
                      {{"kind", "pod"}, {"cpu", "1.5"}, {"phase", "Pending"}},
                      {{"kind", "pod"}, {"cpu", "3"}, {"phase", "Running"}},
                      {{"kind", "pod"}, {"cpu", "4"}, {"phase", "Running"}},
                      {{"kind", "pod"}, {"cpu", "5"}, {"phase", "Running"}}},
                     &st);
  EXPECT_EQ(Summarize(units, 0),
            "all kind=pod; phase: Running\xC3\x97"
            "5 Pending\xC3\x97"
            "1; range cpu=1.5..10");
  EXPECT_EQ(Summarize({units[0]}, 0), "");  // fewer than 2 units
}

TEST(Invariants, WeakEnumAndAbsent) {
  std::vector<std::string> st;
  auto units = Units({{{"s", "a"}}, {{"s", "a"}}, {{"s", "b"}}, {{"t", "x"}}}, &st);
  // s: a×2 b×1 absent×1 → 3 buckets, 2 × 3 ≥ 4 → weak (still rendered).
  EXPECT_EQ(Summarize(units, 0),
            "s: a\xC3\x97"
            "2 b\xC3\x97"
            "1 absent\xC3\x97"
            "1; t: x\xC3\x97"
            "1 absent\xC3\x97"
            "3");
  // Every bucket of count 1: rejected; coverage takes over (bounded, absent counted).
  auto units2 = Units({{{"s", "a"}}, {{"s", "b"}}, {{"t", "x"}}}, &st);
  EXPECT_EQ(Summarize(units2, 0),
            "s: 2 distinct, a..b, absent\xC3\x97"
            "1; t: x\xC3\x97"
            "1 absent\xC3\x97"
            "2");
}

TEST(Invariants, DenseAndBoundedCoverage) {
  std::vector<std::string> st;
  std::vector<std::vector<std::pair<std::string, std::string>>> raw;
  for (int i = 0; i < 12; ++i) {
    raw.push_back({{"id", "n-" + std::to_string(10 + i)},
                   {"name", "host" + std::string(1, 'a' + i)},
                   {"zone", "z" + std::to_string(i)}});
  }
  auto units = Units(raw, &st);
  // id is dense; name is bounded; zone would be a third coverage entry (at most 2).
  EXPECT_EQ(Summarize(units, 0), "id: n-10..n-21 all 12 present; name: 12 distinct, hosta..hostl");
  // A gap makes the dense form impossible.
  raw[3][0].second = "n-99";
  units = Units(raw, &st);
  EXPECT_EQ(Summarize(units, 0).substr(0, 30), "id: 12 distinct, n-10..n-99; n");
}

TEST(Invariants, NoFieldsOrUnusableValues) {
  std::vector<std::string> st;
  auto units = Units({{{"a", "1"}}, {}}, &st);
  EXPECT_EQ(Summarize(units, 0), "");
  auto units2 = Units({{{"msg", "caveman here"}, {"api_key", "k"}}, {{"msg", "caveman here"}, {"api_key", "k"}}}, &st);
  EXPECT_EQ(Summarize(units2, 0), "");  // unusable constant, secret name
  EXPECT_TRUE(IsSkippedFieldName("X-Session-Id"));
  EXPECT_TRUE(IsSkippedFieldName(""));
  EXPECT_FALSE(IsSkippedFieldName("status"));
  EXPECT_FALSE(IsUsableValue(std::string(41, 'x')));
  EXPECT_TRUE(IsUsableValue("with space"));
  EXPECT_FALSE(IsEnumUsableValue("with space"));
  EXPECT_FALSE(IsUsableValue("bad\x01"));
  EXPECT_FALSE(IsUsableValue("\xff"));
}

TEST(Invariants, BudgetSheddingAndOmittedNotice) {
  EXPECT_EQ(SummaryBudget(0), 160u);
  EXPECT_EQ(SummaryBudget(7432), 160u);
  EXPECT_EQ(SummaryBudget(300), 96u);  // min(160, 150, max(96, 75))
  EXPECT_EQ(SummaryBudget(100), 50u);  // min(160, 50, 96)
  // The orders.json run 1 of §12.2: 188 bytes, shed total_cents then region, notice after.
  std::vector<std::string> st;
  std::vector<std::vector<std::pair<std::string, std::string>>> raw;
  const char* statuses[] = {"fulfilled", "shipped", "processing"};
  for (int i = 3; i <= 62; ++i) {
    int s = (i % 10 == 1) ? 1 : (i % 15 == 2) ? 2 : 0;
    raw.push_back({{"currency", "EUR"},
                   {"customer", "cust-" + std::to_string(200 + i % 37)},
                   {"order_id", "ord-" + std::to_string(1000 + i)},
                   {"region", "eu-west-1"},
                   {"status", statuses[s]},
                   {"total_cents", "1999"}});
  }
  auto units = Units(raw, &st);
  std::string s = Summarize(units, 7432);
  EXPECT_EQ(s.substr(0, 36), "all currency=EUR; customer: cust-200");
  EXPECT_NE(s.find("order_id: ord-1003..ord-1062 all 60 present; status: fulfilled"), std::string::npos);
  EXPECT_EQ(s.substr(s.size() - 12), "; +2 omitted");
  EXPECT_EQ(s.find("region"), std::string::npos);
  EXPECT_EQ(s.find("total_cents"), std::string::npos);
  // Two units of the same kind of run with a small budget shed more (96 > 188 - 2 constants).
  EXPECT_EQ(Summarize(units, 0), s);  // elided ≤ 0 → budget 160 as well
}

TEST(Invariants, SheddingKindOrder) {
  // Weak enumerations go first, then ranges, bounded coverage, constants, dense coverage,
  // enumerations; within a kind the last field first.
  std::vector<std::string> st;
  std::vector<std::vector<std::pair<std::string, std::string>>> raw;
  const char* ws[] = {"x", "x", "x", "y", "y", "z"};
  for (int i = 0; i < 6; ++i) {
    raw.push_back({{"c1", "constant-value-one"},
                   {"c2", "constant-value-two"},
                   {"r", std::to_string(i * 7)},
                   {"w", ws[i]},
                   {"e", i < 5 ? "up" : "down"}});
  }
  auto units = Units(raw, &st);
  std::string full = Summarize(units, 0);
  EXPECT_EQ(full,
            "all c1=constant-value-one c2=constant-value-two; w: x\xC3\x97"
            "3 y\xC3\x97"
            "2 z\xC3\x97"
            "1; e: up\xC3\x97"
            "5 down\xC3\x97"
            "1; range r=0..35");
  EXPECT_EQ(full.size(), 99u);
  // Budget 96 (elided 300): drop the weak enumeration w → 80 bytes.
  EXPECT_EQ(Summarize(units, 300),
            "all c1=constant-value-one c2=constant-value-two; e: up\xC3\x97"
            "5 down\xC3\x97"
            "1; range r=0..35; +1 omitted");
  // Budget 50 (elided 100): w, then the range, then the last constant c2 → 43 bytes.
  EXPECT_EQ(Summarize(units, 100),
            "all c1=constant-value-one; e: up\xC3\x97"
            "5 down\xC3\x97"
            "1; +3 omitted");
  // Budget 8 (elided 16): everything shed → "".
  EXPECT_EQ(Summarize(units, 16), "");
}

TEST(Invariants, IncrementalAccumulatorMatchesBatch) {
  std::vector<std::string> st;
  auto units = Units({{{"a", "1"}, {"a", "9"}}, {{"a", "2"}}, {{"a", "3"}}}, &st);
  InvariantAccumulator acc;
  for (const auto& u : units) acc.Add(u);
  EXPECT_EQ(acc.Render(0), Summarize(units, 0));
  EXPECT_EQ(acc.Render(0), "range a=1..3");  // only the first "a" of unit 0 counts
  acc.Reset();
  EXPECT_EQ(acc.Render(0), "");
}

// A weighted Add is `weight` plain ones: random units (names past the tracked limit, the same
// name twice in a unit, numbers, words, "absent", more distinct values than are kept, an
// empty unit now and then) each added with a weight of 1-30 and that many times one by one.
// A random unit for the accumulator tests: `count` fields named from names[0, name_pool), each
// value a number below `number_below` (one time in `number_share`) or one of `values`. The
// bytes live in *storage.
FieldList RandomUnit(std::mt19937_64& rng, const std::vector<std::string>& names, size_t name_pool, size_t count,
                     size_t number_share, size_t number_below, const std::vector<std::string>& values,
                     std::vector<std::string>* storage) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  storage->reserve(2 * count);
  FieldList fields;
  for (size_t f = 0; f < count; ++f) {
    storage->push_back(names[pick(name_pool)]);
    storage->push_back(pick(number_share) == 0 ? std::to_string(pick(number_below)) : values[pick(values.size())]);
    fields.push_back({(*storage)[storage->size() - 2], storage->back()});
  }
  return fields;
}

TEST(Invariants, WeightedAddEqualsRepeatedAdds) {
  std::mt19937_64 rng(5);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::vector<std::string> values = {"1", "2", "10", "-3.5", "ok", "fail", "absent", "x y", "", "7e2"};
  std::vector<std::string> names;
  for (size_t i = 0; i < kMaxTrackedNames + 6; ++i) names.push_back("n" + std::to_string(i));
  int differing_counts = 0;
  for (int round = 0; round < 200; ++round) {
    InvariantAccumulator weighted, repeated;
    const size_t name_pool = round % 2 == 0 ? 4 : names.size();
    const size_t units = 1 + pick(12);
    uint64_t total = 0;
    for (size_t u = 0; u < units; ++u) {
      std::vector<std::string> storage;
      const size_t n = pick(25) == 0 ? 0 : 1 + pick(round % 2 == 0 ? 4 : 60);
      const FieldList fields = RandomUnit(rng, names, name_pool, n, 3, 1000, values, &storage);
      const uint64_t weight = 1 + pick(30);
      total += weight;
      weighted.Add(fields, weight);
      for (uint64_t k = 0; k < weight; ++k) repeated.Add(fields);
    }
    ASSERT_EQ(weighted.units(), total);
    ASSERT_EQ(repeated.units(), total);
    const std::string want = repeated.Render(int64_t{1} << 40);
    ASSERT_EQ(weighted.Render(int64_t{1} << 40), want) << "round " << round;
    ASSERT_EQ(weighted.Render(200), repeated.Render(200)) << "round " << round;
    differing_counts += want.find("\xC3\x97") != std::string::npos;  // counts rendered (value×n)
  }
  EXPECT_GT(differing_counts, 20);
}

// Reset keeps the aggregates' storage for the next units (issue 19): every summary after a
// Reset must be that of a fresh accumulator given the same units, whatever came before
// (names tracked to the limit, values too wide, coverage given up, empty field lists).
TEST(Invariants, ResetEqualsAFreshAccumulator) {
  std::mt19937_64 rng(8);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::vector<std::string> values = {"1", "2", "10", "-3.5", "ok", "fail", "absent", "x y", "", "7e2", "z"};
  std::vector<std::string> names;
  for (size_t i = 0; i < kMaxTrackedNames + 6; ++i) names.push_back("n" + std::to_string(i));
  InvariantAccumulator reused;
  int summaries = 0;
  for (int round = 0; round < 400; ++round) {
    InvariantAccumulator fresh;
    reused.Reset();
    const size_t name_pool = round % 3 == 0 ? 3 : names.size();
    const size_t units = 1 + pick(40);
    for (size_t u = 0; u < units; ++u) {
      std::vector<std::string> storage;
      const size_t n = pick(30) == 0 ? 0 : 1 + pick(round % 3 == 0 ? 3 : 60);
      const FieldList fields = RandomUnit(rng, names, name_pool, n, 2, round % 2 == 0 ? 5 : 5000, values, &storage);
      const uint64_t weight = 1 + pick(3);
      fresh.Add(fields, weight);
      reused.Add(fields, weight);
    }
    ASSERT_EQ(reused.units(), fresh.units());
    const std::string want = fresh.Render(int64_t{1} << 40);
    ASSERT_EQ(reused.Render(int64_t{1} << 40), want) << "round " << round;
    ASSERT_EQ(reused.Render(300), fresh.Render(300)) << "round " << round;
    summaries += !want.empty();
  }
  EXPECT_GT(summaries, 100);
}

// A moved-from accumulator is usable again after Reset.
TEST(Invariants, ResetAfterMoveStartsAfresh) {
  InvariantAccumulator a;
  a.Add(FieldList{{"k", "1"}});
  InvariantAccumulator b(std::move(a));
  EXPECT_EQ(b.units(), 1u);
  a.Reset();  // NOLINT(bugprone-use-after-move): Reset is the documented way back
  EXPECT_EQ(a.units(), 0u);
  for (int i = 0; i < 5; ++i) a.Add(FieldList{{"k", "same"}});
  InvariantAccumulator fresh;
  for (int i = 0; i < 5; ++i) fresh.Add(FieldList{{"k", "same"}});
  EXPECT_EQ(a.Render(1000), fresh.Render(1000));
  EXPECT_FALSE(fresh.Render(1000).empty());
}

TEST(FieldList, JsonElementLogAndTable) {
  JsonTree t;
  ASSERT_TRUE(t.Parse(R"({"b":"x","a":1,"c":true,"d":null,"e":"","f":{"g":1},"a":2})"));
  FieldList f;
  JsonElementFields(t, t.root(), &f);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].name, "a");
  EXPECT_EQ(f[0].value, "2");  // duplicate key: last wins
  EXPECT_EQ(f[1].value, "x");
  EXPECT_EQ(f[2].value, "true");

  FieldScratch scratch;
  LogLineFields(R"(  {"level":"info","n":3}  )", &scratch, &f);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].name, "level");
  LogLineFields(R"(ts=1 level=info msg="hello world" path='/x' empty="" [k=v])", &scratch, &f);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[2].name, "msg");
  EXPECT_EQ(f[2].value, "hello world");
  EXPECT_EQ(f[3].value, "/x");
  EXPECT_EQ(f[4].name, "k");
  LogLineFields("nokey=v,x=y", &scratch, &f);  // start of text and after a comma
  EXPECT_EQ(f.size(), 2u);
  LogLineFields("a.b=c", &scratch, &f);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].name, "a.b");

  std::vector<std::string_view> header = {" name ", "", "zone"};
  std::vector<std::string_view> row = {"web ", "x", " ", "extra"};
  TableRowFields(header, row, &f);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].name, "name");
  EXPECT_EQ(f[0].value, "web");
}

// ---------------------------------------------------------------- elision (§4.5, §4.6)

TEST(Elision, WorthElidingAndNote) {
  EXPECT_TRUE(WorthEliding(3, 1000, 1, ""));
  EXPECT_FALSE(WorthEliding(2, 10, 100, ""));
  EXPECT_TRUE(WorthEliding(2, 50, 100, "x"));
  EXPECT_FALSE(WorthEliding(2, 51, 100, "x"));
  EXPECT_EQ(ContractNote("elements"),
            "\xE2\x80\xA6 caveman: elided elements resemble shown elements and match the stated "
            "invariants \xE2\x80\x94 answer from this view; if you truly cannot, one broad "
            "caveman_retrieve \xE2\x80\xA6");
  EXPECT_EQ(ContractNote("rows").rfind(kNotePrefix, 0), 0u);
}

TEST(Elision, MarkerTextWithAndWithoutSummary) {
  EXPECT_EQ(ElisionMarker(7, "lines elided (caveman)"), "\xE2\x80\xA6 7 lines elided (caveman) \xE2\x80\xA6");
  EXPECT_EQ(ElisionMarker(3, "rows elided (caveman)", "level=info"),
            "\xE2\x80\xA6 3 rows elided (caveman): level=info \xE2\x80\xA6");
}

TEST(Elision, ReplaceDroppedRunsOneMarkerPerMaximalRun) {
  const std::vector<std::string_view> units = {"a", "b", "c", "d", "e", "f"};
  const std::vector<bool> keep = {true, false, false, true, false, true};
  std::vector<std::pair<size_t, size_t>> runs;
  auto marker = [&](size_t from, size_t to) {
    runs.emplace_back(from, to);
    return "m" + std::to_string(to - from);
  };
  EXPECT_EQ(ReplaceDroppedRuns(units, keep, false, marker), (std::vector<std::string>{"a", "m2", "d", "m1", "f"}));
  EXPECT_EQ(runs, (std::vector<std::pair<size_t, size_t>>{{1, 3}, {4, 5}}));
  // Only synthesized lines get the CR of a majority-CRLF input; kept lines stay as they are.
  EXPECT_EQ(ReplaceDroppedRuns(units, keep, true, marker), (std::vector<std::string>{"a", "m2\r", "d", "m1\r", "f"}));
  EXPECT_EQ(ReplaceDroppedRuns(units, std::vector<bool>(6, false), false, marker), (std::vector<std::string>{"m6"}));
  EXPECT_EQ(ReplaceDroppedRuns(units, std::vector<bool>(6, true), false, marker),
            std::vector<std::string>(units.begin(), units.end()));
}

// ---------------------------------------------------------------- JSON tree

TEST(JsonTree, StrictParsingAndCanonicalOutput) {
  JsonTree t;
  ASSERT_TRUE(t.Parse(" {\"b\":[1,2.50e+3,-0],\"a\":\"<&>\\u2028\\n\\u00e9\\ud83d\\ude00/\"} "));
  std::string out;
  AppendCanonicalJson(t, t.root(), &out);
  EXPECT_EQ(out,
            "{\"a\":\"\\u003c\\u0026\\u003e\\u2028\\n\xC3\xA9\xF0\x9F\x98\x80/\",\"b\":[1,"
            "2.50e+3,-0]}");
  for (const char* bad : {"", "01", "1.", "[1,]", "{\"a\"}", "\"\\ud800\"", "\"\xff\"", "[1] x", "tru", "\"a\tb\"",
                          "{\"a\":1,}", "-", "1e", "[", "nul"}) {
    EXPECT_FALSE(t.Parse(bad)) << bad;
  }
  EXPECT_TRUE(t.Parse("[]"));
  EXPECT_TRUE(t.Parse("{ }"));
  EXPECT_TRUE(t.Parse("\"\""));
}

TEST(JsonTree, IndentedCanonicalOutput) {
  JsonTree t;
  ASSERT_TRUE(t.Parse("{\"b\":{\"c\":[]},\"a\":[1,{},\"<x>\"]}"));
  std::string out;
  AppendCanonicalJsonIndented(t, t.root(), &out);
  EXPECT_EQ(out,
            "{\n  \"a\": [\n    1,\n    {},\n    \"\\u003cx\\u003e\"\n  ],\n  \"b\": {\n"
            "    \"c\": []\n  }\n}");
  out.clear();
  AppendCanonicalJson(t, t.root(), &out);
  EXPECT_EQ(out, "{\"a\":[1,{},\"\\u003cx\\u003e\"],\"b\":{\"c\":[]}}");
  for (const char* scalar : {"null", "true", "false", "-1.50e3", "\"s\"", "[]", "{}"}) {
    ASSERT_TRUE(t.Parse(scalar));
    out.clear();
    AppendCanonicalJsonIndented(t, t.root(), &out);
    EXPECT_EQ(out, scalar);
  }
  // Sub-trees start at depth 0 wherever they sit in the document.
  ASSERT_TRUE(t.Parse("[[{\"k\":[true]}]]"));
  out.clear();
  AppendCanonicalJsonIndented(t, t.item(t.item(t.root(), 0), 0), &out);
  EXPECT_EQ(out, "{\n  \"k\": [\n    true\n  ]\n}");
}

TEST(JsonTree, DepthLimitWithoutRecursion) {
  JsonTree t;
  std::string ok = std::string(10000, '[') + std::string(10000, ']');
  EXPECT_TRUE(t.Parse(ok));
  std::string out;
  AppendCanonicalJson(t, t.root(), &out);
  EXPECT_EQ(out, ok);
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(t.Parse(deep));
  EXPECT_FALSE(t.Parse(std::string(10001, '[') + std::string(10001, ']')));
}

// ---------------------------------------------------------------- CJ string escaping (§0.3)

// §0.3's escape list written out here, independently of both writers under test.
std::string SpecEscapedByte(unsigned char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case 0x08: return "\\b";
    case 0x0C: return "\\f";
    case '<': return "\\u003c";
    case '>': return "\\u003e";
    case '&': return "\\u0026";
    default: break;
  }
  if (c < 0x20) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
    return buf;
  }
  return std::string(1, static_cast<char>(c));  // '/', DEL and non-ASCII bytes stay raw
}

// Both CJ string writers, checked against each other: the JSON tree's (json, narrow, json
// selection) and the document model's (toon, toolschema, a11y) must write CJ alike.
std::string BothWriters(std::string_view s) {
  std::string tree;
  AppendJsonString(s, &tree);
  const std::string cj = CjString(s);
  EXPECT_EQ(tree, cj) << ::testing::PrintToString(s);
  EXPECT_EQ(JsonQuote(s), tree) << ::testing::PrintToString(s);  // the reports' (stream/json_writer.h)
  return tree;
}

TEST(CjString, EveryByteAndEveryBytePair) {
  for (int a = 0; a < 256; ++a) {
    const std::string one(1, static_cast<char>(a));
    EXPECT_EQ(BothWriters(one), "\"" + SpecEscapedByte(a) + "\"") << a;
    EXPECT_EQ(BothWriters("x" + one + "y"), "\"x" + SpecEscapedByte(a) + "y\"") << a;
    for (int b = 0; b < 256; ++b) {
      const std::string two = one + static_cast<char>(b);
      std::string tree;
      AppendJsonString(two, &tree);
      ASSERT_EQ(tree, "\"" + SpecEscapedByte(a) + SpecEscapedByte(b) + "\"") << a << " " << b;
      ASSERT_EQ(CjString(two), tree) << a << " " << b;
    }
  }
}

TEST(CjString, LineAndParagraphSeparators) {
  EXPECT_EQ(BothWriters("\xE2\x80\xA8"), "\"\\u2028\"");
  EXPECT_EQ(BothWriters("\xE2\x80\xA9"), "\"\\u2029\"");
  EXPECT_EQ(BothWriters("a\xE2\x80\xA8\xE2\x80\xA9<b"), "\"a\\u2028\\u2029\\u003cb\"");
  // Every other E2 80 xx, a truncated sequence and E2 81 A8 stay raw.
  for (int c = 0; c < 256; ++c) {
    if (c == 0xA8 || c == 0xA9) continue;
    const std::string s = std::string("\xE2\x80") + static_cast<char>(c);
    EXPECT_EQ(BothWriters(s), "\"\xE2\x80" + SpecEscapedByte(c) + "\"") << c;
  }
  EXPECT_EQ(BothWriters("\xE2\x80"), "\"\xE2\x80\"");
  EXPECT_EQ(BothWriters("z\xE2"), "\"z\xE2\"");
  EXPECT_EQ(BothWriters("\xE2\x81\xA8"), "\"\xE2\x81\xA8\"");
  EXPECT_EQ(BothWriters(""), "\"\"");
}

}  // namespace
}  // namespace caveman::internal

namespace caveman {
namespace {

// The registry builds each compressor on its first Find (issue 19): every thread asking for
// a type gets the one instance, whose content type is the one asked for.
TEST(Registry, BuildsEachCompressorOnceWhateverThreadAsksFirst) {
  const Registry registry;
  const std::vector<std::string_view> types = registry.content_types();
  ASSERT_EQ(types.size(), Registry::kEntryCount);
  // seen[t][j]: what thread t got for types[j]. Each thread walks the table from a different
  // start, so first uses race.
  std::vector<std::vector<const Compressor*>> seen(4, std::vector<const Compressor*>(types.size()));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < types.size(); ++i) {
        const size_t j = (i + t * 5) % types.size();
        seen[t][j] = registry.Find(types[j]);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (size_t j = 0; j < types.size(); ++j) {
    const Compressor* first = registry.Find(types[j]);
    ASSERT_NE(first, nullptr) << types[j];
    EXPECT_EQ(first->content_type(), types[j]);
    for (size_t t = 0; t < seen.size(); ++t) EXPECT_EQ(seen[t][j], first) << types[j] << " thread " << t;
  }
  EXPECT_EQ(registry.Find("no-such-type"), nullptr);
}

}  // namespace
}  // namespace caveman
