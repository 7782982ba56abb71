#include "caveman/stream/tokens.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "stream/internal/o200k.h"
#include "stream/internal/o200k_classes.h"
#include "stream/utf8_scan.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

struct Vector {
  std::string text;
  uint64_t count = 0;
  std::vector<uint32_t> ids;
  int line = 0;
};

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool ParseHex4(std::string_view s, size_t at, uint32_t* v) {
  if (at + 4 > s.size()) return false;
  *v = 0;
  for (size_t k = at; k < at + 4; ++k) {
    const char c = s[k];
    uint32_t d;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
    *v = *v * 16 + d;
  }
  return true;
}

// Decodes a JSON string literal (with its quotes); false if malformed.
bool ParseJsonString(std::string_view lit, std::string* out) {
  if (lit.size() < 2 || lit.front() != '"' || lit.back() != '"') return false;
  const std::string_view s = lit.substr(1, lit.size() - 2);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c != '\\') {
      if (c == '"') return false;
      out->push_back(c);
      continue;
    }
    if (++i >= s.size()) return false;
    switch (s[i]) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t cp;
        if (!ParseHex4(s, i + 1, &cp)) return false;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (i + 2 >= s.size() || s[i + 1] != '\\' || s[i + 2] != 'u' || !ParseHex4(s, i + 3, &lo) || lo < 0xDC00 ||
              lo > 0xDFFF) {
            return false;
          }
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        }
        AppendUtf8(cp, out);
        break;
      }
      default: return false;
    }
  }
  return true;
}

std::vector<Vector> LoadVectors() {
  std::vector<Vector> vectors;
  std::istringstream in(testing::ReadFile("tests/o200k_vectors.tsv"));
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const size_t tab1 = line.find('\t');
    const size_t tab2 = line.find('\t', tab1 + 1);
    if (tab1 == std::string::npos || tab2 == std::string::npos) {
      ADD_FAILURE() << "malformed vector line " << line_no;
      continue;
    }
    Vector v;
    v.line = line_no;
    if (!ParseJsonString(std::string_view(line).substr(0, tab1), &v.text)) {
      ADD_FAILURE() << "bad JSON literal on line " << line_no;
      continue;
    }
    v.count = std::stoull(line.substr(tab1 + 1, tab2 - tab1 - 1));
    std::istringstream ids(line.substr(tab2 + 1));
    uint32_t id;
    while (ids >> id) v.ids.push_back(id);
    vectors.push_back(std::move(v));
  }
  return vectors;
}

const TokenCounter& O200k() {
  auto r = O200kCounter();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? **r : ApproxTokenCounter();
}

// Text exercising the pieces that can run across a line break.
std::string VariedText() {
  std::string t;
  t += "x = 1;\n// comment\n/* block */\n  indented\n\tTabbed\r\nCRLF line\r\n\r\n";
  t += "a/b//c\n//\r\n/path/to/file\n...\n\n/\nend  \n   \n\n  x\n";
  t += "Café naïve — “quotes” 日本語のテキスト\n👍🏽 family: 👨‍👩‍👧‍👦\n";
  t += "\xC2\xA0nbsp line\n\xE3\x80\x80ideographic space\n\xE2\x80\xA8ls\n";
  t += "bad \xFF\xFE bytes\n\x80\x80 lead\n\xE2\x82 truncated\n\xF0\x9F\x98 x\n";
  t += "it's DON'T we'LL you'Re ABC'd ʰello ǅungla\n";
  t += "2024-05-26T17:45:54.996Z DEBUG [svc-16] pid=4608 retry 1234567 3.14159\n";
  t += std::string(70, ' ') + "\n" + std::string(130, 'x') + "\n";
  for (int k = 0; k < 20; ++k) t += "ab";
  t += "\nSGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0Lg==\n\n\n";
  t += "{\"key\": \"value\", \"arr\": [1, 2, 3]}\n}\n)\n";
  return t;
}

std::string StreamCount(const TokenCounter& counter, const std::vector<std::string_view>& pieces) {
  StreamingTokenCount stream(counter);
  for (std::string_view p : pieces) stream.Feed(p);
  return std::to_string(stream.Finish());
}

TEST(O200k, EmbeddedVocabularyVerifiesAndIsTheDefault) {
  auto r = O200kCounter();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->name(), "o200k_base");
  EXPECT_EQ(DefaultTokenCounter().name(), "o200k_base");
  EXPECT_EQ(&DefaultTokenCounter(), *r);
  EXPECT_EQ(internal::EmbeddedO200kVocabulary(), testing::ReadFile("third_party/o200k/o200k_base.tiktoken"));
}

TEST(O200k, AllVectorsMatchIdsAndCounts) {
  const std::vector<Vector> vectors = LoadVectors();
  ASSERT_EQ(vectors.size(), 47u);
  const TokenCounter& counter = O200k();
  for (const Vector& v : vectors) {
    EXPECT_EQ(v.ids.size(), v.count) << "vector line " << v.line;
    EXPECT_EQ(O200kEncode(v.text), v.ids) << "vector line " << v.line << ": " << v.text;
    EXPECT_EQ(counter.Count(v.text), v.count) << "vector line " << v.line << ": " << v.text;
    EXPECT_EQ(DefaultTokenCounter().Count(v.text), v.count) << "vector line " << v.line;
  }
}

TEST(O200k, EmptyInputCountsZero) {
  EXPECT_EQ(O200k().Count(""), 0u);
  EXPECT_TRUE(O200kEncode("").empty());
}

// FirstInvalidUtf8 against a byte-by-byte scan: one ill-formed or well-formed multi-byte
// sequence planted at every offset of ASCII runs from 0 to 100 bytes (so it falls in the
// 32-byte, the 8-byte and the single-byte steps), and texts cut inside a sequence.
TEST(Utf8Scan, FirstInvalidFindsTheFirstIllFormedByteAtEveryOffset) {
  auto reference = [](std::string_view t) {
    const auto* p = reinterpret_cast<const uint8_t*>(t.data());
    size_t i = 0;
    while (i < t.size()) {
      const int len = internal::Utf8SeqLen(p + i, t.size() - i);
      if (len <= 0) return i;
      i += static_cast<size_t>(len);
    }
    return t.size();
  };
  const std::vector<std::string> planted = {
      "\x80", "\xFF", "\xC3", "\xE2\x82", "\xED\xA0\x80", "\xC3\xA9", "\xF0\x9F\x98\x80", "\xC0\xAF"};
  size_t invalid_seen = 0;
  for (size_t len = 0; len <= 100; ++len) {
    for (size_t at = 0; at <= len; ++at) {
      for (const std::string& seq : planted) {
        std::string t(len, 'q');
        t.insert(at, seq);
        t += std::string(len % 7, 'r');
        const size_t want = reference(t);
        invalid_seen += want != t.size();
        ASSERT_EQ(internal::FirstInvalidUtf8(t), want) << len << " " << at << " " << seq.size();
      }
    }
  }
  EXPECT_GT(invalid_seen, 0u);
  EXPECT_EQ(internal::FirstInvalidUtf8(std::string(64, 'a') + "\xE2\x82"), 64u);
  EXPECT_EQ(internal::FirstInvalidUtf8(std::string(64, 'a') + "\xE2\x82\xAC"), 67u);
}

// The sanitizing rule byte by byte: a well-formed sequence is kept, every other byte becomes
// EF BF BD.
std::string SanitizeReference(std::string_view t) {
  std::string out;
  const auto* p = reinterpret_cast<const uint8_t*>(t.data());
  for (size_t i = 0; i < t.size();) {
    const int len = internal::Utf8SeqLen(p + i, t.size() - i);
    out.append(len > 0 ? t.substr(i, static_cast<size_t>(len)) : "\xEF\xBF\xBD");
    i += len > 0 ? static_cast<size_t>(len) : 1;
  }
  return out;
}

