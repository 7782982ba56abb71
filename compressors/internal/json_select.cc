#include "compressors/internal/json_select.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include <re2/re2.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compressors/internal/bm25.h"
#include "compressors/internal/redundancy.h"
#include "stream/check.h"
#include "stream/bits.h"

namespace caveman::internal {
namespace {

constexpr std::string_view kLongS = "\xC5\xBF";       // U+017F folds to 's' under (?i)
constexpr std::string_view kKelvin = "\xE2\x84\xAA";  // U+212A folds to 'k' under (?i)

constexpr std::string_view kErrorWords[] = {"error", "errors", "exception", "failed",  "failure", "critical", "fatal",
                                            "crash", "panic",  "abort",     "timeout", "denied",  "rejected"};
constexpr std::string_view kPreservedKeys[] = {"error",      "errors",      "message", "msg",       "stack",
                                               "stacktrace", "stack_trace", "trace",   "traceback", "exception",
                                               "reason",     "detail",      "details", "warning",   "warnings"};

const RE2& ErrorWordRe() {
  static const RE2 re(
      "(?i)\\b(error|errors|exception|failed|failure|critical|fatal|crash|panic|abort|timeout|"
      "denied|rejected)\\b");
  return re;
}

inline bool IsWordByte(unsigned char c) {
  return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c == '_';
}

bool EqualsLowerAscii(std::string_view run, std::string_view word) {
  if (run.size() != word.size()) return false;
  for (size_t i = 0; i < run.size(); ++i) {
    char c = run[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != word[i]) return false;
  }
  return true;
}

uint64_t HashBytes(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Shape of an object element: its key set with the kinds of the values. 0 = no shape.
uint64_t ShapeOf(const JsonTree& t, JsonTree::NodeId e) {
  if (t.kind(e) != JsonKind::kObject || t.size(e) == 0) return 0;
  uint64_t h = 1469598103934665603ULL;
  for (uint32_t i = 0; i < t.size(e); ++i) {
    h = HashBytes(h, t.key(e, i));
    JsonKind k = t.kind(t.member_value(e, i));
    if (k == JsonKind::kTrue) k = JsonKind::kFalse;  // one kind: boolean
    h ^= 0x100u + static_cast<unsigned>(k);
    h *= 1099511628211ULL;
  }
  return h | 1;
}

struct PathSeries {
  std::vector<uint32_t> index;
  std::vector<double> values;
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

bool ParseDouble(std::string_view lit, double* out) {
  const char* b = lit.data();
  const char* e = b + lit.size();
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(*out);
}

double Mean(const double* v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += v[i];
  return s / static_cast<double>(n);
}

double MadOf(const double* v, size_t n) { return Mad(std::vector<double>(v, v + n)); }

// Whether the word run s[0, len) is one of kErrorWords, ASCII case-insensitively.
inline bool IsErrorRun(const unsigned char* s, size_t len) {
  if (len - 5 > 4) return false;  // error words have 5-9 bytes (len < 5 wraps around)
  const char first = static_cast<char>(s[0] | 32);
  std::string_view run(reinterpret_cast<const char*>(s), len);
  for (std::string_view w : kErrorWords) {
    if (w[0] == first && EqualsLowerAscii(run, w)) return true;
  }
  return false;
}

// Bit i set when s[i] is a word byte (IsWordByte), for i < len <= 64.
uint64_t WordByteMask(const unsigned char* s, size_t len) {
  uint64_t m = 0;
  size_t i = 0;
#if defined(__SSE2__)
  if (len == 64) {
    // Letters: (x | 0x20) in 'a'..'z'; digits: x in '0'..'9'; both as signed compares after
    // shifting the range's first byte to -128.
    const __m128i lower_bit = _mm_set1_epi8(0x20);
    const __m128i to_a = _mm_set1_epi8(static_cast<char>(0x80 - 'a'));
    const __m128i to_0 = _mm_set1_epi8(static_cast<char>(0x80 - '0'));
    const __m128i letters = _mm_set1_epi8(static_cast<char>(0x80 + 26));
    const __m128i digits = _mm_set1_epi8(static_cast<char>(0x80 + 10));
    const __m128i underscore = _mm_set1_epi8('_');
    for (; i < 64; i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      const __m128i letter = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(x, lower_bit), to_a), letters);
      const __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(x, to_0), digits);
      const __m128i word = _mm_or_si128(_mm_or_si128(letter, digit), _mm_cmpeq_epi8(x, underscore));
      m |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(word))} << i;
    }
    return m;
  }
