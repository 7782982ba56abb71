// json compressor (§5.1): the §12.2 seed, structural properties on generated inputs,
// idempotence, query bias, realistic ratios, declines.
#include "compressors/json.h"

#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <re2/re2.h>

#include "compressors/internal/invariants.h"
#include "compressors/detect.h"
#include "compressors/internal/json_select.h"
#include "compressors/internal/json_skeleton.h"
#include "compressors/internal/json_tree.h"
#include "compressors/text_util.h"
#include "compressors/registry.h"
#include "stream/sha256.h"
#include "caveman/stream/tokens.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

using internal::FieldList;
using internal::JsonKind;
using internal::JsonTree;

constexpr std::string_view kTimes = "\xC3\x97";

std::string Cj(const JsonTree& t, JsonTree::NodeId n) {
  std::string s;
  internal::AppendCanonicalJson(t, n, &s);
  return s;
}

std::vector<std::string> SplitBy(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, p - start));
    start = p + sep.size();
  }
}

// Checks every fact of an invariants string against the replaced elements.
void CheckInvariants(const std::string& inv, const JsonTree& t, const std::vector<JsonTree::NodeId>& units) {
  std::vector<FieldList> fields(units.size());
  for (size_t i = 0; i < units.size(); ++i) internal::JsonElementFields(t, units[i], &fields[i]);
  auto value_of = [&](size_t u, std::string_view name) -> std::optional<std::string_view> {
    for (const auto& f : fields[u]) {
      if (f.name == name) return f.value;
    }
    return std::nullopt;
  };
  for (const std::string& sec : SplitBy(inv, "; ")) {
    SCOPED_TRACE(sec);
    if (sec.rfind("all ", 0) == 0) {
      for (const std::string& kv : SplitBy(sec.substr(4), " ")) {
        size_t eq = kv.find('=');
        ASSERT_NE(eq, std::string::npos);
        std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
        for (size_t u = 0; u < units.size(); ++u) EXPECT_EQ(value_of(u, name), value);
      }
    } else if (sec.rfind("range ", 0) == 0) {
      for (const std::string& kv : SplitBy(sec.substr(6), " ")) {
        size_t eq = kv.find('=');
        size_t dots = kv.find("..", eq);
        ASSERT_NE(dots, std::string::npos);
        std::string name = kv.substr(0, eq), lo = kv.substr(eq + 1, dots - eq - 1), hi = kv.substr(dots + 2);
        double lo_v = *internal::ParseNumber(lo), hi_v = *internal::ParseNumber(hi);
        bool saw_lo = false, saw_hi = false;
        for (size_t u = 0; u < units.size(); ++u) {
          auto v = value_of(u, name);
          ASSERT_TRUE(v.has_value());
          double d = *internal::ParseNumber(*v);
          EXPECT_GE(d, lo_v);
          EXPECT_LE(d, hi_v);
          saw_lo |= *v == lo;
          saw_hi |= *v == hi;
        }
        EXPECT_TRUE(saw_lo && saw_hi);
      }
    } else if (sec.size() > 8 && sec.substr(sec.size() - 8) == " omitted") {
      EXPECT_EQ(sec[0], '+');
    } else {
      size_t colon = sec.find(": ");
      ASSERT_NE(colon, std::string::npos);
      std::string name = sec.substr(0, colon), rest = sec.substr(colon + 2);
      std::set<std::string> distinct;
      size_t absent = 0;
      for (size_t u = 0; u < units.size(); ++u) {
        auto v = value_of(u, name);
        if (v)
          distinct.emplace(*v);
        else
          ++absent;
      }
      if (rest.size() > 8 && rest.substr(rest.size() - 8) == " present") {
        // LOW..HIGH all N present
        size_t all = rest.find(" all ");
        std::string range = rest.substr(0, all);
        size_t dots = range.find("..");
        size_t n = std::stoul(rest.substr(all + 5));
        EXPECT_EQ(absent, 0u);
        EXPECT_EQ(distinct.size(), n);
        EXPECT_TRUE(distinct.count(range.substr(0, dots)));
        EXPECT_TRUE(distinct.count(range.substr(dots + 2)));
      } else if (rest.find(" distinct, ") != std::string::npos) {
        size_t n = std::stoul(rest);
        std::string tail = rest.substr(rest.find(" distinct, ") + 11);
        size_t k = 0;
        size_t comma = tail.find(", absent");
        if (comma != std::string::npos) {
          k = std::stoul(tail.substr(comma + 8 + kTimes.size()));
          tail = tail.substr(0, comma);
        }
        size_t dots = tail.find("..");
        EXPECT_EQ(distinct.size(), n);
        EXPECT_EQ(absent, k);
        EXPECT_EQ(*distinct.begin(), tail.substr(0, dots));
        EXPECT_EQ(*distinct.rbegin(), tail.substr(dots + 2));
      } else {
        size_t total = 0;
        for (const std::string& b : SplitBy(rest, " ")) {
          size_t x = b.rfind(kTimes);
          ASSERT_NE(x, std::string::npos);
          std::string v = b.substr(0, x);
          size_t c = std::stoul(b.substr(x + kTimes.size()));
          total += c;
          if (v == "absent") {
            EXPECT_EQ(absent, c);
            continue;
          }
          size_t count = 0;
          for (size_t u = 0; u < units.size(); ++u) count += value_of(u, name) == v ? 1 : 0;
          EXPECT_EQ(count, c);
        }
        EXPECT_EQ(total, units.size());
      }
    }
  }
}

bool IsMarker(const JsonTree& t, JsonTree::NodeId n) {
  return t.kind(n) == JsonKind::kObject && t.Find(n, "__caveman_elided__") >= 0;
}

struct WalkStats {
  size_t markers = 0;
  size_t notes = 0;
};