// SanitizeUtf8 against the plain rule (a well-formed sequence is kept, every other byte becomes
// EF BF BD) on random bytes, mostly-ASCII text with stray bytes, and every short tail.
TEST(Utf8Scan, SanitizeKeepsWellFormedSequencesAndReplacesEveryIllFormedByte) {
  const auto reference = SanitizeReference;
  std::mt19937 rng(15);
  for (int round = 0; round < 300; ++round) {
    std::string t;
    const size_t n = rng() % 200;
    for (size_t i = 0; i < n; ++i) {
      const unsigned r = rng();
      if (round % 3 == 0) {
        t += static_cast<char>(r & 0xFF);  // random bytes
      } else if (round % 3 == 1 && round % 2 == 0) {
        // lead bytes (C0..FF) and continuation bytes: sequences of every length, well-formed
        // or not (overlongs, surrogates, above U+10FFFF, cut short)
        t += static_cast<char>(r % 3 == 0 ? 0xC0 | (r >> 8 & 0x3F) : 0x80 | (r >> 8 & 0x3F));
      } else if (r % 17 == 0) {
        t += static_cast<char>(0x80 | (r >> 8 & 0x7F));  // a stray high byte in ASCII
      } else if (r % 13 == 0) {
        t += "\xC3\xA9\xE2\x80\xA6\xF0\x9F\x98\x80";  // é … 😀
      } else {
        t += static_cast<char>('a' + r % 26);
      }
    }
    for (size_t cut = 0; cut <= std::min<size_t>(t.size(), 5); ++cut) {
      const std::string_view v = std::string_view(t).substr(0, t.size() - cut);
      EXPECT_EQ(internal::SanitizeUtf8(v), reference(v)) << round << " " << cut;
    }
  }
  EXPECT_EQ(internal::SanitizeUtf8("a\x80\xE2\x80"), "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  // Every first and second byte, with third and fourth bytes from each class that matters
  // (ASCII, the ends of the continuation range, a lead byte), then ASCII: each four-byte step
  // of SanitizeUtf8To against the byte-by-byte reference.
  const uint8_t later[] = {0x41, 0x80, 0xBF, 0xC3};
  size_t compared = 0;
  for (int b0 = 0; b0 < 256; ++b0) {
    for (int b1 = 0; b1 < 256; ++b1) {
      for (uint8_t b2 : later) {
        for (uint8_t b3 : later) {
          const char t[] = {static_cast<char>(b0),
                            static_cast<char>(b1),
                            static_cast<char>(b2),
                            static_cast<char>(b3),
                            'z',
                            'z',
                            'z',
                            'z'};
          const std::string_view v(t, sizeof t);
          if (internal::SanitizeUtf8(v) != reference(v)) {
            ADD_FAILURE() << std::hex << b0 << " " << b1 << " " << int{b2} << " " << int{b3};
            return;
          }
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 256u * 256 * 16);
}

// The same four-byte steps where SanitizeUtf8To takes its 64-position path for dense
// non-ASCII bytes: each combination after a run of ill-formed 0xFF bytes (so the walk reaches
// it), at every offset of the 16-byte lanes and up to the end of the 64 positions.
TEST(Utf8Scan, SanitizeDenseBlocksEqualTheByteByByteRule) {
  const auto reference = SanitizeReference;
  const uint8_t later[] = {0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC3};
  size_t compared = 0;
  for (int b0 = 0x80; b0 < 256; ++b0) {
    for (int b1 = 0; b1 < 256; ++b1) {
      for (uint8_t b2 : later) {
        const size_t offset = 16 + static_cast<size_t>(b0 + b1 + b2) % 45;
        std::string t(offset, '\xFF');
        t += {static_cast<char>(b0), static_cast<char>(b1), static_cast<char>(b2), static_cast<char>(later[b1 % 8])};
        t += std::string(80 - t.size(), '\x80');
        if (internal::SanitizeUtf8(t) != reference(t)) {
          ADD_FAILURE() << std::hex << b0 << " " << b1 << " " << int{b2} << " at " << std::dec << offset;
          return;
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 128u * 256 * 8);
  // Random dense and mixed texts of a few blocks, cut at every length near the end.
  std::mt19937 rng(19);
  for (int round = 0; round < 400; ++round) {
    std::string t;
    const size_t n = 60 + rng() % 300;
    for (size_t i = 0; i < n; ++i) {
      const unsigned r = rng();
      t += static_cast<char>(round % 2 == 0 ? r & 0xFF : (r % 4 == 0 ? 'a' + r % 26 : 0x80 | (r >> 8 & 0x7F)));
    }
    for (size_t cut = 0; cut <= 8; ++cut) {
      const std::string_view v = std::string_view(t).substr(0, t.size() - cut);
      ASSERT_EQ(internal::SanitizeUtf8(v), reference(v)) << round << " " << cut;
    }
  }
}

TEST(O200k, InvalidBytesBecomeOneReplacementCharEach) {
  const TokenCounter& counter = O200k();
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(O200kEncode("\xFF"), O200kEncode(fffd));
  EXPECT_EQ(O200kEncode("a\x80"
                        "b"),
            O200kEncode("a" + fffd + "b"));
  // A truncated 3-byte sequence is two ill-formed bytes, hence two U+FFFD.
  EXPECT_EQ(O200kEncode("x\xE2\x82 y"), O200kEncode("x" + fffd + fffd + " y"));
  EXPECT_EQ(O200kEncode("\xC0\xAF"), O200kEncode(fffd + fffd));             // overlong '/'
  EXPECT_EQ(O200kEncode("\xED\xA0\x80"), O200kEncode(fffd + fffd + fffd));  // surrogate
  EXPECT_EQ(counter.Count("ok \xF0\x9F\x98 end"), counter.Count("ok " + fffd + fffd + fffd + " end"));
  // U+FFFD is a symbol (So): it joins a leading space and a run of symbols.
  EXPECT_EQ(internal::O200kPieces(" " + fffd + fffd + "a"), (std::vector<std::string_view>{" " + fffd + fffd, "a"}));
}

// A run of ASCII lowercase letters (scanned eight bytes at a time) ends at the first character
// that is not one, whatever its length and wherever that character falls in a word of eight:
// the ASCII neighbours of 'a' and 'z', capitals, digits, space, an apostrophe; a non-ASCII
// lowercase letter continues it.
TEST(O200k, LowercaseRunsEndAtTheFirstOtherCharacter) {
  using Pieces = std::vector<std::string_view>;
  std::mt19937 rng(3);
  for (size_t k = 1; k <= 40; ++k) {
    std::string run;
    for (size_t j = 0; j < k; ++j) run += static_cast<char>('a' + rng() % 26);
    for (const char* c : {"`", "{", "@", "[", "A", "Z", " ", "'", "~", "\x7F"}) {
      const std::string text = run + c + "q";
      EXPECT_EQ(internal::O200kPieces(text), (Pieces{run, std::string(c) + "q"})) << text;
    }
    const std::string digit = run + "7q";
    EXPECT_EQ(internal::O200kPieces(digit), (Pieces{run, "7", "q"})) << digit;
    const std::string accented = run + "\xC3\xA9q";  // é is [Lo]
    EXPECT_EQ(internal::O200kPieces(accented), (Pieces{accented})) << accented;
  }
}

TEST(O200k, PreTokenizerFollowsThePattern) {
  using Pieces = std::vector<std::string_view>;
  EXPECT_EQ(internal::O200kPieces("  \n\n  x"), (Pieces{"  \n\n", " ", " x"}));
  EXPECT_EQ(internal::O200kPieces("x = 1;\n// c"), (Pieces{"x", " =", " ", "1", ";\n//", " c"}));
  EXPECT_EQ(internal::O200kPieces("x  "), (Pieces{"x", "  "}));
  EXPECT_EQ(internal::O200kPieces("a  b"), (Pieces{"a", " ", " b"}));
  EXPECT_EQ(internal::O200kPieces("x \t\n"), (Pieces{"x", " \t\n"}));
  EXPECT_EQ(internal::O200kPieces("12345"), (Pieces{"123", "45"}));
  EXPECT_EQ(internal::O200kPieces("HTTPServer's"), (Pieces{"HTTPServer's"}));
  EXPECT_EQ(internal::O200kPieces("ABC'd it'LL"), (Pieces{"ABC'd", " it'LL"}));
  // U+017F (long s) is not ASCII 's': no contraction.
  EXPECT_EQ(internal::O200kPieces("it'\xC5\xBF"), (Pieces{"it", "'\xC5\xBF"}));
  EXPECT_EQ(internal::O200kPieces("(foo)"), (Pieces{"(foo", ")"}));
  EXPECT_EQ(internal::O200kPieces("\r\n\r\n"), (Pieces{"\r\n\r\n"}));
}

TEST(O200k, CountsAreIdenticalAcrossThreads) {
  const std::string text = VariedText();
  const uint64_t expected = O200k().Count(text);
  std::vector<std::thread> threads;
  std::vector<uint64_t> got(4);
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      uint64_t last = 0;
      for (int k = 0; k < 50; ++k) last = O200k().Count(text);
      got[t] = last;
    });
  }
  for (auto& th : threads) th.join();
  for (uint64_t g : got) EXPECT_EQ(g, expected);
}

// The per-thread cache of merged pieces starts with 256 slots and is replaced, empty, by
// 4,096 after 4,096 misses (issue 19: a small count touches 8 KiB instead of 128 KiB). On a
// fresh thread, counts of texts with thousands of distinct short pieces that are no tokens
// must equal the encoder's before, across and after the switch, and again from a warm cache.
TEST(O200k, MergedPieceCacheGrowsWithoutChangingCounts) {
  std::mt19937 rng(20261205);
  std::string text;
  for (int i = 0; i < 12000; ++i) {  // " xq…" words: mostly pieces that are no single token
    text += ' ';
    const int len = 3 + static_cast<int>(rng() % 8);
    for (int k = 0; k < len; ++k) text += static_cast<char>('a' + rng() % 26);
  }
  std::thread([&] {
    for (size_t part = 0; part < 8; ++part) {  // misses pass 4,096 within the first parts
      const std::string piece = text.substr(part * text.size() / 8, text.size() / 8);
      EXPECT_EQ(O200k().Count(piece), O200kEncode(piece).size()) << "part " << part;
    }
    EXPECT_EQ(O200k().Count(text), O200kEncode(text).size());
    EXPECT_EQ(O200k().Count(text), O200kEncode(text).size());  // warm cache
  }).join();
}

// The line memo of Count (issue 19): texts of at least 4 KiB are counted segment by segment
// between safe cuts, repeated segments from a per-thread memo. Counts must equal the
// memo-free encoder's on texts whose lines repeat (also in runs), start with white space,
// '/', non-ASCII or CR, end without LF, hold `key: value`, and on one with more distinct bytes
// than the memo holds (it is forgotten and refilled), counted twice on one thread (warm memo)
// and on a fresh thread.
TEST(O200k, LineMemoCountsEqualTheEncoder) {
  const TokenCounter& counter = O200k();
  const std::vector<std::string> lines = {
      "2026-11-02T10:00:00.000Z WARN  [pool] connection re-established after timeout\n",
      "tests/test_shipping.py::test_case_190 PASSED\n",
      "  indented continuation of the previous line\n",
      "/usr/lib/x86_64-linux-gnu/libhs.so.5\n",
      "\xC3\xA9t\xC3\xA9 \xE2\x80\x94 caf\xC3\xA9 cr\xC3\xA8me\n",
      "\r\n",
      "\n",
      "error: expected ';' after expression\r\n",
      "\tat com.example.Foo.bar(Foo.java:42)\n",
      "done.\n/tmp/x\n",
      "x\n",
      "    \"restartCount\": 0,\n",
      "        },\n",
      "\t\tfoo(bar);\n",
      "   /* comment */\n",
      "  \n",
      " \t \r\n",
      "    \xC2\xA0nbsp after indentation\n",
      // `key: value` lines, whose key is looked up alone (several keys, values of every kind,
      // a second colon, a non-ASCII key and value, a colon at the end, two spaces).
      "        \"name\": \"redis-beabf7ce3e-bf342\",\n",
      "        \"name\": \"web-1\",\n",
      "            \"containerPort\": 8080,\n",
      "  imagePullPolicy: IfNotPresent\n",
      "Content-Type: text/plain; charset=utf-8\r\n",
      "        \"caf\xC3\xA9 cl\xC3\xA9\": \"cr\xC3\xA8me br\xC3\xBBl\xC3\xA9"
      "e\",\n",
      "    \"url\": \"http://example.com:8080/a: b\"\n",
      "    \"trailing colon at the end\":\n",
      "    \"two spaces after\":  \"x\"\n",
      "    \"nested\": {\"a\": [1, 2], \"b\": null}\n",
  };
  std::mt19937 rng(7);
  for (int round = 0; round < 6; ++round) {
    std::string text;
    while (text.size() < 64 * 1024) {
      // Runs of one line too: a repeat is found through the last slot, not the hash.
      const std::string& line = lines[rng() % lines.size()];
      const uint32_t copies = rng() % 4 == 0 ? 2 + rng() % 20 : 1;
      for (uint32_t c = 0; c < copies; ++c) text += line;
      if (rng() % 5 == 0) text += "line " + std::to_string(rng() % 1000) + " of " + std::to_string(rng()) + "\n";
      // A key that repeats with a value that does not: the key's count comes from the memo.
      if (rng() % 4 == 0) {
        text += "        \"field_" + std::to_string(rng() % 20) + "\": \"value " + std::to_string(rng()) + "\",\n";
      }
    }
    if (round % 2 == 1) text += "no final newline " + std::to_string(round);
    const uint64_t want = O200kEncode(text).size();
    EXPECT_EQ(counter.Count(text), want) << "round " << round;
    EXPECT_EQ(counter.Count(text), want) << "round " << round << ", warm memo";
    uint64_t on_thread = 0;
    std::thread([&] { on_thread = counter.Count(text); }).join();
    EXPECT_EQ(on_thread, want) << "round " << round << ", fresh thread";
  }
  // Random lines over the characters that decide piece boundaries around an LF (white space
  // of every kind, '/', punctuation, letters, digits, a non-ASCII space and letter), a pool
  // of them repeated so that the memo hits.
  const std::vector<std::string> alphabet = {" ",  " ", "\t", "\n", "\r", "/",        ",",        "{",
                                             "\"", "a", "B",  "7",  "'s", "\xC2\xA0", "\xC3\xA9", "\x0B"};
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> pool;
    for (int k = 0; k < 30; ++k) {
      std::string line;
      const size_t len = 1 + rng() % 24;
      for (size_t c = 0; c < len; ++c) line += alphabet[rng() % alphabet.size()];
      pool.push_back(line + "\n");
    }
    std::string text;
    while (text.size() < 8 * 1024) text += pool[rng() % pool.size()];
    EXPECT_EQ(counter.Count(text), O200kEncode(text).size()) << "random round " << round;
  }
  // More distinct segment bytes than the memo's arena (1 MiB): it is cleared and refilled.
  std::string big;
  for (int i = 0; big.size() < 3 * 1024 * 1024; ++i) {
    big += "distinct line number " + std::to_string(i) + " with payload " + std::to_string(rng()) + "\n";
    if (i % 3 == 0) big += lines[0];
  }
  EXPECT_EQ(counter.Count(big), O200kEncode(big).size());
}

TEST(O200k, LongPiecesMergeLikeShortOnes) {
  // Pieces over the small-merge limit take the heap path; both must agree with the vectors'
  // behaviour (checked there for 240 'x' and "abab…"); here: idempotent counting of repeats.
  const TokenCounter& counter = O200k();
  const std::string xs(1000, 'x');
  EXPECT_EQ(counter.Count(xs), O200kEncode(xs).size());
  std::string mixed;
  for (int k = 0; k < 300; ++k) mixed += static_cast<char>('a' + (k * 7) % 26);
  const std::vector<uint32_t> ids = O200kEncode(mixed);
  EXPECT_EQ(counter.Count(mixed), ids.size());
  EXPECT_LT(ids.size(), mixed.size());
}

TEST(O200k, CorruptVocabularyIsRejected) {
  std::string vocab(internal::EmbeddedO200kVocabulary());
  auto good = internal::O200kTokenizer::Create(vocab);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ((*good)->vocabulary_size(), 199998u);
  vocab[vocab.size() / 2] ^= 1;
  auto bad = internal::O200kTokenizer::Create(vocab);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  auto empty = internal::O200kTokenizer::Create("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kCorruption);
}

// The tables embedded at build time are exactly what parsing the embedded vocabulary gives
// (so the default counter, which uses them, is the verified vocabulary), and the class tables
// are ICU's.
TEST(O200k, EmbeddedTablesAreTheParsedVocabulary) {
  auto parsed = internal::O200kTokenizer::Create(internal::EmbeddedO200kVocabulary());
  ASSERT_TRUE(parsed.ok());
  std::string tables;
  (*parsed)->SerializeTables(&tables);
  EXPECT_TRUE(tables == internal::EmbeddedO200kTables())
      << "sizes " << tables.size() << " vs " << internal::EmbeddedO200kTables().size();
  const internal::CodePointClasses built = internal::CodePointClasses::Build();
  const internal::CodePointClasses& embedded = internal::CodePointClasses::Get();
  ASSERT_EQ(built.leaf_bytes(), embedded.leaf_bytes());
  EXPECT_EQ(std::memcmp(built.leaves(), embedded.leaves(), built.leaf_bytes()), 0);
  EXPECT_EQ(std::memcmp(built.index(), embedded.index(), internal::CodePointClasses::kBlocks * sizeof(uint16_t)), 0);
  for (uint32_t cp : {0x41u, 0x61u, 0x20u, 0x0Au, 0x2Fu, 0x4E2Du, 0x0301u, 0x1F600u, 0x10FFFFu}) {
    EXPECT_EQ(built.Of(cp), embedded.Of(cp)) << cp;
  }
  auto viewed = internal::O200kTokenizer::FromTables(tables);
  ASSERT_TRUE(viewed.ok()) << viewed.status().ToString();
  const std::string text = "Hello, world! naïve café 中文 1234567 " + std::string(5000, 'q') + "xyz";
  std::vector<uint32_t> a, b;
  (*parsed)->Encode(text, &a);
  (*viewed)->Encode(text, &b);
  EXPECT_EQ(a, b);
  EXPECT_EQ((*viewed)->vocabulary_size(), 199998u);
}

TEST(O200k, CorruptTablesAreRejected) {
  const std::string good(internal::EmbeddedO200kTables());
  ASSERT_TRUE(internal::O200kTokenizer::FromTables(good).ok());
  std::vector<std::string> bad = {"",  good.substr(0, 63), good.substr(0, good.size() - 1), good + "x", good, good,
                                  good};
  bad[4][0] ^= 1;       // magic
  bad[5][8] ^= 1;       // version
  bad[6][20] = '\x03';  // slot_count (bytes 20..23) no longer a power of two
  for (size_t k = 0; k < bad.size(); ++k) {
    auto r = internal::O200kTokenizer::FromTables(bad[k]);
    ASSERT_FALSE(r.ok()) << k;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << k;
  }
}

TEST(ApproxTokens, FollowsTheFallbackFormula) {
  const TokenCounter& approx = ApproxTokenCounter();
  EXPECT_EQ(approx.name(), "approx-chars/4");
  EXPECT_EQ(ApproxTokenCount(""), 0u);
  EXPECT_EQ(ApproxTokenCount("a"), 1u);
  EXPECT_EQ(ApproxTokenCount("abc"), 1u);
  EXPECT_EQ(ApproxTokenCount("abcdefg"), 1u);
  EXPECT_EQ(ApproxTokenCount("abcdefgh"), 2u);
  EXPECT_EQ(approx.Count(std::string(4001, 'z')), 1000u);
  // Code points, not bytes: eight 3-byte characters are two tokens.
  std::string euros;
  for (int k = 0; k < 8; ++k) euros += "\xE2\x82\xAC";
  EXPECT_EQ(ApproxTokenCount(euros), 2u);
  // Every ill-formed byte is one code point, continuation bytes included.
  EXPECT_EQ(ApproxTokenCount("\x80\x80\x80\x80\x80\x80\x80\x80"), 2u);
  EXPECT_EQ(ApproxTokenCount("\xE2\x82"
                             "ab\xE2\x82"
                             "cd"),
            2u);  // 8 code points
  EXPECT_EQ(internal::CountCodePoints("\xE2\x82"
                                      "ab"),
            4u);
}

TEST(StreamingTokenCount, MatchesWholeCountForAnyChunking) {
  const TokenCounter& counter = O200k();
  const std::string text = VariedText();
  const uint64_t whole = counter.Count(text);
  EXPECT_EQ(StreamCount(counter, {text}), std::to_string(whole));
  testing::ExpectChunkingInvariant(
      text, [&](const std::vector<std::string_view>& pieces) { return StreamCount(counter, pieces); });
  for (uint64_t seed = 2; seed < 6; ++seed) {
    testing::ExpectChunkingInvariant(
        text, [&](const std::vector<std::string_view>& p) { return StreamCount(counter, p); }, seed);
  }
}

TEST(StreamingTokenCount, MatchesWholeCountOnVectorsAndRandomText) {
  const TokenCounter& counter = O200k();
  std::string all;
  for (const Vector& v : LoadVectors()) all += v.text + "\n";
  EXPECT_EQ(StreamCount(counter, testing::RandomSplit(all, 7, 5)), std::to_string(counter.Count(all)));
  // Random soup of the characters that matter at line starts.
  const std::vector<std::string> atoms = {"\n",
                                          "\r\n",
                                          "\r",
                                          " ",
                                          "\t",
                                          "/",
                                          "//",
                                          "x",
                                          "Ab",
                                          "1",
                                          ";",
                                          "\xC2\xA0",
                                          "\xE3\x80\x80",
                                          "\xFF",
                                          "\x80",
                                          "\xE2\x82",
                                          "é",
                                          "'s",
                                          "\xF0\x9F\x91\x8D",
                                          "\xCC\x81"};
  std::mt19937 rng(42);
  for (int round = 0; round < 30; ++round) {
    std::string t;
    const int n = 50 + static_cast<int>(rng() % 300);
    for (int k = 0; k < n; ++k) t += atoms[rng() % atoms.size()];
    const std::string expected = std::to_string(counter.Count(t));
    for (size_t max_piece : {1, 2, 5, 17}) {
      EXPECT_EQ(StreamCount(counter, testing::RandomSplit(t, round * 10 + max_piece, max_piece)), expected)
          << "round " << round << " max_piece " << max_piece;
    }
  }
}

TEST(StreamingTokenCount, ApproxTotalsMatchWholeCount) {
  const TokenCounter& approx = ApproxTokenCounter();
  const std::string text = VariedText();
  EXPECT_EQ(StreamCount(approx, {text}), std::to_string(ApproxTokenCount(text)));
  testing::ExpectChunkingInvariant(
      text, [&](const std::vector<std::string_view>& pieces) { return StreamCount(approx, pieces); });
  // Four lines of 3 code points: 12 in all → 3, not 4 × max(1, 0) per chunk.
  EXPECT_EQ(StreamCount(approx, {"ab\n", "cd\n", "ef\n", "gh\n"}), "3");
  EXPECT_EQ(StreamCount(approx, {}), "0");
}

TEST(StreamingTokenCount, CarriesOnlyTheTextAfterTheLastSafeCut) {
  const TokenCounter& counter = O200k();
  std::string log;
  for (int k = 0; k < 2000; ++k) log += "line " + std::to_string(k) + " ok\n  detail\n";
  StreamingTokenCount stream(counter);
  size_t max_carry = 0;
  constexpr size_t kChunk = 100;
  for (size_t pos = 0; pos < log.size(); pos += kChunk) {
    stream.Feed(std::string_view(log).substr(pos, kChunk));
    max_carry = std::max(max_carry, stream.carried_bytes());
  }
  EXPECT_EQ(stream.Finish(), counter.Count(log));
  // At most one chunk plus the unfinished two-line record ("line N ok\n  detail\n").
  EXPECT_LE(max_carry, kChunk + 30);
  // Without any safe cut the carry must grow: one long line.
  StreamingTokenCount one_line(counter);
  const std::string line(5000, 'a');
  for (size_t pos = 0; pos < line.size(); pos += kChunk) one_line.Feed(line.substr(pos, kChunk));
  EXPECT_EQ(one_line.carried_bytes(), line.size());
  EXPECT_EQ(one_line.Finish(), counter.Count(line));
  EXPECT_EQ(one_line.carried_bytes(), 0u);
}

TEST(StreamingTokenCount, IsReusableAfterFinish) {
  StreamingTokenCount stream(O200k());
  stream.Feed("hello\nworld\n");
  const uint64_t first = stream.Finish();
  EXPECT_EQ(first, O200k().Count("hello\nworld\n"));
  stream.Feed("x");
  EXPECT_EQ(stream.Finish(), 1u);
  EXPECT_EQ(stream.Finish(), 0u);
}

TEST(SafeCut, SpecExampleShowsWhySlashAfterLfIsNotSafe) {
  const TokenCounter& counter = O200k();
  const std::string text = "x = 1;\n// c";
  EXPECT_EQ(counter.Count(text), 6u);
  // The ";\n//" piece crosses the LF: cutting there changes the total.
  EXPECT_NE(counter.Count("x = 1;\n") + counter.Count("// c"), counter.Count(text));
  EXPECT_EQ(LastSafeCut(text), 0u);
  EXPECT_EQ(StreamCount(counter, {"x = 1;\n", "// c"}), "6");
}

TEST(SafeCut, FollowsTheRule) {
  EXPECT_EQ(LastSafeCut(""), 0u);
  EXPECT_EQ(LastSafeCut("abc"), 0u);
  EXPECT_EQ(LastSafeCut("a\nb"), 2u);
  EXPECT_EQ(LastSafeCut("a\nb\nc"), 4u);
  EXPECT_EQ(LastSafeCut("a\nb\n"), 2u);    // what follows the final LF is unknown
  EXPECT_EQ(LastSafeCut("a\nb\n c"), 2u);  // whitespace after LF
  EXPECT_EQ(LastSafeCut("a\nb\n\n"), 2u);
  EXPECT_EQ(LastSafeCut("a\nb\n\tc"), 2u);
  EXPECT_EQ(LastSafeCut("a\nb\r\nc"), 5u);
  EXPECT_EQ(LastSafeCut("a\nb\n/c"), 2u);
  EXPECT_EQ(LastSafeCut("a\n\xC2\xA0"), 0u);       // NBSP is White_Space
  EXPECT_EQ(LastSafeCut("a\n\xE3\x80\x80z"), 0u);  // U+3000 is White_Space
  EXPECT_EQ(LastSafeCut("a\n\xE6\x97\xA5"), 2u);   // 日
  EXPECT_EQ(LastSafeCut("a\n\xE6\x97"), 0u);       // cut off: not yet known
  EXPECT_EQ(LastSafeCut("a\n\x80"), 2u);           // ill-formed byte = U+FFFD, a symbol
  EXPECT_EQ(LastSafeCut("a\n\xFF"), 2u);
  EXPECT_EQ(LastSafeCut("a\n}"), 2u);
}

TEST(SafeCut, EverySafeCutIsCountAdditive) {
  const TokenCounter& counter = O200k();
  const std::string text = VariedText();
  const uint64_t whole = counter.Count(text);
  std::set<size_t> cuts;
  for (size_t len = 1; len <= text.size(); ++len) {
    cuts.insert(LastSafeCut(std::string_view(text).substr(0, len)));
  }
  cuts.erase(0);
  const size_t checked = cuts.size();
  for (size_t p : cuts) {
    EXPECT_EQ(counter.Count(text.substr(0, p)) + counter.Count(text.substr(p)), whole) << "cut at " << p;
  }
  EXPECT_GT(checked, 15u);
}

// Count cuts (§7.4 widened to indented lines): the rule on small cases, then additivity at
// every cut LastCountCut finds in every prefix of random text made of the fragments that
// matter around an LF (indentation of spaces and tabs, CR, blank lines, '/', White_Space
// other than space and tab, letters, digits, punctuation, contractions, non-ASCII).
TEST(CountCut, FollowsTheWidenedRule) {
  EXPECT_EQ(LastCountCut("a\nb\n c"), 4u);  // indentation: a cut where LastSafeCut has none
  EXPECT_EQ(LastSafeCut("a\nb\n c"), 2u);
  EXPECT_EQ(LastCountCut("a\nb\n\t  c"), 4u);
  EXPECT_EQ(LastCountCut("a\nb\n  /c"), 4u);   // '/' after indentation is fine
  EXPECT_EQ(LastCountCut("a\nb\n/c"), 2u);     // '/' right after the LF is not
  EXPECT_EQ(LastCountCut("a\nb\n   "), 2u);    // the run reaches the end: unknown
  EXPECT_EQ(LastCountCut("a\nb\n  \nc"), 7u);  // a blank line: only after its LF
  EXPECT_EQ(LastCountCut("a\nb\n \r\nc"), 7u);
  EXPECT_EQ(LastCountCut("a\nb\n \x0B c"), 2u);    // other White_Space ends the run
  EXPECT_EQ(LastCountCut("a\nb\n \xC3\xA9"), 2u);  // non-ASCII after a run: not taken
  EXPECT_EQ(LastCountCut("a\nb\n\xC3\xA9"), 4u);   // §7.4 itself
  EXPECT_EQ(LastCountCut("a\n\xE6\x97"), 0u);
  EXPECT_EQ(LastCountCut(""), 0u);
}

std::string IndentedRandomText(uint32_t seed, size_t fragments) {
  static const std::vector<std::string> kFragments = {"\n",
                                                      "\n",
                                                      "\n",
                                                      "\r\n",
                                                      " ",
                                                      "  ",
                                                      "    ",
                                                      "\t",
                                                      "/",
                                                      "//",
                                                      "x",
                                                      "word",
                                                      "Word",
                                                      "'s",
                                                      "'LL",
                                                      "123",
                                                      "4567",
                                                      ",",
                                                      "{",
                                                      "}",
                                                      "\"k\": ",
                                                      "-",
                                                      ".",
                                                      "\xC2\xA0",
                                                      "\xE3\x80\x80",
                                                      "\x0B",
                                                      "\xC3\xA9t\xC3\xA9",
                                                      "\xE6\x97\xA5",
                                                      "!",
                                                      "?!",
                                                      "#"};
  std::mt19937 rng(seed);
  std::string t;
  for (size_t i = 0; i < fragments; ++i) t += kFragments[rng() % kFragments.size()];
  return t;
}

TEST(CountCut, EveryCountCutIsCountAdditive) {
  const TokenCounter& counter = O200k();
  size_t checked = 0;
  size_t widened = 0;  // cuts LastSafeCut would not take
  for (uint32_t seed = 0; seed < 60; ++seed) {
    const std::string text = seed == 0 ? VariedText() : IndentedRandomText(seed, 200);
    const uint64_t whole = counter.Count(text);
    std::set<size_t> cuts;
    for (size_t len = 1; len <= text.size(); ++len) cuts.insert(LastCountCut(std::string_view(text).substr(0, len)));
    cuts.erase(0);
    for (size_t p : cuts) {
      ++checked;
      widened += text[p] == ' ' || text[p] == '\t';
      ASSERT_EQ(counter.Count(text.substr(0, p)) + counter.Count(text.substr(p)), whole)
          << "seed " << seed << " cut at " << p;
      EXPECT_EQ(O200kEncode(text.substr(0, p)).size() + O200kEncode(text.substr(p)).size(), whole);
    }
  }
  EXPECT_GT(checked, 500u);
  EXPECT_GT(widened, 100u);
}

// Indented JSON: the streaming count carries about one line (it carried everything before
// the widening: every line starts with spaces), equals the whole count for any chunking, and
// counted_tokens() + the count of the carried tail is the count of what was fed.
TEST(StreamingTokenCount, IndentedJsonCarriesAboutOneLine) {
  const TokenCounter& counter = O200k();
  std::string json = "[\n";
  for (int k = 0; k < 3000; ++k) {
    json += "  {\n    \"name\": \"pod-" + std::to_string(k) +
            "\",\n    \"status\": {\n      \"phase\": \"Running\"\n    }\n  },\n";
  }
  json += "  {}\n]\n";
  const uint64_t whole = counter.Count(json);
  StreamingTokenCount stream(counter);
  size_t max_carry = 0;
  constexpr size_t kChunk = 4096;
  for (size_t pos = 0; pos < json.size(); pos += kChunk) {
    stream.Feed(std::string_view(json).substr(pos, kChunk));
    max_carry = std::max(max_carry, stream.carried_bytes());
    const size_t fed = std::min(json.size(), pos + kChunk);
    ASSERT_EQ(stream.counted_tokens() +
                  counter.Count(std::string_view(json).substr(fed - stream.carried_bytes(), stream.carried_bytes())),
              counter.Count(std::string_view(json).substr(0, fed)));
  }
  EXPECT_LE(max_carry, kChunk + 40);
  EXPECT_EQ(stream.Finish(), whole);
  for (size_t max_piece : {1, 7, 100, 5000}) {
    StreamingTokenCount s(counter);
    for (auto piece : testing::RandomSplit(json, 1, max_piece)) s.Feed(piece);
    EXPECT_EQ(s.Finish(), whole) << max_piece;
  }
  StreamingTokenCount dropped(counter);
  dropped.Feed(json.substr(0, 10000));
  dropped.Reset();
  EXPECT_EQ(dropped.carried_bytes(), 0u);
  EXPECT_EQ(dropped.Finish(), 0u);
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

TEST(BackgroundTokenCount, EqualsWholeCountForAnyChunking) {
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    text += "2026-11-02T10:00:" + std::to_string(i % 60) + " INFO [svc] line " + std::to_string(i) +
            (i % 7 ? "\n" : "\r\n// comment  \n");
  }
  const TokenCounter& counter = DefaultTokenCounter();
  uint64_t whole = counter.Count(text);
  for (size_t max_piece : {1, 13, 4096, 1 << 20}) {
    BackgroundTokenCount bg(counter);
    for (auto piece : testing::RandomSplit(text, max_piece, max_piece)) bg.Feed(piece);
    EXPECT_EQ(bg.Finish(), whole) << max_piece;
  }
}

TEST(BackgroundTokenCount, DestructorWithoutFinishDoesNotHang) {
  BackgroundTokenCount bg(DefaultTokenCounter());
  bg.Feed("some text\n");
}

// Issue 15 item 11: pieces over 4 KiB go through the backtracking encoder; ids and counts
// must equal the plain heap merge (the reference, switched on for the comparison) on every
// kind of long piece.
std::vector<uint32_t> ReferenceEncode(std::string_view text) {
  internal::SetO200kBacktrackMergeForTest(false);
  std::vector<uint32_t> ids = O200kEncode(text);
  internal::SetO200kBacktrackMergeForTest(true);
  return ids;
}

// Test inputs: `kind` names a generator, `n` the length in bytes (approximately, for
// multi-byte letters).
std::string Generate(const std::string& kind, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  auto pick = [&](std::string_view alphabet) { return alphabet[rng() % alphabet.size()]; };
  const std::string base64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string words[] = {"Hello", "World", "the",  "HTTP", "Server", "xml",  "Parser",
                               "ing",   "tion",  "QUIC", "ly",   "Über",   "naïve"};
  while (s.size() < n) {
    if (kind == "lower") {
      s += static_cast<char>('a' + rng() % 26);
    } else if (kind == "base64") {
      s += pick(base64);
    } else if (kind == "bytes") {
      s += static_cast<char>(rng() & 0xFF);  // ill-formed bytes become U+FFFD
    } else if (kind == "run") {
      s += static_cast<char>('a' + seed % 26);
    } else if (kind == "period") {
      const size_t period = 1 + seed % 7;
      s += static_cast<char>('a' + (s.size() % period) * 3 % 26);
    } else if (kind == "mixed-case") {
      s += words[rng() % std::size(words)];
    } else if (kind == "digits-letters") {
      s += rng() % 3 == 0 ? static_cast<char>('0' + rng() % 10) : static_cast<char>('a' + rng() % 6);
    } else if (kind == "cjk") {
      AppendUtf8(0x4E00 + static_cast<uint32_t>(rng() % 400), &s);
    } else if (kind == "cyrillic") {
      AppendUtf8(0x0430 + static_cast<uint32_t>(rng() % 32), &s);
    } else if (kind == "spaces") {
      s += seed % 2 ? ' ' : "  \t"[rng() % 3];
    } else if (kind == "punct") {
      s += pick("=-_*#~.+");
    } else if (kind == "upper-lower") {
      s += static_cast<char>((s.size() % 9 < 2 ? 'A' : 'a') + rng() % 3);
    } else if (kind == "two-letters") {
      s += rng() % 5 == 0 ? 'b' : 'a';
    } else if (kind == "symbol-runs") {
      // Runs of one symbol (long ones are where the encoder takes the run's token first)
      // between other characters, some of which join the run's neighbours into tokens.
      s.append(1 + rng() % 300, pick("-=*/#\t.~_a"));
      s += std::array<const char*, 6>{"=", "x", "-", "\xC3\xA9", "->", "//"}[rng() % 6];
    } else {
      ADD_FAILURE() << "unknown kind " << kind;
      break;
    }
  }
  return s;
}

const std::vector<std::string>& Kinds() {
  static const std::vector<std::string> kinds = {
      "lower", "base64",   "bytes",       "run",    "period", "mixed-case",  "digits-letters",
      "cjk",   "cyrillic", "two-letters", "spaces", "punct",  "upper-lower", "symbol-runs"};
  return kinds;
}

TEST(O200kLongPieces, BacktrackingEqualsHeapMergeOnEveryPieceLength) {
  // Every piece that is not itself a token goes through the backtracking encoder here, so
  // pieces of 2 bytes up to 20 kB are compared with the heap merge (MergeSmall up to 64).
  internal::SetO200kLongPieceForTest(0);
  const TokenCounter& counter = O200k();
  size_t compared = 0;
  for (const std::string& kind : Kinds()) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      for (size_t n : {1u, 2u, 3u, 5u, 8u, 17u, 40u, 64u, 65u, 129u, 300u, 1000u, 4097u, 20000u}) {
        const std::string in = Generate(kind, n, seed);
        const std::vector<uint32_t> want = ReferenceEncode(in);
        ASSERT_FALSE(want.empty());
        EXPECT_EQ(O200kEncode(in), want) << kind << " seed " << seed << " n " << n;
        EXPECT_EQ(counter.Count(in), want.size()) << kind << " seed " << seed << " n " << n;
        ++compared;
      }
    }
  }
  internal::SetO200kLongPieceForTest(internal::kO200kLongPiece);
  EXPECT_EQ(compared, Kinds().size() * 6 * 14);
}

TEST(O200kLongPieces, BacktrackingEqualsHeapMergeUpToAMebibyte) {
  const TokenCounter& counter = O200k();
  for (const char* kind : {"lower", "cyrillic", "two-letters", "run", "period"}) {
    for (uint64_t seed : {7u, 8u}) {
      const std::string in = Generate(kind, (1u << 20) - seed * 3, seed);
      const std::vector<uint32_t> want = ReferenceEncode(in);
      EXPECT_EQ(O200kEncode(in), want) << kind << " seed " << seed;
      EXPECT_EQ(counter.Count(in), want.size()) << kind << " seed " << seed;
    }
  }
}

TEST(O200kLongPieces, SecondPassKeepsTheResultExact) {
  // With one token kept back, any backtrack over two tokens abandons the first pass and the
  // piece is merged again keeping every token; ids must still equal the heap merge's.
  const uint64_t before = internal::O200kBacktrackRetriesForTest();
  internal::SetO200kBacktrackKeepForTest(1);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (const char* kind : {"lower", "cyrillic", "two-letters"}) {
      const std::string in = Generate(kind, 50000, seed);
      const std::vector<uint32_t> want = ReferenceEncode(in);
      EXPECT_EQ(O200kEncode(in), want) << kind << " seed " << seed;
      EXPECT_EQ(O200k().Count(in), want.size()) << kind << " seed " << seed;
    }
  }
  internal::SetO200kBacktrackKeepForTest(0);
  EXPECT_GT(internal::O200kBacktrackRetriesForTest(), before);
}

// Long runs of one byte: the encoder takes the token such runs merge into first, and into a
// run the token that ends where the run's would (700 ns per byte of '-' before, issue 15 item
// 11). Runs of every ASCII byte, of lengths around the run token's multiples and the 16-byte
// threshold, alone and after neighbours that join their first block (' ' + '-' × 200 starts
// with ' ' + '-' × 64), equal the heap merge; so do runs with a tiny keep, where the second
// pass starts over from frames that came first as a run's token.
TEST(O200kLongPieces, RunsOfEveryAsciiByteEqualTheHeapMerge) {
  internal::SetO200kLongPieceForTest(0);
  const uint64_t steps = internal::O200kRunTokenStepsForTest();
  const uint64_t retries = internal::O200kBacktrackRetriesForTest();
  const TokenCounter& counter = O200k();
  std::mt19937_64 rng(5);
  size_t compared = 0;
  for (const int choice : {0, 1, 2}) {
    internal::SetO200kRunTokenForTest(choice);
    for (int c = 1; c < 0x80; ++c) {
      for (const char* before : {"", "x", "=", "a-", "\xC3\xA9", " ", "// "}) {
        for (size_t n : {16u, 31u, 129u, 1000u, 4097u, 9000u + 37u * static_cast<unsigned>(c)}) {
          const std::string in = before + std::string(n, static_cast<char>(c)) + (rng() % 2 ? "=" : "b");
          const std::vector<uint32_t> want = ReferenceEncode(in);
          ASSERT_EQ(O200kEncode(in), want)
              << "byte " << c << " before '" << before << "' n " << n << " choice " << choice;
          ASSERT_EQ(counter.Count(in), want.size()) << "byte " << c << " before '" << before << "' n " << n;
          ++compared;
        }
      }
    }
  }
  internal::SetO200kRunTokenForTest(0);
  EXPECT_EQ(compared, 3u * 127 * 7 * 6);
  EXPECT_GT(internal::O200kRunTokenStepsForTest(), steps + 100000);
  // Pieces of fewer tokens than the encoder keeps back never need its second pass, unless
  // the search lost the merge (the heap merge behind that pass would hide it).
  EXPECT_EQ(internal::O200kBacktrackRetriesForTest(), retries);
  internal::SetO200kLongPieceForTest(internal::kO200kLongPiece);
  const uint64_t retries_before = internal::O200kBacktrackRetriesForTest();
  internal::SetO200kBacktrackKeepForTest(2);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const std::string in = Generate("symbol-runs", 60000, seed);
    const std::vector<uint32_t> want = ReferenceEncode(in);
    EXPECT_EQ(O200kEncode(in), want) << "seed " << seed;
    EXPECT_EQ(counter.Count(in), want.size()) << "seed " << seed;
  }
  internal::SetO200kBacktrackKeepForTest(0);
  EXPECT_GT(internal::O200kBacktrackRetriesForTest(), retries_before);
}