#endif
  for (; i < len; ++i) m |= uint64_t{IsWordByte(s[i])} << i;
  return m;
}

}  // namespace

// The runs of word bytes of a text fed 64 bytes at a time, found by the bits where the
// word-byte mask changes; only runs of 5-9 bytes can be error words. HasErrorWord without
// its U+017F branch.
class ErrorWordRuns {
 public:
  explicit ErrorWordRuns(const unsigned char* s) : s_(s) {}
  // w: the word-byte bits of the (up to) 64 bytes at s + base. True when a run that ends in
  // them is an error word.
  bool Feed(size_t base, uint64_t w) {
    uint64_t change = w ^ ((w << 1) | carry_);  // bit i: word-ness differs from byte i-1's
    carry_ = w >> 63;
    while (change != 0) {
      const size_t p = base + static_cast<size_t>(std::countr_zero(change));
      change &= change - 1;
      if (!in_run_) {
        run_start_ = p;
        in_run_ = true;
      } else {
        in_run_ = false;
        if (IsErrorRun(s_ + run_start_, p - run_start_)) return true;
      }
    }
    return false;
  }
  // After the last Feed, n = the text's length: whether a run at its end is an error word.
  bool Finish(size_t n) const { return in_run_ && IsErrorRun(s_ + run_start_, n - run_start_); }

 private:
  const unsigned char* s_;
  size_t run_start_ = 0;
  bool in_run_ = false;
  uint64_t carry_ = 0;  // the last bit of the previous 64 bytes
};

bool HasErrorWord(std::string_view doc) {
  if (doc.find(kLongS) != std::string_view::npos) return RE2::PartialMatch(doc, ErrorWordRe());
  // This runs over the canonical text of every element that CleanSourceFacts does not read,
  // so it is hot on big arrays (4 % of a 64 MiB dump a byte at a time).
  const auto* s = reinterpret_cast<const unsigned char*>(doc.data());
  const size_t n = doc.size();
  ErrorWordRuns runs(s);
  for (size_t base = 0; base < n; base += 64) {
    if (runs.Feed(base, WordByteMask(s + base, std::min<size_t>(64, n - base)))) return true;
  }
  return runs.Finish(n);
}

namespace {

// Bits of the bytes of one 64-byte block: quotes, bytes CJ spells differently (see
// CleanSourceFacts), JSON white space and 0xC5 (U+017F starts with it).
struct SourceBlock {
  uint64_t quote = 0;
  uint64_t special = 0;
  uint64_t space = 0;
  uint64_t c5 = 0;
};

SourceBlock ClassifySourceBlock(const unsigned char* s) {
  SourceBlock b;
#if defined(__SSE2__)
  for (int i = 0; i < 64; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    auto eq = [&x](char c) { return _mm_cmpeq_epi8(x, _mm_set1_epi8(c)); };
    const __m128i special = _mm_or_si128(_mm_or_si128(eq('\\'), eq('<')),
                                         _mm_or_si128(_mm_or_si128(eq('>'), eq('&')), eq(static_cast<char>(0xE2))));
    const __m128i space = _mm_or_si128(_mm_or_si128(eq(' '), eq('\n')), _mm_or_si128(eq('\r'), eq('\t')));
    b.quote |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(eq('"')))} << i;
    b.special |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(special))} << i;
    b.space |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(space))} << i;
    b.c5 |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(eq(static_cast<char>(0xC5))))} << i;
  }