// Aligns the output with the input and checks the structural properties of §5.1.
void CheckAligned(const JsonTree& in, JsonTree::NodeId a, const JsonTree& out, JsonTree::NodeId b, bool preserved,
                  WalkStats* st) {
  if (preserved || (in.kind(a) != JsonKind::kObject && in.kind(a) != JsonKind::kArray)) {
    EXPECT_EQ(Cj(in, a), Cj(out, b));
    return;
  }
  ASSERT_EQ(in.kind(a), out.kind(b));
  if (in.kind(a) == JsonKind::kObject) {
    ASSERT_EQ(in.size(a), out.size(b));  // every key survives
    for (uint32_t i = 0; i < in.size(a); ++i) {
      ASSERT_EQ(in.key(a, i), out.key(b, i));
      CheckAligned(in, in.member_value(a, i), out, out.member_value(b, i), internal::IsPreservedKey(in.key(a, i)), st);
    }
    return;
  }
  bool holds_marker = false;
  for (uint32_t i = 0; i < in.size(a); ++i) holds_marker |= IsMarker(in, in.item(a, i));
  if (holds_marker) {
    EXPECT_EQ(Cj(in, a), Cj(out, b));
    return;
  }
  uint32_t p = 0;
  for (uint32_t j = 0; j < out.size(b); ++j) {
    JsonTree::NodeId o = out.item(b, j);
    if (IsMarker(out, o)) {
      ++st->markers;
      EXPECT_GT(in.size(a), internal::kJsonArrayThreshold);
      std::string_view count = out.text(out.member_value(o, 0));
      uint32_t n = static_cast<uint32_t>(std::stoul(std::string(count)));
      ASSERT_GE(n, 1u);
      ASSERT_LE(p + n, in.size(a));
      std::vector<JsonTree::NodeId> replaced;
      for (uint32_t k = p; k < p + n; ++k) {
        replaced.push_back(in.item(a, k));
        EXPECT_FALSE(internal::HasErrorWord(Cj(in, in.item(a, k))))
            << "error element elided: " << Cj(in, in.item(a, k));
      }
      int64_t inv = out.Find(o, "__caveman_invariants__");
      if (inv >= 0) CheckInvariants(std::string(out.text(inv)), in, replaced);
      if (out.Find(o, "__caveman_note__") >= 0) ++st->notes;
      for (uint32_t k = 0; k < out.size(o); ++k) {
        std::string_view key = out.key(o, k);
        EXPECT_TRUE(key == "__caveman_elided__" || key == "__caveman_invariants__" || key == "__caveman_note__");
      }
      p += n;
    } else {
      ASSERT_LT(p, in.size(a));
      CheckAligned(in, in.item(a, p), out, o, false, st);
      ++p;
    }
  }
  EXPECT_EQ(p, in.size(a));  // kept elements plus elided counts equal the original length
}

// ---------------------------------------------------------------- seed §12.2

TEST(JsonCompressor, OrdersSeedMatchesSpecExactly) {
  std::string input = testing::ReadFile("fixtures/seed/orders.json");
  ASSERT_EQ(input.size(), 21875u);
  auto out = ElideJson(input, "");
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->size(), 1652u);
  EXPECT_EQ(Sha256::Hex(Sha256::Digest(*out)), "f93278fed06532fa94993de25f67e89954280ce69f40f5335ee2c7f121e72680");
  const std::string m1 =
      "{\"__caveman_elided__\":60,\"__caveman_invariants__\":\"all currency=EUR; customer: "
      "cust-200..cust-236 all 37 present; order_id: ord-1003..ord-1062 all 60 present; status: "
      "fulfilled\xC3\x97"
      "50 shipped\xC3\x97"
      "6 processing\xC3\x97"
      "4; +2 omitted\","
      "\"__caveman_note__\":\"\xE2\x80\xA6 caveman: elided elements resemble shown elements and "
      "match the stated invariants \xE2\x80\x94 answer from this view; if you truly cannot, one "
      "broad caveman_retrieve \xE2\x80\xA6\"}";
  const std::string m2 =
      "{\"__caveman_elided__\":52,\"__caveman_invariants__\":\"all currency=EUR; customer: "
      "cust-200..cust-236 all 37 present; order_id: ord-1066..ord-1117 all 52 present; status: "
      "fulfilled\xC3\x97"
      "42 shipped\xC3\x97"
      "6 processing\xC3\x97"
      "4; +2 omitted\"}";
  EXPECT_NE(out->find(m1), std::string::npos);
  EXPECT_NE(out->find(m2), std::string::npos);
  for (const char* id :
       {"ord-1000", "ord-1001", "ord-1002", "ord-1063", "ord-1064", "ord-1065", "ord-1118", "ord-1119"}) {
    EXPECT_NE(out->find(id), std::string::npos) << id;
  }
  EXPECT_EQ(out->find("ord-1003\""), std::string::npos);

  // Through the Compressor interface: method elision, and a second pass declines.
  auto c = NewJsonCompressor();
  EXPECT_EQ(c->content_type(), "json");
  EXPECT_TRUE(c->query_aware());
  TransformMeta meta;
  auto via = RunOnString(*c, input, "", &meta);
  ASSERT_TRUE(via.has_value());
  EXPECT_EQ(*via, *out);
  EXPECT_EQ(meta.method, "elision");
  EXPECT_EQ(meta.lossless_to_model, std::optional<bool>(false));
  EXPECT_FALSE(ElideJson(*out, "").has_value());

  JsonTree in_t, out_t;
  ASSERT_TRUE(in_t.Parse(input));
  ASSERT_TRUE(out_t.Parse(*out));
  WalkStats st;
  CheckAligned(in_t, in_t.root(), out_t, out_t.root(), false, &st);
  EXPECT_EQ(st.markers, 2u);
  EXPECT_EQ(st.notes, 1u);

  Registry reg;
  ASSERT_NE(reg.Find("json"), nullptr);
}

TEST(JsonSelect, SeedSeriesAnomaliesAndChangePoints) {
  std::vector<double> y(120, 1999);
  y[64] = 98999;
  std::vector<uint32_t> cp = internal::ChangePointKeeps(y);
  EXPECT_EQ(cp, (std::vector<uint32_t>{63, 64, 64, 65}));
  std::vector<bool> keep(120, false);
  std::vector<uint32_t> idx(120);
  for (uint32_t i = 0; i < 120; ++i) idx[i] = i;
  internal::FlagAnomalies(y, idx, false, &keep);
  EXPECT_EQ(std::count(keep.begin(), keep.end(), true), 1);
  EXPECT_TRUE(keep[64]);
  // A straight line has no seams; lengths that occur often are never anomalies.
  std::vector<double> line(20);
  for (int i = 0; i < 20; ++i) line[i] = 3.0 * i;
  EXPECT_TRUE(internal::ChangePointKeeps(line).empty());
  std::vector<double> lens(100, 10);
  for (int i = 0; i < 30; ++i) lens[i] = 500;  // 30 > max(10, 2) occurrences: not rare
  std::vector<bool> k2(100, false);
  std::vector<uint32_t> idx2(100);
  for (uint32_t i = 0; i < 100; ++i) idx2[i] = i;
  internal::FlagAnomalies(lens, idx2, true, &k2);
  EXPECT_EQ(std::count(k2.begin(), k2.end(), true), 0);
  EXPECT_EQ(internal::Median({1, 3, 2, 10}), 2.5);
  EXPECT_EQ(internal::Mad({1, 2, 3, 4, 100}), 1.0);
}