TEST(O200kLongPieces, CountsAreIdenticalAcrossThreadsAndChunkings) {
  const std::string in = Generate("lower", 200000, 21);
  const uint64_t want = ReferenceEncode(in).size();
  std::vector<uint64_t> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] { got[t] = O200k().Count(in); });
  }
  for (auto& th : threads) th.join();
  for (uint64_t g : got) EXPECT_EQ(g, want);
  EXPECT_EQ(StreamCount(O200k(), testing::RandomSplit(in, 3, 5000)), std::to_string(want));
}

// The vocabulary's tokens as byte strings, in rank order (decoded from the tiktoken file).
std::vector<std::string> VocabularyTokens() {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : (c == '/' ? 63 : -1);
  };
  std::vector<std::string> tokens;
  std::istringstream lines{std::string(internal::EmbeddedO200kVocabulary())};
  std::string line;
  while (std::getline(lines, line)) {
    const std::string b64 = line.substr(0, line.find(' '));
    std::string t;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : b64) {
      if (c == '=') break;
      acc = (acc << 6) | static_cast<uint32_t>(value(c));
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        t += static_cast<char>((acc >> bits) & 0xFF);
      }
    }
    tokens.push_back(t);
  }
  return tokens;
}

// The pair check that walks the two tokens' merge-tree spines (with the 3-/4-byte bitmaps
// and the reach of the trie in front of its lookups) against merging the pair's bytes, on
// pairs of vocabulary tokens: random ones, and pairs that stand next to each other in text
// (split at every place where both sides are tokens), so that both answers occur often.
TEST(O200kLongPieces, SpineCheckEqualsMergeCheckOnTokenPairs) {
  auto tokenizer = internal::O200kTokenizer::FromTables(internal::EmbeddedO200kTables());
  ASSERT_TRUE(tokenizer.ok());
  const internal::O200kTokenizer& t = **tokenizer;
  const std::vector<std::string> vocab = VocabularyTokens();
  ASSERT_EQ(vocab.size(), t.vocabulary_size());
  const std::set<std::string> is_token(vocab.begin(), vocab.end());
  size_t walked_count = 0;
  size_t compatible = 0;
  size_t incompatible = 0;
  auto check = [&](const std::string& a, const std::string& b) {
    bool walked = false;
    bool unused = false;
    const bool by_spines = t.PairCompatibleForTest(a, b, true, &walked);
    const bool by_merge = t.PairCompatibleForTest(a, b, false, &unused);
    EXPECT_EQ(by_spines, by_merge) << "[" << a << "] [" << b << "]";
    if (a.size() <= 64 && b.size() <= 64) {
      EXPECT_TRUE(walked) << "[" << a << "] [" << b << "]";
    }
    walked_count += walked ? 1 : 0;
    (by_merge ? compatible : incompatible) += 1;
  };
  std::mt19937_64 rng(5);
  for (int k = 0; k < 200000; ++k) check(vocab[rng() % vocab.size()], vocab[rng() % vocab.size()]);
  // The same token on both sides (the spines meet equal ranks), and doubled short tokens
  // next to a token that starts or ends with them.
  for (const std::string& v : vocab) check(v, v);
  for (size_t k = 0; k < vocab.size(); k += 7) {
    const std::string& v = vocab[k];
    for (size_t cut = 1; cut < v.size() && cut <= 4; ++cut) {
      const std::string head = v.substr(0, cut);
      const std::string tail = v.substr(v.size() - cut);
      if (is_token.count(head)) check(head, v);
      if (is_token.count(head + head)) check(head + head, v);
      if (is_token.count(tail)) check(v, tail);
      if (is_token.count(tail + tail)) check(v, tail + tail);
    }
  }
  for (const std::string& kind : Kinds()) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const std::string text = Generate(kind, 3000, seed);
      for (size_t b = 0; b < text.size(); ++b) {
        for (size_t m = b + 1; m < text.size() && m - b <= 16; ++m) {
          if (!is_token.count(text.substr(b, m - b))) continue;
          for (size_t e = m + 1; e <= text.size() && e - m <= 16; ++e) {
            if (is_token.count(text.substr(m, e - m))) check(text.substr(b, m - b), text.substr(m, e - m));
          }
        }
      }
    }
  }
  EXPECT_GT(compatible, 100000u);
  EXPECT_GT(incompatible, 100000u);
  EXPECT_GT(walked_count, 300000u);
}