#else
  for (int i = 0; i < 64; ++i) {
    const unsigned char c = s[i];
    b.quote |= uint64_t{c == '"'} << i;
    b.special |= uint64_t{c == '\\' || c == '<' || c == '>' || c == '&' || c == 0xE2} << i;
    b.space |= uint64_t{c == ' ' || c == '\n' || c == '\r' || c == '\t'} << i;
    b.c5 |= uint64_t{c == 0xC5} << i;
  }
#endif
  return b;
}

// Bit i = XOR of bits 0..i.
uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

}  // namespace

bool CleanSourceFacts(std::string_view src, bool want_error_word, size_t* cj_len, bool* error_word) {
  const auto* s = reinterpret_cast<const unsigned char*>(src.data());
  const size_t n = src.size();
  uint64_t inside_carry = 0;  // all ones when the previous block ended inside a string
  size_t outside_space = 0;
  ErrorWordRuns runs(s);
  bool found = false;  // an error word
  bool c5 = false;     // a 0xC5 byte: maybe U+017F, which HasErrorWord matches by its regex
  unsigned char tail[64];
  for (size_t base = 0; base < n; base += 64) {
    const unsigned char* block = s + base;
    if (n - base < 64) {
      std::memset(tail, ',', sizeof tail);  // neither a quote, special nor white space
      std::memcpy(tail, block, n - base);
      block = tail;
    }
    const SourceBlock b = ClassifySourceBlock(block);
    if (b.special != 0) return false;
    // Without backslashes every quote opens or closes a string: the bytes from an opening
    // quote up to (not including) its closing quote have an odd number of quotes at or
    // before them.
    const uint64_t inside = PrefixXor(b.quote) ^ inside_carry;
    inside_carry = uint64_t{0} - (inside >> 63);
    outside_space += static_cast<size_t>(PopCount64(b.space & ~inside));
    c5 |= b.c5 != 0;
    // The padding of the tail block is no word byte: a run at the end closes in it.
    if (want_error_word && !found && !c5) found = runs.Feed(base, WordByteMask(block, 64));
  }
  *cj_len = n - outside_space;
  if (want_error_word) *error_word = c5 ? HasErrorWord(src) : found || runs.Finish(n);
  return true;
}

bool IsPreservedKey(std::string_view key) {
  if (key.size() > 24) return false;
  // Fold to ASCII lowercase; U+017F and U+212A fold to 's' and 'k' under (?i).
  char buf[24];
  size_t n = 0;
  for (size_t i = 0; i < key.size();) {
    if (key.substr(i, kLongS.size()) == kLongS) {
      buf[n++] = 's';
      i += kLongS.size();
    } else if (key.substr(i, kKelvin.size()) == kKelvin) {
      buf[n++] = 'k';
      i += kKelvin.size();
    } else {
      char c = key[i++];
      buf[n++] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    }
  }
  std::string_view folded(buf, n);
  for (std::string_view w : kPreservedKeys) {
    if (folded == w) return true;
  }
  return false;
}