// The 64-byte mask scan against the rule's own regex, on random texts of words (error words
// among them, in any case, glued to digits, underscores, non-ASCII or punctuation) with runs
// across every 64-byte boundary.
TEST(JsonSelect, ErrorWordScanEqualsTheRegex) {
  const RE2 rule(
      "(?i)\\b(error|errors|exception|failed|failure|critical|fatal|crash|panic|abort|timeout|"
      "denied|rejected)\\b");
  const std::vector<std::string> words = {"error",    "ERRORS", "Exception", "failed",   "FailurE", "critical",
                                          "fatal",    "crash",  "panic",     "abort",    "timeout", "denied",
                                          "rejected", "errorz", "xerror",    "timeouts", "a",       "ok",
                                          "running",  "status", "7",         "_",        "é"};
  // Glue bytes include the first and last of each word-byte range and their neighbours.
  const std::vector<std::string> glue = {" ", "\"", "_", "0", "9", "/",        ":",    "@",    "[", "`", "{",
                                         "A", "Z",  "a", "z", "-", "\xC3\xA9", "\xC1", "\xFA", "",  ",", "\n"};
  uint64_t state = 99;
  auto next = [&](size_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33) % bound;
  };
  int hits = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string doc;
    const size_t parts = next(40);
    for (size_t i = 0; i < parts; ++i) {
      // Mostly filler words, so that most texts hold no error word.
      doc += next(8) == 0 ? words[next(words.size())] : words[13 + next(words.size() - 13)];
      doc += glue[next(glue.size())];
    }
    const bool expected = RE2::PartialMatch(doc, rule);
    hits += expected ? 1 : 0;
    ASSERT_EQ(internal::HasErrorWord(doc), expected) << doc;
  }
  EXPECT_GT(hits, 400);
  EXPECT_LT(hits, 3600);
  // A word that ends exactly at a 64-byte boundary, at the end, or spans one.
  for (size_t pad = 50; pad < 70; ++pad) {
    std::string doc(pad, ' ');
    doc += "timeout";
    EXPECT_TRUE(internal::HasErrorWord(doc)) << pad;
    EXPECT_FALSE(internal::HasErrorWord(doc + "s")) << pad;
    EXPECT_TRUE(internal::HasErrorWord(doc + " x")) << pad;
    EXPECT_FALSE(internal::HasErrorWord(std::string(pad, 'x') + "timeout")) << pad;
  }
}

// CleanSourceFacts against CJ written out: random values spelled with white space inside
// and outside strings (tabs, CRs, LFs, runs that cross 64-byte blocks), error words, the
// bytes CJ escapes, and duplicate keys. Where it answers, the length must be CJ's and the
// error-word verdict on the source CJ's; it must answer for every value without those bytes.
TEST(JsonSelect, CleanSourceFactsAreThoseOfCj) {
  std::mt19937_64 rng(7);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::vector<std::string> texts = {
      "a b",           "error",    "  spaced  out  ", "x\\ty",
      "<tag>",         "a&b",      "\xE2\x80\xA8",    "\xE2\x82\xAC",
      "tab\tkey",      "",         "fatal crash",     "long " + std::string(70, ' ') + "run",
      "q\\\"q",        "\xC5\xBF",
      "cra\xC5\xBFh",     // U+017F folds to 's': an error word to the rule's regex only
      "\xC5\x90 error"};  // a 0xC5 byte that starts no U+017F
  const std::vector<std::string> spaces = {"", " ", "\n", "\t", "\r\n", "    ", std::string(40, ' ')};
  std::function<std::string(int)> value = [&](int depth) -> std::string {
    const size_t kind = depth > 3 ? pick(4) : pick(6);
    auto ws = [&] { return spaces[pick(spaces.size())]; };
    auto str = [&] {
      std::string t = texts[pick(texts.size())];
      for (char& c : t) {
        if (c == '\t') c = ' ';  // no raw control byte inside a JSON string
      }
      return "\"" + t + "\"";
    };
    switch (kind) {
      case 0: return str();
      case 1: return std::to_string(static_cast<int64_t>(rng() % 2000000) - 1000000) + (pick(2) ? "e5" : "");
      case 2: return pick(2) ? "true" : "null";
      case 3: return "false";
      case 4: {
        std::string a = "[" + ws();
        const size_t k = pick(5);
        for (size_t i = 0; i < k; ++i) a += (i ? "," + ws() : "") + value(depth + 1) + ws();
        return a + "]";
      }
      default: {
        std::string o = "{" + ws();
        const size_t k = pick(5);
        for (size_t i = 0; i < k; ++i) {
          const std::string key = pick(3) == 0 ? str() : "\"" + std::string(pick(2) ? "id" : "a b") + "\"";
          o += (i ? "," + ws() : "") + key + ws() + ":" + ws() + value(depth + 1) + ws();
        }
        return o + "}";
      }
    }
  };
  int clean = 0, declined = 0, duplicates = 0, error_words = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string src = value(0);
    JsonTree tree;
    ASSERT_TRUE(tree.Parse(src)) << src;
    const std::string cj = Cj(tree, tree.root());
    const bool has_special = src.find_first_of("\\<>&\xE2") != std::string::npos;
    size_t len = 0;
    bool error_word = false;
    const bool answered = internal::CleanSourceFacts(src, true, &len, &error_word);
    ASSERT_EQ(answered, !has_special) << src;
    size_t len_alone = 0;
    bool untouched = true;
    ASSERT_EQ(internal::CleanSourceFacts(src, false, &len_alone, &untouched), answered) << src;
    if (!answered) {
      ++declined;
      continue;
    }
    if (tree.dropped_duplicate_key()) {
      ++duplicates;
      continue;
    }
    ++clean;
    ASSERT_EQ(len, cj.size()) << src;
    ASSERT_EQ(len_alone, cj.size()) << src;
    ASSERT_TRUE(untouched) << src;  // not asked for
    ASSERT_EQ(error_word, internal::HasErrorWord(cj)) << src;
    ASSERT_EQ(internal::HasErrorWord(src), internal::HasErrorWord(cj)) << src;
    error_words += internal::HasErrorWord(cj);
  }
  EXPECT_GT(clean, 1000);
  EXPECT_GT(declined, 300);
  EXPECT_GT(duplicates, 20);
  EXPECT_GT(error_words, 100);
  EXPECT_LT(error_words, clean - 100);
}