// Every token is found by its bytes, through both lookups the merges use (the filters in
// front of the tables, the prefix filter of tokens of 5 bytes or more among them, must let
// every token through), and strings one byte longer or with the last byte changed are found
// only when they are tokens themselves.
TEST(O200kLookup, EveryTokenIsFoundAndOthersAreNot) {
  auto tokenizer = internal::O200kTokenizer::FromTables(internal::EmbeddedO200kTables());
  ASSERT_TRUE(tokenizer.ok());
  const internal::O200kTokenizer& t = **tokenizer;
  const std::vector<std::string> vocab = VocabularyTokens();
  std::unordered_map<std::string, uint32_t> rank_of;
  for (size_t r = 0; r < vocab.size(); ++r) rank_of.emplace(vocab[r], static_cast<uint32_t>(r));
  auto want = [&](const std::string& s) {
    auto it = rank_of.find(s);
    return it == rank_of.end() ? UINT32_MAX : it->second;
  };
  size_t others = 0;
  for (size_t r = 0; r < vocab.size(); ++r) {
    const std::string& v = vocab[r];
    for (bool split : {false, true}) {
      ASSERT_EQ(t.RankForTest(v, split), r) << "[" << v << "] split " << split;
      const std::string longer = v + v.substr(0, 1);
      const std::string changed = v.substr(0, v.size() - 1) + static_cast<char>(v.back() ^ 0x01);
      EXPECT_EQ(t.RankForTest(longer, split), want(longer)) << "[" << longer << "]";
      EXPECT_EQ(t.RankForTest(changed, split), want(changed)) << "[" << changed << "]";
      others += want(longer) == UINT32_MAX ? 1 : 0;
    }
  }
  EXPECT_GT(others, 300000u);
}