double Median(std::vector<double> v) {
  CAVEMAN_DCHECK(!v.empty());
  const size_t n = v.size();
  const size_t mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double upper = v[mid];
  if (n % 2 == 1) return upper;
  double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

double Mad(const std::vector<double>& v) {
  double med = Median(v);
  std::vector<double> dev(v.size());
  for (size_t i = 0; i < v.size(); ++i) dev[i] = std::fabs(v[i] - med);
  return Median(std::move(dev));
}

void FlagAnomalies(const std::vector<double>& values, const std::vector<uint32_t>& index, bool len_path,
                   std::vector<bool>* keep) {
  const size_t count = values.size();
  if (count < kJsonAnomalyMinCount) return;
  double centre, scale;
  double med = Median(values);
  std::vector<double> dev(count);
  for (size_t i = 0; i < count; ++i) dev[i] = std::fabs(values[i] - med);
  double mad = Median(std::move(dev));
  if (mad > 0) {
    centre = med;
    scale = mad;
  } else {
    centre = Mean(values.data(), count);
    double ss = 0;
    for (double v : values) ss += (v - centre) * (v - centre);
    double s = count < 2 ? 0.0 : std::sqrt(ss / static_cast<double>(count - 1));
    scale = s / 0.6745;
  }
  if (!(scale > 0)) return;
  std::unordered_map<double, uint32_t> freq;
  const uint64_t max_freq = std::max<uint64_t>(count / 10, 2);
  if (len_path) {
    for (double v : values) ++freq[v];
  }
  std::vector<std::pair<double, size_t>> len_flags;  // (z, i) on the `__len__` path
  for (size_t i = 0; i < count; ++i) {
    double z = std::fabs(0.6745 * (values[i] - centre) / scale);
    if (!(z >= kJsonAnomalyZ)) continue;
    if (len_path) {
      if (freq[values[i]] <= max_freq) len_flags.emplace_back(z, i);
      continue;
    }
    (*keep)[index[i]] = true;
  }
  // Length alone is weak evidence: on big arrays whole groups of ordinary elements differ in
  // length by a few bytes (one more digit in an id). Keep only the most extreme ones
  // (docs/DECISIONS.md).
  std::stable_sort(len_flags.begin(), len_flags.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (len_flags.size() > kJsonMaxLenAnomalies) len_flags.resize(kJsonMaxLenAnomalies);
  for (const auto& f : len_flags) (*keep)[index[f.second]] = true;
}

std::vector<uint32_t> ChangePointKeeps(const std::vector<double>& y) {
  std::vector<uint32_t> out;
  const size_t n = y.size();
  if (n < kJsonArrayThreshold) return out;
  const double d0 = y[1] - y[0];
  bool straight = true;
  for (size_t i = 1; i + 1 < n; ++i) {
    if (std::fabs((y[i + 1] - y[i]) - d0) > 1e-9) {
      straight = false;
      break;
    }
  }
  if (straight) return out;
  std::vector<std::pair<size_t, size_t>> segs = {{0, n}};
  size_t accepted = 0;
  while (!segs.empty() && accepted < kJsonMaxSplits) {
    size_t best = 0;
    for (size_t s = 1; s < segs.size(); ++s) {
      if (segs[s].second - segs[s].first > segs[best].second - segs[best].first) best = s;
    }
    const auto a = segs[best].first;  // no structured binding: clang 14 cannot capture one
    const auto b = segs[best].second;
    segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(best));
    if (b - a < kJsonMinSegment) continue;
    const double m = Mean(y.data() + a, b - a);
    double cum = 0, best_abs = -1;
    size_t k = a;
    for (size_t j = a; j + 1 < b; ++j) {
      cum += y[j] - m;
      if (std::fabs(cum) > best_abs) {
        best_abs = std::fabs(cum);
        k = j;
      }
    }
    // A segment of identical values has shift 0 exactly; guard against rounding in the means.
    bool constant = std::all_of(y.begin() + static_cast<std::ptrdiff_t>(a), y.begin() + static_cast<std::ptrdiff_t>(b),
                                [&](double v) { return v == y[a]; });
    double shift = constant ? 0.0 : std::fabs(Mean(y.data() + a, k + 1 - a) - Mean(y.data() + k + 1, b - (k + 1)));
    double mad_l = MadOf(y.data() + a, k + 1 - a);
    double mad_r = MadOf(y.data() + k + 1, b - (k + 1));
    bool accept = (mad_l == 0 && mad_r == 0 && shift > 0);
    if (!accept) accept = shift > 2.0 * MadOf(y.data() + a, b - a);
    if (!accept) continue;
    out.push_back(static_cast<uint32_t>(k));
    out.push_back(static_cast<uint32_t>(k + 1));
    ++accepted;
    segs.push_back({a, k + 1});
    segs.push_back({k + 1, b});
  }
  return out;
}

bool JsonElements::Fields(uint32_t e, FieldList* out) {
  const JsonTree* tree = nullptr;
  JsonTree::NodeId node = 0;
  if (!Get(e, &tree, &node)) return false;
  JsonElementFields(*tree, node, out);
  return true;
}

bool SelectArrayElements(JsonElements& elements, std::string_view query, ArraySelection* out) {
  const uint32_t n = elements.size();
  ArraySelection& sel = *out;
  sel = ArraySelection();
  sel.keep.assign(n, false);
  sel.doc_len.resize(n);
  std::vector<uint64_t> shape(n);

  Bm25Index bm25(query);
  const bool use_query = !query.empty() && bm25.has_terms();

  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> path_ids;
  std::vector<std::string> path_names;
  std::vector<PathSeries> series;
  auto add_leaf = [&](std::string_view path, uint32_t elem, std::string_view literal) {
    double v;
    if (!ParseDouble(literal, &v)) return;
    auto it = path_ids.find(path);
    uint32_t id;
    if (it == path_ids.end()) {
      id = static_cast<uint32_t>(series.size());
      path_ids.emplace(std::string(path), id);
      path_names.emplace_back(path);
      series.emplace_back();
    } else {
      id = it->second;
    }
    PathSeries& s = series[id];
    if (!s.index.empty() && s.index.back() == elem) return;  // first value of a path wins
    s.index.push_back(elem);
    s.values.push_back(v);
  };

  // ---- pass 1: docs, error words, numeric leaves, shapes, document frequencies
  std::string doc;
  std::string path;
  struct WalkFrame {
    JsonTree::NodeId node;
    uint32_t i;
    size_t plen;
  };
  std::vector<WalkFrame> walk;
  const JsonTree* tp = nullptr;
  JsonTree::NodeId el = 0;
  for (uint32_t e = 0; e < n; ++e) {
    if (!elements.Get(e, &tp, &el)) return false;
    const JsonTree& tree = *tp;
    const bool forced = e < kJsonKeepFirst || e + kJsonKeepLast >= n;
    // Length and error words from the element's own bytes when they spell CJ (no copy of a
    // 64 MiB dump's elements written out just to be measured); else from CJ written out.
    const std::string_view src = use_query ? std::string_view() : elements.Source(e);
    size_t cj_len = 0;
    bool error_word = false;
    if (!src.empty() && CleanSourceFacts(src, !forced, &cj_len, &error_word)) {
      sel.doc_len[e] = static_cast<uint32_t>(cj_len);
      if (forced || error_word) sel.keep[e] = true;
    } else {
      doc.clear();
      AppendCanonicalJson(tree, el, &doc);
      sel.doc_len[e] = static_cast<uint32_t>(doc.size());
      if (forced || HasErrorWord(doc)) sel.keep[e] = true;
      if (use_query) bm25.AddDocument(doc);
    }
    shape[e] = ShapeOf(tree, el);
    JsonKind k = tree.kind(el);
    if (k == JsonKind::kObject && tree.Find(el, kJsonElidedKey) >= 0) sel.holds_marker = true;
    if (k == JsonKind::kNumber) {
      add_leaf("", e, tree.text(el));
    } else if (k == JsonKind::kObject) {
      walk.clear();
      walk.push_back({el, 0, 0});
      while (!walk.empty()) {
        WalkFrame& f = walk.back();
        if (f.i == tree.size(f.node)) {
          walk.pop_back();
          continue;
        }
        uint32_t i = f.i++;
        JsonTree::NodeId node = f.node;
        path.resize(f.plen);
        if (!path.empty()) path.push_back('.');
        path.append(tree.key(node, i));
        JsonTree::NodeId v = tree.member_value(node, i);
        if (tree.kind(v) == JsonKind::kNumber) {
          add_leaf(path, e, tree.text(v));
        } else if (tree.kind(v) == JsonKind::kObject) {
          walk.push_back({v, 0, path.size()});
        }
      }
    }
  }

  // ---- anomalies, paths in ascending byte order (the `__len__` pseudo-path included)
  std::vector<uint32_t> order(series.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return path_names[a] < path_names[b]; });
  std::vector<double> lens(n);
  std::vector<uint32_t> all(n);
  for (uint32_t e = 0; e < n; ++e) {
    lens[e] = sel.doc_len[e];
    all[e] = e;
  }
  for (uint32_t id : order) {
    FlagAnomalies(series[id].values, series[id].index, /*len_path=*/false, &sel.keep);
  }
  FlagAnomalies(lens, all, /*len_path=*/true, &sel.keep);

  // ---- change points on the full-coverage path with the largest sample variance
  const std::vector<double>* y = nullptr;
  double best_var = -1;
  for (uint32_t id : order) {
    const std::vector<double>& v = series[id].values;
    if (v.size() != n || n < 2) continue;
    double m = Mean(v.data(), n), ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    double var = ss / static_cast<double>(n - 1);
    if (var > best_var) {
      best_var = var;
      y = &v;
    }
  }
  for (uint32_t k : ChangePointKeeps(y ? *y : lens)) sel.keep[k] = true;

  // ---- query fill: up to 50 kept elements in total
  if (use_query) {
    std::vector<double> scores(n);
    double max = 0;
    for (uint32_t e = 0; e < n; ++e) {
      if (!elements.Get(e, &tp, &el)) return false;
      doc.clear();
      AppendCanonicalJson(*tp, el, &doc);
      scores[e] = bm25.Score(doc);
      max = std::max(max, scores[e]);
    }
    if (max > 0) {
      size_t kept = static_cast<size_t>(std::count(sel.keep.begin(), sel.keep.end(), true));
      std::vector<uint32_t> cand;
      for (uint32_t e = 0; e < n; ++e) {
        if (!sel.keep[e] && scores[e] / max >= kJsonRelevanceThreshold) cand.push_back(e);
      }
      std::stable_sort(cand.begin(), cand.end(), [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
      for (uint32_t e : cand) {
        if (kept >= kJsonMaxItems) break;
        sel.keep[e] = true;
        ++kept;
      }
    }
  }

  // ---- redundancy guard (§4.2) with the shape rule
  size_t kept_count = static_cast<size_t>(std::count(sel.keep.begin(), sel.keep.end(), true));
  RedundancyGuard guard;
  std::unordered_set<uint64_t> kept_shapes;
  size_t ordinal = 0;
  for (uint32_t e = 0; e < n; ++e) {
    if (!sel.keep[e]) continue;
    if (shape[e] != 0) kept_shapes.insert(shape[e]);
    if (RedundancyGuard::IsSeed(ordinal, kept_count)) {
      if (!elements.Get(e, &tp, &el)) return false;
      doc.clear();
      AppendCanonicalJson(*tp, el, &doc);
      guard.AddSeed(doc);
    }
    ++ordinal;
  }
  for (uint32_t e = 0; e < n; ++e) {
    if (sel.keep[e]) continue;
    if (shape[e] != 0 && kept_shapes.count(shape[e]) > 0) continue;  // represented by shape
    if (!elements.Get(e, &tp, &el)) return false;
    doc.clear();
    AppendCanonicalJson(*tp, el, &doc);
    if (guard.Test(doc)) {
      sel.keep[e] = true;
      if (shape[e] != 0) kept_shapes.insert(shape[e]);
    }
  }
  return true;
}

}  // namespace caveman::internal