TEST(JsonSelect, ErrorWordsAndPreservedKeys) {
  EXPECT_TRUE(internal::HasErrorWord("{\"s\":\"Request TIMEOUT\"}"));
  EXPECT_FALSE(internal::HasErrorWord("{\"s\":\"timeouts\",\"e\":\"error_rate\"}"));
  EXPECT_TRUE(internal::HasErrorWord("x-failed"));
  EXPECT_TRUE(internal::HasErrorWord("erro\xC5\xBFx crash"));
  EXPECT_TRUE(internal::HasErrorWord("\"cra\xC5\xBFh\""));  // U+017F folds to 's'
  EXPECT_FALSE(internal::HasErrorWord("\"\xC5\x90rror\""));
  EXPECT_TRUE(internal::IsPreservedKey("Stack_Trace"));
  EXPECT_TRUE(internal::IsPreservedKey("\xE2\x84\xAA"
                                       "ey") == false);
  EXPECT_TRUE(internal::IsPreservedKey("stac\xE2\x84\xAA"));  // Kelvin sign folds to k
  EXPECT_FALSE(internal::IsPreservedKey("errorCode"));
}

// ---------------------------------------------------------------- declines

TEST(JsonCompressor, DeclinesNonJsonShortArraysAndDeepNesting) {
  EXPECT_FALSE(ElideJson("not json", "").has_value());
  EXPECT_FALSE(ElideJson("{\"a\":[1,2,3]}", "").has_value());
  EXPECT_FALSE(ElideJson("[1,2,3,4,5,6,7,8]", "").has_value());
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(ElideJson(deep, "").has_value());
  auto c = NewJsonCompressor();
  EXPECT_FALSE(RunOnString(*c, deep).has_value());
  // 9,990 levels with a collapsible array at the bottom: handled without recursion.
  std::string big = "[";
  for (int i = 0; i < 40; ++i) big += (i ? ",{\"k\":\"v\",\"i\":" : "{\"k\":\"v\",\"i\":") + std::to_string(i) + "}";
  big += "]";
  std::string nested = std::string(9990, '[') + big + std::string(9990, ']');
  auto out = ElideJson(nested, "");
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("__caveman_elided__"), std::string::npos);
  EXPECT_FALSE(ElideJson(*out, "").has_value());
}

TEST(JsonCompressor, PreservedSubtreesAndDuplicateKeys) {
  std::string items;
  for (int i = 0; i < 30; ++i) items += (i ? "," : "") + std::string("{\"n\":") + std::to_string(i) + "}";
  // Under "details" the array is copied unchanged: nothing collapsed → decline.
  EXPECT_FALSE(ElideJson("{\"details\":[" + items + "]}", "").has_value());
  auto out = ElideJson("{\"b\":1,\"list\":[" + items + "],\"b\":2,\"a\":\"<x>\"}", "");
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->rfind("{\"a\":\"\\u003cx\\u003e\",\"b\":2,\"list\":[{\"n\":0}", 0), 0u);
}

// ---------------------------------------------------------------- generated inputs

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int pct) { return Int(1, 100) <= pct; }

  std::string Ws() { return Chance(30) ? (Chance(50) ? "\n  " : " ") : ""; }

  std::string Str() {
    static const char* words[] = {"alpha",           "beta",   "gamma", "delta", "node",        "pod", "zone",
                                  "\\u00e9t\\u00e9", "a\\\"q", "<b>",   "x&y",   "line\\nbreak"};
    std::string s = words[Int(0, 11)];
    if (Chance(50)) s += "-" + std::to_string(Int(0, 999));
    if (Chance(4)) s += Chance(50) ? "-failed" : " timeout";
    return "\"" + s + "\"";
  }
  std::string Num() {
    switch (Int(0, 4)) {
      case 0: return std::to_string(Int(-5, 5));
      case 1: return std::to_string(Int(0, 100000));
      case 2: return std::to_string(Int(0, 99)) + "." + std::to_string(Int(10, 99));
      case 3: return std::to_string(Int(1, 9)) + "e" + std::to_string(Int(0, 3));
      default: return Chance(5) ? "98999" : "1999";
    }
  }
  std::string Record(int i, int depth) {
    std::vector<std::string> members = {
        "\"id\":\"rec-" + std::to_string(i) + "\"",
        "\"kind\":\"" + std::string(Chance(80) ? "pod" : (Chance(50) ? "svc" : "job")) + "\"", "\"n\":" + Num(),
        "\"ok\":" + std::string(Chance(90) ? "true" : "false")};
    if (Chance(70)) members.push_back("\"name\":" + Str());
    if (Chance(10)) members.push_back("\"status\":\"" + std::string(Chance(50) ? "error" : "ok") + "\"");
    if (Chance(20)) members.push_back("\"meta\":{\"a\":" + Num() + ",\"b\":" + Str() + "}");
    if (Chance(10)) members.push_back("\"message\":[" + Str() + "," + Str() + "]");
    if (depth < 2 && Chance(8)) members.push_back("\"children\":" + Array(depth + 1));
    if (Chance(5)) members.push_back("\"n\":" + Num());  // duplicate key: last wins
    std::string s = "{";
    for (size_t k = 0; k < members.size(); ++k) s += (k ? "," + Ws() : Ws()) + members[k];
    return s + "}";
  }
  std::string Array(int depth) {
    int n = Chance(30) ? Int(0, 8) : Int(9, depth == 0 ? 120 : 30);
    std::string s = "[";
    int kind = Int(0, 9);
    for (int i = 0; i < n; ++i) {
      if (i) s += "," + Ws();
      if (kind == 0)
        s += Num();
      else if (kind == 1)
        s += Str();
      else
        s += Record(i, depth);
    }
    return s + "]";
  }
  std::string Doc() { return "{\"items\":" + Array(0) + ",\"page\":" + Num() + ",\"other\":" + Array(1) + "}"; }

 private:
  std::mt19937_64 rng_;
};