// The encoder's table of pair-check answers for tokens of up to 2 bytes (filled on first use,
// then read): every pair of single bytes and random pairs of such tokens, each asked twice
// through the table (the second answer read back from it), against merging the pair's bytes.
TEST(O200kLongPieces, ShortPairTableEqualsMergeCheck) {
  auto tokenizer = internal::O200kTokenizer::FromTables(internal::EmbeddedO200kTables());
  ASSERT_TRUE(tokenizer.ok());
  const internal::O200kTokenizer& t = **tokenizer;  // its own index: the table starts empty
  std::vector<std::string> shorts;
  for (const std::string& v : VocabularyTokens()) {
    if (v.size() <= 2) shorts.push_back(v);
  }
  ASSERT_GT(shorts.size(), 4000u);
  size_t compatible = 0;
  size_t incompatible = 0;
  auto check = [&](const std::string& a, const std::string& b) {
    bool in_table = false;
    bool unused = false;
    const bool by_table = t.PairCompatibleByTableForTest(a, b, &in_table);
    EXPECT_TRUE(in_table) << "[" << a << "] [" << b << "]";
    const bool by_merge = t.PairCompatibleForTest(a, b, false, &unused);
    EXPECT_EQ(by_table, by_merge) << "[" << a << "] [" << b << "]";
    (by_merge ? compatible : incompatible) += 1;
  };
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) check(std::string(1, static_cast<char>(a)), std::string(1, static_cast<char>(b)));
  }
  std::mt19937_64 rng(11);
  for (int k = 0; k < 200000; ++k) check(shorts[rng() % shorts.size()], shorts[rng() % shorts.size()]);
  EXPECT_GT(compatible, 100000u);
  EXPECT_GT(incompatible, 10000u);
}