TEST(JsonCompressor, PropertiesOnGeneratedInputs) {
  int accepted = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE(seed);
    Gen g(seed);
    std::string input = g.Doc();
    JsonTree in_t;
    ASSERT_TRUE(in_t.Parse(input)) << input.substr(0, 200);
    for (std::string_view query : {std::string_view(), std::string_view("gamma timeout")}) {
      auto out = ElideJson(input, query);
      if (!out) continue;
      ++accepted;
      JsonTree out_t;
      ASSERT_TRUE(out_t.Parse(*out));            // the output parses as JSON
      EXPECT_EQ(Cj(out_t, out_t.root()), *out);  // and is CJ already
      WalkStats st;
      CheckAligned(in_t, in_t.root(), out_t, out_t.root(), false, &st);
      EXPECT_GE(st.markers, 1u);
      EXPECT_LE(st.notes, 1u);
      // Idempotence: a second pass declines or returns the same bytes.
      auto again = ElideJson(*out, query);
      if (again) {
        EXPECT_EQ(*again, *out);
      }
    }
  }
  EXPECT_GT(accepted, 100);
}

// ---------------------------------------------------------------- piecewise path

// Documents of several shapes for the piecewise comparison: the generator's list, a bare
// array, duplicate and escaped keys beside preserved ones, a short array of long arrays, and
// an array already holding a marker.
std::string ShapedDoc(Gen& g, uint64_t seed) {
  switch (seed % 5) {
    case 0: return g.Doc();
    case 1: return g.Array(0);
    case 2:
      return "{\"b\":1,\"a\\u0041\":" + g.Array(1) + ",\"items\":" + g.Array(0) + ",\n \"errors\":" + g.Array(0) +
             ",\"items\":" + g.Array(1) + ",\"z\":{\"inner\":" + g.Array(0) + ",\"m\":\"x\"}}";
    case 3: return "[" + g.Array(0) + ",\n" + g.Array(1) + "," + g.Record(0, 0) + "]";
    default: {
      std::optional<std::string> prev = ElideJson(g.Doc(), "");
      return "{\"prev\":" + (prev ? *prev : std::string("null")) + ",\"new\":" + g.Array(0) + "}";
    }
  }
}

// The piecewise path reads lengths and error words from an element's source bytes only
// when they spell its CJ. An element with a duplicate key does not: its dropped member (the
// first "msg") holds the error words and padding that CJ lacks, so reading them would keep
// the element and flag its length; CJ keeps neither.
TEST(JsonPiecewise, ADroppedDuplicateKeyIsNotReadFromTheSource) {
  std::string input = "[";
  for (int i = 0; i < 40; ++i) {
    if (i > 0) input += ",\n  ";
    input += "{\"id\": " + std::to_string(i) + ", \"msg\": \"ok\"";
    if (i == 20)
      input =
          input.substr(0, input.size() - 12) + "\"msg\": \"fatal crash" + std::string(300, '.') + "\", \"msg\": \"ok\"";
    input += "}";
  }
  input += "]";
  const std::optional<std::string> tree = ElideJson(input, "");
  ASSERT_TRUE(tree.has_value());
  EXPECT_EQ(tree->find("\"id\":20"), std::string::npos) << *tree;  // CJ of element 20 is like the others
  for (size_t group : {size_t{0}, size_t{64}, size_t{1} << 19}) {
    std::optional<std::string> pieces;
    ASSERT_TRUE(ElideJsonPiecewiseForTest(input, "", 1, 4, group, &pieces));
    EXPECT_EQ(pieces, tree) << group;
  }
}

TEST(JsonPiecewise, SameBytesAsTheWholeTree) {
  struct Limits {
    size_t node_bytes;
    int depth;
    size_t group_bytes;
  };
  // Every container a node, one element per group; deep skeletons with small groups; middle
  // sizes; the product's group size.
  const Limits limits[] = {{1, 1, 0}, {1, 8, 64}, {40, 3, 400}, {200, 2, size_t{1} << 19}, {1, 4, 1}};
  int collapsed = 0;
  int compared = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE(seed);
    Gen g(seed);
    const std::string input = ShapedDoc(g, seed);
    for (std::string_view query : {std::string_view(), std::string_view("gamma timeout")}) {
      const std::optional<std::string> tree = ElideJson(input, query);
      collapsed += tree.has_value();
      for (const Limits& l : limits) {
        SCOPED_TRACE(::testing::Message() << l.node_bytes << "/" << l.depth << "/" << l.group_bytes);
        std::optional<std::string> pieces;
        const bool taken = ElideJsonPiecewiseForTest(input, query, l.node_bytes, l.depth, l.group_bytes, &pieces);
        if (input.size() < l.node_bytes) {  // the root is no node
          EXPECT_FALSE(taken);
          continue;
        }
        ASSERT_TRUE(taken);
        ++compared;
        EXPECT_EQ(pieces, tree);
      }
    }
  }
  EXPECT_GT(collapsed, 120);  // most documents collapse something
  EXPECT_GT(compared, 900) << compared;
}

// The repository's JSON fixtures (real tool outputs among them), each with every container a
// node and one element per group, then with deeper pieces.
TEST(JsonPiecewise, SameBytesOnTheFixtures) {
  int compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(testing::SourceDir() + "/fixtures")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const std::string input = testing::ReadAbsolute(entry.path().string());
    for (std::string_view query : {std::string_view(), std::string_view("error name")}) {
      const std::optional<std::string> tree = ElideJson(input, query);
      for (int depth : {2, 8}) {
        std::optional<std::string> pieces;
        if (!ElideJsonPiecewiseForTest(input, query, 1, depth, 0, &pieces)) continue;
        ++compared;
        EXPECT_EQ(pieces, tree);
      }
    }
  }
  EXPECT_GE(compared, 30);
}

TEST(JsonPiecewise, NotTakenWithoutASkeleton) {
  std::optional<std::string> out;
  EXPECT_FALSE(ElideJsonPiecewiseForTest("{\"a\":[1,2,3,4,5,6,7,8,9,10,}", "", 1, 4, 64, &out));  // not JSON
  EXPECT_FALSE(ElideJsonPiecewiseForTest("\"just a string\"", "", 1, 4, 64, &out));               // no container
  EXPECT_FALSE(ElideJsonPiecewiseForTest("[1,2,3,4,5,6,7,8,9,10]", "", 1000, 4, 64, &out));  // root below node size
}

// ---------------------------------------------------------------- query bias

TEST(JsonCompressor, QueryKeepsRelevantElements) {
  std::string s = "[";
  for (int i = 0; i < 40; ++i) {
    s += (i ? "," : "") + std::string("{\"host\":\"host-") + std::to_string(i) + "\",\"desc\":\"" +
         (i == 20 ? "purple zebra" : "plainly boxy") + "\"}";
  }
  s += "]";
  auto plain = ElideJson(s, "");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->find("purple zebra"), std::string::npos);
  auto q = ElideJson(s, "where is the purple zebra");
  ASSERT_TRUE(q.has_value());
  EXPECT_NE(q->find("{\"desc\":\"purple zebra\",\"host\":\"host-20\"}"), std::string::npos);
}

// ---------------------------------------------------------------- realistic shapes

std::string KubectlPods(int n, uint64_t seed, std::vector<std::string>* failing) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  static const char* apps[] = {"web", "api-gateway", "billing-worker", "search-indexer", "redis"};
  std::string s = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n";
  for (int i = 0; i < n; ++i) {
    std::string app = apps[pick(0, 4)];
    char hash[16];
    snprintf(hash, sizeof hash, "%08x", static_cast<unsigned>(rng()));
    std::string name = app + "-" + std::string(hash).substr(0, 6) + "-" + std::to_string(pick(100, 99999));
    bool fail = i == n / 3 || i == (2 * n) / 3;
    if (fail) failing->push_back(name);
    s +=
        "    {\n      \"apiVersion\": \"v1\",\n      \"kind\": \"Pod\",\n      \"metadata\": {\n"
        "        \"creationTimestamp\": \"2024-05-" +
        std::to_string(10 + pick(0, 18)) + "T0" + std::to_string(pick(0, 9)) + ":1" + std::to_string(pick(0, 9)) +
        ":00Z\",\n"
        "        \"labels\": {\n          \"app\": \"" +
        app + "\",\n          \"pod-template-hash\": \"" + std::string(hash).substr(0, 6) +
        "\"\n        },\n        \"name\": \"" + name +
        "\",\n"
        "        \"namespace\": \"prod\",\n        \"resourceVersion\": \"" +
        std::to_string(100000 + pick(0, 900000)) + "\",\n        \"uid\": \"" + std::string(hash) + "-1f2e-4c3d-9a8b-" +
        std::to_string(100000000 + pick(0, 99999999)) +
        "\"\n      },\n"
        "      \"spec\": {\n        \"containers\": [\n          {\n            \"image\": \"registry.example.com/" +
        app + ":1." + std::to_string(pick(0, 9)) + "\",\n            \"name\": \"" + app +
        "\",\n            \"ports\": [\n              {\n                \"containerPort\": 8080,\n"
        "                \"protocol\": \"TCP\"\n              }\n            ],\n"
        "            \"resources\": {\n              \"limits\": {\n                \"cpu\": \"500m\",\n"
        "                \"memory\": \"512Mi\"\n              }\n            }\n          }\n        ],\n"
        "        \"nodeName\": \"node-" +
        std::to_string(pick(1, 12)) +
        "\",\n"
        "        \"restartPolicy\": \"Always\"\n      },\n      \"status\": {\n"
        "        \"containerStatuses\": [\n          {\n            \"name\": \"" +
        app +
        "\",\n"
        "            \"ready\": " +
        (fail ? "false" : "true") + ",\n            \"restartCount\": " + std::to_string(fail ? 42 : pick(0, 2)) +
        ",\n            \"state\": " +
        (fail
             ? "{\n              \"waiting\": {\n                \"message\": \"back-off 5m0s restarting failed container\",\n                \"reason\": \"CrashLoopBackOff\"\n              }\n            }"
             : "{\n              \"running\": {\n                \"startedAt\": \"2024-05-20T10:00:00Z\"\n              }\n            }") +
        "\n          }\n        ],\n        \"phase\": \"" + (fail ? "Failed" : "Running") +
        "\",\n        \"podIP\": \"10.1." + std::to_string(pick(0, 255)) + "." + std::to_string(pick(1, 254)) +
        "\"\n      }\n    }" + (i + 1 < n ? ",\n" : "\n");
  }
  s += "  ],\n  \"kind\": \"List\",\n  \"metadata\": {\n    \"resourceVersion\": \"\"\n  }\n}\n";
  return s;
}

std::string CloudInstances(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string s = "{\"Instances\": [";
  for (int i = 0; i < n; ++i) {
    char id[32];
    snprintf(id, sizeof id, "i-%016llx", static_cast<unsigned long long>(rng()));
    s += std::string(i ? ", " : "") + "{\"InstanceId\": \"" + id + "\", \"InstanceType\": \"" +
         (pick(0, 3) == 0 ? "m5.large" : "t3.medium") + "\", \"LaunchTime\": \"2024-0" + std::to_string(pick(1, 9)) +
         "-1" + std::to_string(pick(0, 9)) +
         "T12:00:00Z\", "
         "\"Placement\": {\"AvailabilityZone\": \"us-east-1" +
         std::string(1, static_cast<char>('a' + pick(0, 2))) +
         "\", \"Tenancy\": \"default\"}, \"PrivateIpAddress\": \"172.31." + std::to_string(pick(0, 255)) + "." +
         std::to_string(pick(1, 254)) +
         "\", \"State\": {\"Code\": 16, \"Name\": \"running\"}, "
         "\"Tags\": [{\"Key\": \"Name\", \"Value\": \"worker-" +
         std::to_string(i) +
         "\"}, "
         "{\"Key\": \"team\", \"Value\": \"data\"}], \"VpcId\": \"vpc-0a1b2c3d\"}";
  }
  return s + "]}";
}

double Ratio(std::string_view before, std::string_view after) {
  const TokenCounter& tc = DefaultTokenCounter();
  double b = static_cast<double>(tc.Count(before));
  return (b - static_cast<double>(tc.Count(after))) / b;
}