// The encoder on every piece, with and without that table, against the heap merge: texts of
// short tokens, counted twice (the second time mostly from the table).
TEST(O200kLongPieces, EncoderEqualsHeapMergeWithAndWithoutTheShortPairTable) {
  internal::SetO200kLongPieceForTest(0);
  for (bool table : {true, false}) {
    internal::SetO200kShortPairsForTest(table);
    for (const char* kind : {"lower", "two-letters", "spaces", "punct", "period", "base64"}) {
      const std::string in = Generate(kind, 30000, 3);
      const size_t want = ReferenceEncode(in).size();
      EXPECT_EQ(O200k().Count(in), want) << kind << " table " << table;
      EXPECT_EQ(O200k().Count(in), want) << kind << " table " << table << ", again";
    }
  }
  internal::SetO200kShortPairsForTest(true);
  internal::SetO200kLongPieceForTest(internal::kO200kLongPiece);
}

TEST(O200kLongPieces, EncoderEqualsHeapMergeWithThePairCheckByMerging) {
  // The same comparison as BacktrackingEqualsHeapMergeOnEveryPieceLength, with the encoder
  // checking every pair by merging its bytes (the path of tokens it cannot walk).
  internal::SetO200kLongPieceForTest(0);
  internal::SetO200kSpineCheckForTest(false);
  for (const std::string& kind : Kinds()) {
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      for (size_t n : {2u, 17u, 65u, 300u, 4097u}) {
        const std::string in = Generate(kind, n, seed);
        EXPECT_EQ(O200kEncode(in), ReferenceEncode(in)) << kind << " seed " << seed << " n " << n;
      }
    }
  }
  internal::SetO200kSpineCheckForTest(true);
  internal::SetO200kLongPieceForTest(internal::kO200kLongPiece);
}