TEST(JsonCompressor, KubectlListReachesRatioAndKeepsFailures) {
  std::vector<std::string> failing;
  std::string input = KubectlPods(300, 7, &failing);
  auto out = ElideJson(input, "");
  ASSERT_TRUE(out.has_value());
  double r = Ratio(input, *out);
  std::cout << "kubectl 300 pods: " << input.size() << " -> " << out->size() << " bytes, ratio " << r << "\n";
  EXPECT_GE(r, 0.90);
  for (const std::string& name : failing) EXPECT_NE(out->find(name), std::string::npos) << name;
  JsonTree in_t, out_t;
  ASSERT_TRUE(in_t.Parse(input));
  ASSERT_TRUE(out_t.Parse(*out));
  WalkStats st;
  CheckAligned(in_t, in_t.root(), out_t, out_t.root(), false, &st);
  EXPECT_EQ(st.notes, 1u);
}

TEST(JsonCompressor, CloudListReachesRatio) {
  std::string input = CloudInstances(250, 3);
  auto out = ElideJson(input, "");
  ASSERT_TRUE(out.has_value());
  double r = Ratio(input, *out);
  std::cout << "cloud 250 instances: ratio " << r << "\n";
  EXPECT_GE(r, 0.90);
}

TEST(JsonCompressor, VaryingLengthsAloneDoNotKeepElements) {
  std::mt19937_64 rng(11);
  std::string s = "[";
  for (int i = 0; i < 400; ++i) {
    int len = std::uniform_int_distribution<int>(3, 40)(rng);
    s += std::string(i ? "," : "") + "{\"id\":" + std::to_string(i) + ",\"title\":\"" +
         std::string(static_cast<size_t>(len), static_cast<char>('a' + i % 26)) + "\"}";
  }
  s += "]";
  auto out = ElideJson(s, "");
  ASSERT_TRUE(out.has_value());
  JsonTree t;
  ASSERT_TRUE(t.Parse(*out));
  EXPECT_LE(t.size(t.root()), 25u);
}

TEST(JsonCompressor, LengthAnomaliesAreCapped) {
  // 80 of 2,000 records are 8 bytes longer: rare enough for the `__len__` rule, but only the
  // 50 most extreme length anomalies are kept (docs/DECISIONS.md).
  std::string s = "[";
  int longer = 0;
  for (int i = 0; i < 2000; ++i) {
    char id[16];
    snprintf(id, sizeof id, "r-%04d", i);
    bool l = i % 25 == 5;
    longer += l;
    s += std::string(i ? "," : "") + "{\"id\":\"" + id + "\",\"s\":\"" + (l ? "ok-delayed" : "ok") + "\"}";
  }
  s += "]";
  ASSERT_EQ(longer, 80);
  auto out = ElideJson(s, "");
  ASSERT_TRUE(out.has_value());
  JsonTree t;
  ASSERT_TRUE(t.Parse(*out));
  size_t kept = 0, kept_longer = 0;
  for (uint32_t i = 0; i < t.size(t.root()); ++i) {
    JsonTree::NodeId e = t.item(t.root(), i);
    if (IsMarker(t, e)) continue;
    ++kept;
    kept_longer += t.text(t.member_value(e, 1)) == "ok-delayed" ? 1 : 0;
  }
  EXPECT_GE(kept_longer, 50u);
  EXPECT_LE(kept_longer, 50u + 2 * internal::kJsonMaxSplits);
  EXPECT_LE(kept, 5u + 50u + 2 * internal::kJsonMaxSplits);
}

// MinifyJson and the size the compressor checks before building it (issue 19) agree, depth
// included: whitespace inside and outside strings, escapes (an escaped quote, a trailing
// backslash pair), nesting.
TEST(MinifyJson, SizeAndDepthWithoutBuildingMatchTheMinifiedText) {
  const std::vector<std::string> cases = {
      "",
      "  {\n  \"a\" : [ 1, 2 ,3 ],\t\"b\":{\"c\":\"x y\"} }\n",
      "[\"q\\\"uoted \\\\\", \"tab\\t\", [[[ ]]], {\"k\": [ {\"d\": [ ] } ] } ]",
      "\"only a string with  spaces\"",
      "[1,[2,[3,[4,[5]]]]]",
  };
  for (const std::string& json : cases) {
    int depth_built = -1;
    int depth_sized = -1;
    const std::string minified = MinifyJson(json, &depth_built);
    EXPECT_EQ(MinifiedJsonSize(json, &depth_sized), minified.size()) << json;
    EXPECT_EQ(depth_sized, depth_built) << json;
    // The early-stopping comparison agrees with the full size at and around every bound.
    for (size_t limit = 0; limit <= minified.size() + 2; ++limit) {
      EXPECT_EQ(MinifiedJsonSizeAtMost(json, limit), minified.size() <= limit) << json << " limit " << limit;
    }
  }
  int depth = 0;
  EXPECT_EQ(MinifyJson("[1,[2,[3,[4,[5]]]]]", &depth), "[1,[2,[3,[4,[5]]]]]");
  EXPECT_EQ(depth, 5);
  EXPECT_EQ(MinifyJson("{ \"a\" : \"x y\" }"), "{\"a\":\"x y\"}");
}

// Detection leaves the skeleton of a large JSON text on the Body (it validates every byte
// anyway); the json compressor walks the text from it and writes what it writes without it.
TEST(JsonPiecewise, DetectionLeavesTheSkeletonForTheCompressor) {
  std::vector<std::string> failing;
  std::string input = KubectlPods(6000, 7, &failing);
  ASSERT_GE(input.size(), internal::kJsonPiecewiseMinBytes);
  const Body body = Body::FromView(input);
  Result<std::string_view> type = DetectLarge(body);
  ASSERT_TRUE(type.ok());
  EXPECT_EQ(*type, "json");
  const std::shared_ptr<const void> d = body.Derived(&internal::kDerivedJsonSkeletonTag);
  ASSERT_NE(d, nullptr);
  const auto* derived = static_cast<const internal::DerivedJsonSkeleton*>(d.get());
  EXPECT_EQ(derived->data, input.data());
  EXPECT_EQ(derived->size, input.size() - 1);  // the text without its final newline
  EXPECT_GE(derived->skeleton.root(), 0);

  auto json = NewJsonCompressor();
  StringSink with, without;
  TransformMeta with_meta, without_meta;
  Result<TransformOutcome> a = json->Transform(body, "", with, &with_meta);
  Result<TransformOutcome> b = json->Transform(Body::FromView(input), "", without, &without_meta);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, TransformOutcome::kAccepted);
  EXPECT_EQ(with.data(), without.data());
  EXPECT_EQ(with_meta.method, "elision");
  EXPECT_EQ(with.data(), ElideJsonWholeTreeForTest(input, "").value_or(""));  // the whole tree's bytes
  EXPECT_EQ(body.Derived(&internal::kDerivedJsonSkeletonTag), nullptr);       // released once used
  for (const std::string& name : failing) EXPECT_NE(with.data().find(name), std::string::npos) << name;
}