// Pieces of 65 bytes to 4 KiB go to the backtracking encoder once the process has its index
// (or has heap-merged 1 MiB of them): ids and counts against the heap merge, on words of
// random letters between apostrophes and spaces, after a long piece has built the index.
TEST(O200kLongPieces, MediumPiecesOnTheEncoderEqualTheHeapMerge) {
  const TokenCounter& counter = O200k();
  EXPECT_GT(counter.Count(Generate("lower", 5000, 1)), 0u);  // a long piece: the index exists
  std::mt19937_64 rng(21);
  for (int round = 0; round < 20; ++round) {
    std::string in;
    while (in.size() < 30000) {
      in += round % 2 == 0 ? "'" : " ";
      const size_t len = 60 + rng() % (round < 10 ? 200 : 4000);
      for (size_t k = 0; k < len; ++k) in += static_cast<char>('a' + rng() % (round % 3 == 0 ? 4 : 26));
    }
    const std::vector<uint32_t> reference = ReferenceEncode(in);
    EXPECT_EQ(O200kEncode(in), reference) << round;
    EXPECT_EQ(counter.Count(in), reference.size()) << round;
  }
}

// The stack merge of pieces up to 64 parts (slots, an alive mask, the smallest packed key)
// against the heap merge alone, on pieces with many equal pairs (ties go leftmost), letters
// with apostrophes, digits, units (U+FFFD, Cyrillic, CJK) and random bytes.
std::vector<uint32_t> HeapOnlyEncode(std::string_view text) {
  internal::SetO200kSmallMergeForTest(false);
  internal::SetO200kBacktrackMergeForTest(false);
  std::vector<uint32_t> ids = O200kEncode(text);
  internal::SetO200kBacktrackMergeForTest(true);
  internal::SetO200kSmallMergeForTest(true);
  return ids;
}

// Both variants of the stack merge, the AVX2 one (where the processor has it) and the portable
// one, against the heap merge.
class O200kSmallMergeVariants : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !internal::O200kHasSimdMergeForTest()) GTEST_SKIP() << "no AVX2 variant here";
    internal::SetO200kSimdForTest(GetParam());
  }
  void TearDown() override { internal::SetO200kSimdForTest(true); }
};

TEST_P(O200kSmallMergeVariants, StackMergeEqualsHeapMerge) {
  const TokenCounter& counter = O200k();
  const std::vector<std::string> alphabets = {"ab",
                                              "aab",
                                              "abc'",
                                              "abcdefghijklmnopqrstuvwxyz'",
                                              "xyzw",
                                              "0123456789",
                                              " \t\n",
                                              "=-*#._",
                                              "Ab",
                                              "eE",
                                              "\xEF\xBF\xBD",
                                              "\xD0\xB0\xD0\xB1\xD0\xB2\xD1\x8F",
                                              "\xE4\xB8\x80\xE4\xB8\x8A\xE5\xA4\xA7",
                                              "\x80\xC3\xA9\xFF\xE2"};
  std::mt19937_64 rng(1117);
  size_t compared = 0;
  for (int round = 0; round < 400; ++round) {
    std::string in;
    const std::string& alphabet = alphabets[round % alphabets.size()];
    const std::string& other = alphabets[rng() % alphabets.size()];
    while (in.size() < 3000) {
      const size_t len = 1 + rng() % (round % 4 == 0 ? 200 : 70);
      in += rng() % 3 == 0 ? "'" : " ";
      for (size_t k = 0; k < len; ++k) {
        const std::string& from = rng() % 8 == 0 ? other : alphabet;
        in += from[rng() % from.size()];
      }
    }
    const std::vector<uint32_t> reference = HeapOnlyEncode(in);
    ASSERT_EQ(O200kEncode(in), reference) << round;
    EXPECT_EQ(counter.Count(in), reference.size()) << round;
    ++compared;
  }
  EXPECT_EQ(compared, 400u);
}

INSTANTIATE_TEST_SUITE_P(O200kSmallMerge, O200kSmallMergeVariants, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Avx2" : "Portable"; });

TEST(O200kLongPieces, SixteenMebibyteRunCountsExactlyAndStreams) {
  // One 16 MiB run of a letter is one pre-token: the count equals the plain heap merge's,
  // and streaming it in random chunks (down to 1 byte at the start) gives the same total.
  const TokenCounter& counter = O200k();
  const std::string run(16u << 20, 'a');
  internal::SetO200kBacktrackMergeForTest(false);
  const uint64_t reference = counter.Count(run);
  internal::SetO200kBacktrackMergeForTest(true);
  // The switch makes the count start without memos, so the encoder walks the run itself.
  const uint64_t steps = internal::O200kRunTokenStepsForTest();
  EXPECT_EQ(counter.Count(run), reference);
  EXPECT_GT(internal::O200kRunTokenStepsForTest(), steps + 1000000);
  StreamingTokenCount stream(counter);
  std::mt19937_64 rng(11);
  size_t at = 0;
  for (size_t k = 0; at < run.size(); ++k) {
    const size_t n = std::min<size_t>(run.size() - at, k < 64 ? 1 : 1 + rng() % (1u << 20));
    stream.Feed(std::string_view(run).substr(at, n));
    at += n;
  }
  EXPECT_EQ(stream.Finish(), reference);
}

// Text for the byte-pair cuts of counting: random bytes (ill-formed ones become U+FFFD),
// random ASCII with control characters, and mixes of symbols, U+FFFD, letters of several
// scripts, digits, spaces and words, so that pieces hold both places no token spans and
// places some token does.
std::string CutText(int kind, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  const std::vector<std::string> parts = {"\xEF\xBF\xBD",
                                          "?",
                                          "#",
                                          "&&",
                                          "\n",
                                          " ",
                                          "s",
                                          "a",
                                          "n",
                                          "\xE2\x82\xAC",
                                          "\xD0\xBD",
                                          "\xCF\x80",
                                          "\xF0\x9F\x98\x80",
                                          "9",
                                          "'",
                                          "/",
                                          "\x05",
                                          "\xC3\xA9",
                                          "the",
                                          "\t",
                                          "==",
                                          "Ab",
                                          "\xE4\xB8\xAD",
                                          "\xFF",
                                          "\x80",
                                          "_",
                                          "(",
                                          ")"};
  while (s.size() < n) {
    switch (kind) {
      case 0: s += static_cast<char>(rng() & 0xFF); break;
      case 1: s += static_cast<char>(rng() & 0x7F); break;
      case 2: s += parts[rng() % parts.size()]; break;
      default:
        s += rng() % 4 == 0 ? parts[rng() % parts.size()] : std::string(1, static_cast<char>(rng() & 0xFF));
        break;
    }
  }
  return s;
}

// Counting cuts a piece where two neighbouring bytes occur together in no token and sums the
// sides. Against the whole-piece merge (cuts off) and the encoder, on random texts, whole and
// streamed in random chunks down to 1 byte, and with every piece on the backtracking encoder.
TEST(O200kPairCuts, CountsEqualTheWholePieceMerge) {
  const TokenCounter& counter = O200k();
  size_t compared = 0;
  for (int kind = 0; kind < 4; ++kind) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      for (size_t n : {1u, 2u, 3u, 7u, 16u, 61u, 300u, 5000u, 70000u}) {
        const std::string in = CutText(kind, n, seed * 31 + n);
        internal::SetO200kPairCutsForTest(false);
        const uint64_t reference = counter.Count(in);
        internal::SetO200kPairCutsForTest(true);
        EXPECT_EQ(reference, O200kEncode(in).size()) << kind << " " << seed << " " << n;
        EXPECT_EQ(counter.Count(in), reference) << kind << " " << seed << " " << n;
        if (n >= 300) {
          const std::string whole = std::to_string(reference);
          EXPECT_EQ(StreamCount(counter, testing::RandomSplit(in, seed, 1 + seed % 5)), whole);
          EXPECT_EQ(StreamCount(counter, testing::RandomSplit(in, seed + 100, 4096)), whole);
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 4u * 8 * 9);
  // Segments of cut pieces merged by the backtracking encoder too.
  internal::SetO200kLongPieceForTest(0);
  for (int kind = 0; kind < 4; ++kind) {
    const std::string in = CutText(kind, 20000, 77 + static_cast<uint64_t>(kind));
    internal::SetO200kPairCutsForTest(false);
    const uint64_t reference = counter.Count(in);
    internal::SetO200kPairCutsForTest(true);
    EXPECT_EQ(counter.Count(in), reference) << kind;
  }
  internal::SetO200kLongPieceForTest(internal::kO200kLongPiece);
}

// The run memo of Count (issue 15 item 11): a long piece that is one byte's run between at most
// seven bytes each side is counted once per (head, byte, run length, tail). Rules of every
// length from 20 to 32 bytes and 21 more up to 138 after leads of 0-8 bytes (white space, punctuation that joins
// the run's piece, other pieces) and before ends the pre-token pattern keeps in the piece
// (newlines and '/'; several of one length), counted one line at a time (short texts go
// straight to the pieces) in an order that revisits every key from a different line, cold,
// warm and on a fresh thread, must equal the memo-free encoder's. The lines are also checked
// to tell the parts of the key apart: some differ only in one tail byte, one head byte or
// their run length by one and have different counts, so a key that dropped any of them would
// count some of them wrongly.
TEST(O200kRunMemo, CountsEqualTheEncoderForEveryHeadRunAndTail) {
  const TokenCounter& counter = O200k();
  const std::vector<std::string> leads = {"",   " ",  "//",      "# ",      "x ",      "\xC3\xA9 ", "1234567",
                                          "=",  " +", "'\"",     "<!--",    "  ==",    " ++++*",    " ++++-*",
                                          "--", " =", " !!!!!!", "!!!!!!!", "!!!!!!=!"};
  const std::vector<std::string> ends = {"",     "\n",      "\r", "/",        "\n\n",     "//",
                                         "\n//", "\r\n///", " x", "\n/\n///", "\n//\n//", "\n\n\n/\n//\n"};
  std::vector<std::string> lines;
  std::vector<size_t> lengths;
  for (size_t n = 20; n <= 140; n += n < 32 ? 1 : 1 + n / 16) lengths.push_back(n);
  for (const char c : std::string("-=*#~_.!+")) {
    for (const std::string& lead : leads) {
      for (const size_t n : lengths) {
        for (const std::string& end : ends) lines.push_back(lead + std::string(n, c) + end);
      }
    }
  }
  std::mt19937 rng(11);
  std::shuffle(lines.begin(), lines.end(), rng);
  std::unordered_map<std::string, size_t> want;
  internal::SetO200kRunMemoForTest(false);
  for (const std::string& line : lines) {
    want[line] = O200kEncode(line).size();
    ASSERT_EQ(counter.Count(line), want[line]) << line;
  }
  internal::SetO200kRunMemoForTest(true);
  auto check_all = [&](const char* pass) {
    for (const std::string& line : lines) ASSERT_EQ(counter.Count(line), want[line]) << pass << ": " << line;
  };
  check_all("cold");
  check_all("warm");
  std::thread([&] { check_all("fresh thread"); }).join();
  // Whole texts too: the line memo in front, the rules joined by their ends.
  std::string text;
  for (const std::string& line : lines) text += line + '\n';
  const size_t total = O200kEncode(text).size();
  EXPECT_EQ(counter.Count(text), total);
  EXPECT_EQ(StreamCount(counter, testing::RandomSplit(text, 3, 1)), std::to_string(total));
  // The lines tell each part of the key apart: pairs of lines in the data that differ only in
  // the last tail byte, the first head byte or the run length, with different counts.
  size_t tails = 0, heads = 0, runs = 0;
  for (const auto& [line, count] : want) {
    std::string other = line;
    if (!line.empty() && (line.back() == '\n' || line.back() == '/')) {
      other.back() = line.back() == '\n' ? '/' : '\n';
      tails += want.count(other) > 0 && want[other] != count;
    }
    if (line.size() > 2 && line[0] == ' ' && (line[1] == '=' || line[1] == '+')) {
      other = line;
      other[1] = line[1] == '=' ? '+' : '=';
      heads += want.count(other) > 0 && want[other] != count;
    }
  }
  for (const char c : std::string("-=*#~_.!+")) {
    for (size_t i = 0; i + 1 < lengths.size(); ++i) {
      if (lengths[i + 1] != lengths[i] + 1) continue;
      const std::string a = " " + std::string(lengths[i], c), b = " " + std::string(lengths[i + 1], c);
      runs += want.count(a) > 0 && want.count(b) > 0 && want[a] != want[b];
    }
  }
  EXPECT_GT(tails, 0u);
  EXPECT_GT(heads, 0u);
  EXPECT_GT(runs, 0u);
}

// Merge units: a merge may start with a unit code point (U+FFFD among them) as one part
// instead of its bytes. Against the merge from single bytes (units off) on texts made of the
// units themselves, vocabulary tokens that hold a unit's bytes or end or start with part of
// them (the tokens the unit rule is about), other letters and random bytes, in pieces short
// (stack merge), medium (heap merge) and long (backtracking encoder, whose pair check merges
// too); ids compared, not only counts.
TEST(O200kMergeUnits, MergingFromUnitsEqualsMergingFromBytes) {
  auto tokenizer = internal::O200kTokenizer::FromTables(internal::EmbeddedO200kTables());
  ASSERT_TRUE(tokenizer.ok());
  std::vector<std::string> units;
  for (uint32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp < 0xE000) continue;
    if ((*tokenizer)->IsMergeUnitForTest(cp)) AppendUtf8(cp, &units.emplace_back());
  }
  EXPECT_TRUE((*tokenizer)->IsMergeUnitForTest(0xFFFD));
  EXPECT_FALSE((*tokenizer)->IsMergeUnitForTest('a'));
  EXPECT_EQ(units.size(), 301u);  // o200k_base (docs/DECISIONS.md, "Merge units")
  // Tokens that touch a unit's bytes: hold them, or end or start with a part of them.
  std::vector<std::string> touching;
  for (const std::string& t : VocabularyTokens()) {
    for (const std::string& u : units) {
      bool touches = t.size() > u.size() && t.find(u) != std::string::npos;
      for (size_t k = 1; k < u.size() && !touches; ++k) {
        touches = (t.size() > k && t.compare(t.size() - k, k, u, 0, k) == 0) ||
                  (t.size() > u.size() - k && t.compare(0, u.size() - k, u, k, u.size() - k) == 0);
      }
      if (touches) {
        touching.push_back(t);
        break;
      }
    }
  }
  ASSERT_GT(touching.size(), 1000u);
  auto make = [&](int kind, size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s;
    while (s.size() < n) {
      const uint64_t r = rng() % 10;
      if (kind == 0 || r < 4) {
        s += units[rng() % units.size()];
      } else if (r < 7) {
        s += touching[rng() % touching.size()];
      } else if (r < 8) {
        s += static_cast<char>(rng() & 0xFF);
      } else if (r < 9) {
        s += " \nae.,?-_("[rng() % 11];
      } else {
        AppendUtf8(0x0400 + static_cast<uint32_t>(rng() % 0x1000), &s);
      }
    }
    return s;
  };
  size_t compared = 0;
  for (size_t long_piece : {internal::kO200kLongPiece, size_t{0}}) {
    internal::SetO200kLongPieceForTest(long_piece);
    for (int kind = 0; kind < 2; ++kind) {
      for (uint64_t seed = 1; seed <= 6; ++seed) {
        for (size_t n : {2u, 5u, 20u, 63u, 64u, 65u, 150u, 193u, 700u, 5000u, 30000u}) {
          const std::string in = make(kind, n, seed * 1000 + n);
          internal::SetO200kUnitsForTest(false);
          const std::vector<uint32_t> reference = O200kEncode(in);
          const uint64_t reference_count = O200k().Count(in);
          internal::SetO200kUnitsForTest(true);
          EXPECT_EQ(reference_count, reference.size());
          EXPECT_EQ(O200kEncode(in), reference) << kind << " " << seed << " " << n;
          EXPECT_EQ(O200k().Count(in), reference_count) << kind << " " << seed << " " << n;
          ++compared;
        }
      }
    }
  }
  internal::SetO200kLongPieceForTest(internal::kO200kLongPiece);
  EXPECT_EQ(compared, 2u * 2 * 6 * 11);
}

// The cut table holds exactly the byte pairs that occur inside some token: a place between
// bytes a, b with the bit clear is spanned by no token, and every pair some token holds is
// set (a missing one would cut where a merge may join).
TEST(O200kPairCuts, TableIsTheVocabularysBytePairs) {
  auto tokenizer = internal::O200kTokenizer::FromTables(internal::EmbeddedO200kTables());
  ASSERT_TRUE(tokenizer.ok());
  std::vector<bool> in_token(1u << 16);
  for (const std::string& t : VocabularyTokens()) {
    for (size_t k = 1; k < t.size(); ++k) {
      in_token[(static_cast<uint32_t>(static_cast<uint8_t>(t[k - 1])) << 8) | static_cast<uint8_t>(t[k])] = true;
    }
  }
  size_t set = 0;
  for (uint32_t pair = 0; pair < (1u << 16); ++pair) {
    const bool got = (*tokenizer)->PairInTokenForTest(static_cast<uint8_t>(pair >> 8), static_cast<uint8_t>(pair));
    EXPECT_EQ(got, in_token[pair]) << pair;
    set += got ? 1 : 0;
  }
  EXPECT_EQ(set, 10439u);
}

// Text with ill-formed bytes is sanitized and counted in blocks that end at line-memo cuts.
// Against the encoder (which sanitizes the whole text at once) with blocks of 1 byte up to the
// default, on random bytes with line breaks followed by every kind of byte that decides a cut
// (spaces, tabs, '/', a letter, an ill-formed byte, a non-ASCII letter, another LF), and on
// text without any cut.
TEST(O200kPairCuts, SanitizedBlocksCountLikeTheWholeText) {
  const TokenCounter& counter = O200k();
  const std::vector<std::string> after = {" ",        "\t", "  \t", "/", " /",       "a", "\xFF",         "\x80",
                                          "\xC3\xA9", "\n", "\r",   "{", "\xE2\x82", "7", "\xEF\xBF\xBD", ""};
  std::mt19937_64 rng(19);
  for (int round = 0; round < 24; ++round) {
    std::string text;
    const size_t n = round % 4 == 3 ? 300000 : 1 + rng() % 5000;
    while (text.size() < n) {
      if (rng() % 9 == 0) {
        text += "\n" + after[rng() % after.size()];
      } else {
        text += CutText(static_cast<int>(rng() % 4), 1 + rng() % 12, rng());
      }
    }
    const uint64_t want = O200kEncode(text).size();
    for (size_t block : {size_t{1}, size_t{7}, size_t{100}, size_t{0}}) {
      internal::SetO200kSanitizeBlockForTest(block);
      EXPECT_EQ(counter.Count(text), want) << "round " << round << " block " << block;
    }
    internal::SetO200kSanitizeBlockForTest(0);
    EXPECT_EQ(StreamCount(counter, testing::RandomSplit(text, static_cast<uint64_t>(round), 1 + round % 7)),
              std::to_string(want));
  }
  // No cut at all (no LF): one block, however large.
  const std::string no_cut = CutText(0, 200000, 5);
  std::string flat = no_cut;
  std::replace(flat.begin(), flat.end(), '\n', 'x');
  internal::SetO200kSanitizeBlockForTest(1);
  EXPECT_EQ(counter.Count(flat), O200kEncode(flat).size());
  internal::SetO200kSanitizeBlockForTest(0);
}

}  // namespace
}  // namespace caveman