// Issue 15's ceiling (peak ≤ 3× the input + 64 MiB): the whole tree and the selection take
// ≈ 100 bytes per value, so a text with more values than fit is not elided, only validated,
// and its lossless forms are still considered; TOON (≈ 220 bytes per value) likewise.
TEST(JsonCompressor, LeavesTheTreeOutBeyondTheMemoryCeiling) {
  auto numbers = [](size_t n) {
    std::string s = "[\n";
    for (size_t i = 0; i < n; ++i) s += (i ? ",\n  " : "  ") + std::to_string(i == n / 2 ? 999999 : 1 + i % 3);
    return s + "\n]\n";
  };
  auto json = NewJsonCompressor();
  auto run = [&](const std::string& input, std::string* method) {
    StringSink sink;
    TransformMeta meta;
    Result<TransformOutcome> r = json->Transform(Body::FromView(input), "", sink, &meta);
    EXPECT_TRUE(r.ok());
    *method = meta.method;
    return r.ok() && *r == TransformOutcome::kAccepted ? sink.data() : std::string();
  };
  std::string method;
  const std::string small = numbers(10000);
  EXPECT_NE(run(small, &method).find("999999"), std::string::npos);
  EXPECT_EQ(method, "elision");
  // 1,000,001 values in 5 MB: 100 MB of tree beside it is over 2 × 5 MB + 64 MiB.
  const std::string big = numbers(1000001);
  EXPECT_EQ(run(big, &method), MinifyJson(big));
  EXPECT_EQ(method, "minify");
  // Not elided, but still validated: a broken end declines.
  std::string broken = big;
  broken.insert(broken.size() - 2, ",");
  StringSink sink;
  TransformMeta meta;
  Result<TransformOutcome> r = json->Transform(Body::FromView(broken), "", sink, &meta);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, TransformOutcome::kDeclined);
  EXPECT_TRUE(sink.data().empty());
}

// A long array whose one element holds more short values than a tree may within the ceiling:
// that element is no piece either, so the piecewise path gives up (the hook, with no bound on
// skeleton records, reaches the piece; the product's skeleton already refuses this many
// records) and the whole-tree path's bound leaves only the minified text.
TEST(JsonPiecewise, AnElementOfTooManyValuesIsNoPiece) {
  std::string s = "[[";
  for (int i = 0; i < 1500000; ++i) s += i ? ",\n1" : "1";
  s += "]";
  for (int i = 0; i < 9; ++i) s += ",\n{\"id\":" + std::to_string(i) + "}";
  s += "]\n";
  std::optional<std::string> out;
  EXPECT_FALSE(ElideJsonPiecewiseForTest(s, "", size_t{1} << 20, 4, size_t{128} << 10, &out));
  auto json = NewJsonCompressor();
  StringSink sink;
  TransformMeta meta;
  Result<TransformOutcome> r = json->Transform(Body::FromView(s), "", sink, &meta);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, TransformOutcome::kAccepted);
  EXPECT_EQ(meta.method, "minify");
  EXPECT_EQ(sink.data(), MinifyJson(s));
}

// Elements over a mebibyte each are groups of one, parsed whole; their marker fields come
// from their trees (the member reader stops at 1 MiB), and the path is still taken.
TEST(JsonPiecewise, ElementsOverAMebibyteAreGroupsOfOne) {
  std::string s = "[";
  for (int i = 0; i < 10; ++i) {
    s += std::string(i ? "," : "") + "{\"id\":" + std::to_string(i) + ",\"kind\":\"blob\",\"data\":\"" +
         std::string((size_t{1} << 20) + 1000, static_cast<char>('a' + i)) + "\"}";
  }
  s += "]";
  std::optional<std::string> out;
  ASSERT_TRUE(ElideJsonPiecewiseForTest(s, "", size_t{1} << 20, 4, size_t{128} << 10, &out));
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("\"__caveman_elided__\":5"), std::string::npos);
  EXPECT_NE(out->find("kind=blob"), std::string::npos) << out->substr(0, 300);
}

// At the product's own limits: the repository's real tool outputs (findmnt, lsblk, ip, pip,
// npm), each repeated into a list of ≥ 4 MiB — as a bare array and inside an object beside
// other members — give ElideJson the bytes of one whole tree.
TEST(JsonPiecewise, SameBytesAsTheWholeTreeOnLargeListsOfRealOutputs) {
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::SourceDir() + "/fixtures/json-lossless")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const std::string doc = testing::ReadAbsolute(entry.path().string());
    std::string list = "[";
    for (size_t i = 0; list.size() < internal::kJsonPiecewiseMinBytes + (size_t{1} << 19); ++i) {
      list += (i ? ",\n" : "") + doc;
    }
    list += "]";
    const std::string wrapped = "{\"count\": 1, \"runs\": " + list + ", \"source\": \"fixtures\"}\n";
    for (const std::string* input : {&std::as_const(list), &wrapped}) {
      for (std::string_view query : {std::string_view(), std::string_view("name error")}) {
        const std::optional<std::string> tree = ElideJsonWholeTreeForTest(*input, query);
        EXPECT_EQ(ElideJson(*input, query), tree);
        // The piecewise path with the product's limits, record bound included, is taken here
        // (ElideJson could fall back to the tree unnoticed) and gives the same bytes.
        std::optional<std::string> pieces;
        ASSERT_TRUE(ElideJsonPiecewiseForTest(*input, query, internal::kJsonSkeletonNodeBytes,
                                              internal::kJsonSkeletonDepth, size_t{128} << 10, &pieces,
                                              internal::kJsonSkeletonBytesPerRecord));
        EXPECT_EQ(pieces, tree);
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 20);  // five outputs, two shapes, two queries
}

}  // namespace
}  // namespace caveman
