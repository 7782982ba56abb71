// Marker maps (issue 14): the aligners of marker_map.h and the stored blob format.
#include "engine/internal/marker_map.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compressors/cj.h"
#include "compressors/elision.h"
#include "compressors/large_stack.h"
#include "compressors/lines.h"
#include "compressors/text_util.h"
#include "compressors/terminal.h"
#include "compressors/text.h"
#include "stream/bits.h"

namespace caveman::internal {
namespace {

constexpr std::string_view kMarkPrefix = "\xE2\x80\xA6 ";  // "… "
constexpr std::string_view kCavemanPrefix = "caveman: ";
constexpr std::string_view kElidedKey = "__caveman_elided__";
constexpr std::string_view kBlobHeader = "caveman-marker-map 1";

std::string_view StripCr(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

// Digits at s[pos...]: the value and the position after them.
bool ReadNumber(std::string_view s, size_t pos, uint64_t* value, size_t* after) {
  size_t end = pos;
  while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
  if (end == pos || end - pos > 18) return false;
  std::from_chars(s.data() + pos, s.data() + end, *value);
  *after = end;
  return true;
}

}  // namespace

std::optional<MarkerText> ParseMarkerLine(std::string_view line) {
  line = StripCr(line);
  // "… N <phrase> (caveman)" with the longest phrases first (they end in "lines elided" too).
  static constexpr std::pair<std::string_view, std::string_view> kCounted[] = {
      {" context lines elided (caveman)", "context"}, {" search result lines elided (caveman)", "search"},
      {" config lines elided (caveman)", "config"},   {" rows elided (caveman)", "rows"},
      {" sections elided (caveman)", "sections"},     {" lines elided (caveman)", "lines"},
  };
  // "… caveman: N <phrase>" (§5.15 repeat markers, code comment blocks).
  static constexpr std::pair<std::string_view, std::string_view> kPrefixed[] = {
      {" identical lines elided ", "identical"},
      {" comment lines elided ", "comment"},
  };
  for (size_t at = line.find(kMarkPrefix); at != std::string_view::npos; at = line.find(kMarkPrefix, at + 1)) {
    size_t pos = at + kMarkPrefix.size();
    uint64_t n = 0;
    size_t after = 0;
    if (ReadNumber(line, pos, &n, &after)) {
      std::string_view rest = line.substr(after);
      for (const auto& [phrase, kind] : kCounted) {
        if (rest.substr(0, phrase.size()) == phrase) return MarkerText{kind, n};
      }
      continue;
    }
    if (line.substr(pos, kCavemanPrefix.size()) == kCavemanPrefix &&
        ReadNumber(line, pos + kCavemanPrefix.size(), &n, &after)) {
      std::string_view rest = line.substr(after);
      for (const auto& [phrase, kind] : kPrefixed) {
        if (rest.substr(0, phrase.size()) == phrase) return MarkerText{kind, n};
      }
    }
  }
  return std::nullopt;
}

bool IsNoteLine(std::string_view line) {
  const size_t at = line.find(kNotePrefix);
  if (at != std::string_view::npos && at <= 4) return true;  // a table row may quote it: `"…` or `| …`
  return IsStanzaNoteLine(line);
}

namespace {

// Reads a source line by line; each line with its LF (the last one may have none). The
// buffer is not zero-filled (a std::string resized by 64 KiB per refill zeroed it: ≈ 2 % of a
// small `compress`, issue 19); it holds at most the longest line plus one step.
class LineReader {
 public:
  explicit LineReader(ByteSource& in) : in_(in) {}
  // False at the end. `line` stays valid until the next call.
  Result<bool> Next(std::string_view* line) {
    for (;;) {
      const size_t from = std::max(start_, scan_);
      const void* nl = from < size_ ? std::memchr(buf_.get() + from, '\n', size_ - from) : nullptr;
      if (nl != nullptr) {
        const size_t end = static_cast<size_t>(static_cast<const char*>(nl) - buf_.get()) + 1;
        *line = std::string_view(buf_.get() + start_, end - start_);
        offset_ += end - start_;
        start_ = scan_ = end;
        return true;
      }
      scan_ = size_;
      CAVEMAN_ASSIGN_OR_RETURN(bool more, Refill());
      if (!more) break;
    }
    if (start_ >= size_) return false;
    *line = std::string_view(buf_.get() + start_, size_ - start_);
    offset_ += size_ - start_;
    start_ = scan_ = size_;
    return true;
  }
  // Skips up to n lines, as n calls of Next would (the last line may lack its LF), without
  // handing them out: a marker's elided lines are counted 64 bytes at a time. Returns how
  // many lines it skipped (fewer than n only at the end).
  Result<uint64_t> Skip(uint64_t n) {
    uint64_t done = 0;
    while (done < n) {
      size_t after = 0;  // bytes from start_ up to and including the last LF taken
      done += TakeLines(buf_.get() + start_, size_ - start_, n - done, &after);
      offset_ += after;
      start_ += after;
      scan_ = done == n ? start_ : size_;  // short of n: no LF is left in the buffer
      if (done == n) break;
      CAVEMAN_ASSIGN_OR_RETURN(bool more, Refill());
      if (!more) {
        if (start_ < size_) {  // an unterminated last line
          offset_ += size_ - start_;
          start_ = scan_ = size_;
          ++done;
        }
        break;
      }
    }
    return done;
  }
  uint64_t offset() const { return offset_; }  // bytes returned so far

 private:
  static constexpr size_t kStep = 64 * 1024;

  // Up to `want` LF-terminated lines at the start of p[0, len): returns how many, and in
  // *after the length of those lines.
  static uint64_t TakeLines(const char* p, size_t len, uint64_t want, size_t* after) {
    uint64_t taken = 0;
    size_t i = 0;
    *after = 0;
#if defined(__SSE2__)
    const __m128i lf = _mm_set1_epi8('\n');
    for (; i + 64 <= len; i += 64) {
      uint64_t m = 0;
      for (size_t k = 0; k < 64; k += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + k));
        m |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, lf)))} << k;
      }
      const uint64_t c = static_cast<uint64_t>(PopCount64(m));
      if (taken + c < want) {
        taken += c;
        if (m != 0) *after = i + 64 - static_cast<size_t>(std::countl_zero(m));
        continue;
      }
      for (uint64_t k = taken + 1; k < want; ++k) m &= m - 1;  // keep the want-th LF lowest
      *after = i + static_cast<size_t>(std::countr_zero(m)) + 1;
      return want;
    }
#endif
    for (; i < len; ++i) {
      if (p[i] != '\n') continue;
      *after = i + 1;
      if (++taken == want) return want;
    }
    return taken;
  }

  // Keeps the unfinished line, makes room and reads the next step. False at the end.
  Result<bool> Refill() {
    if (eof_) return false;
    if (start_ > 0) {  // keep only the unfinished line
      std::memmove(buf_.get(), buf_.get() + start_, size_ - start_);
      size_ -= start_;
      scan_ -= std::min(scan_, start_);
      start_ = 0;
    }
    if (capacity_ - size_ < kStep) {
      const size_t grown = std::max(2 * capacity_, size_ + kStep);
      std::unique_ptr<char[]> bigger(new char[grown]);
      if (size_ > 0) std::memcpy(bigger.get(), buf_.get(), size_);
      buf_ = std::move(bigger);
      capacity_ = grown;
    }
    CAVEMAN_ASSIGN_OR_RETURN(size_t n, in_.Read(buf_.get() + size_, kStep));
    size_ += n;
    if (n == 0) eof_ = true;
    return true;  // read again: Next and Skip look at the new bytes, or find the end
  }

  ByteSource& in_;
  std::unique_ptr<char[]> buf_;  // [0, size_) read, uninitialised up to capacity_
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t start_ = 0;
  size_t scan_ = 0;
  uint64_t offset_ = 0;
  bool eof_ = false;
};

std::string_view Content(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  return line;
}

// Table re-encoding (Markdown cell padding, CSV quoting) changes bytes but not cell text.
std::string TableSkeleton(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : StripCr(s)) {
    if (c != ' ' && c != '|' && c != '"' && c != '\t') out.push_back(c);
  }
  return out;
}

// A kept view line that is not byte-identical to its original line: the terminal cleanup of
// it (ANSI sequences removed, CR overwrites resolved) or a table row re-encoding.
bool SameUnit(std::string_view view, std::string_view original) {
  if (CleanTerminalLine(original) == view) return true;
  return TableSkeleton(view) == TableSkeleton(original);
}

MarkerMap Unmapped(std::string reason) {
  MarkerMap m;
  m.mapped = false;
  m.reason = std::move(reason);
  return m;
}

// The line-type aligner: streams both spools once and hands each marker to on_marker(entry)
// as it is found (the markers of the returned map stay empty).
template <class OnMarker>
Result<MarkerMap> AlignLinesWith(const Spool& original, const Spool& view, OnMarker&& on_marker) {
  auto orig_src = original.NewReader();
  auto view_src = view.NewReader();
  LineReader orig(*orig_src), vr(*view_src);
  MarkerMap map;
  map.mapped = true;
  uint64_t markers = 0;
  std::string_view o_line;
  CAVEMAN_ASSIGN_OR_RETURN(bool have_o, orig.Next(&o_line));
  uint64_t o_no = have_o ? 1 : 0;  // 1-based number of o_line
  uint64_t o_begin = 0;            // its offset
  uint64_t v_no = 0;
  std::string_view v_line;
  auto advance = [&]() -> Status {
    o_begin = orig.offset();
    CAVEMAN_ASSIGN_OR_RETURN(have_o, orig.Next(&o_line));
    if (have_o) ++o_no;
    return Status::OK();
  };
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(bool have_v, vr.Next(&v_line));
    if (!have_v) break;
    ++v_no;
    const std::string_view v = Content(v_line);
    if (have_o && v == Content(o_line)) {
      CAVEMAN_RETURN_IF_ERROR(advance());
      continue;
    }
    if (std::optional<MarkerText> m = ParseMarkerLine(v); m && m->count > 0) {
      MarkerEntry e;
      e.index = ++markers;
      e.kind = std::string(m->kind);
      e.view_line = v_no;
      e.count = m->count;
      e.first_line = o_no;
      e.byte_begin = o_begin;
      // The marker's lines: o_line, the count - 1 after it (skipped unread), then the next.
      uint64_t skipped = 0;
      if (have_o && m->count > 1) {
        CAVEMAN_ASSIGN_OR_RETURN(skipped, orig.Skip(m->count - 1));
        o_no += skipped;
      }
      if (!have_o || skipped < m->count - 1) {
        return Unmapped("view line " + std::to_string(v_no) + ": the marker counts more lines than remain");
      }
      CAVEMAN_RETURN_IF_ERROR(advance());
      e.last_line = e.first_line + m->count - 1;
      e.byte_end = o_begin;
      on_marker(std::move(e));
      continue;
    }
    if (IsNoteLine(v)) continue;
    if (have_o && SameUnit(v, Content(o_line))) {
      CAVEMAN_RETURN_IF_ERROR(advance());
      continue;
    }
    return Unmapped("view line " + std::to_string(v_no) + " is neither an original line nor a marker");
  }
  if (have_o) return Unmapped("original lines remain after the last view line");
  return map;
}

Result<MarkerMap> AlignLines(const Spool& original, const Spool& view) {
  std::vector<MarkerEntry> markers;
  CAVEMAN_ASSIGN_OR_RETURN(MarkerMap map,
                           AlignLinesWith(original, view, [&](MarkerEntry&& e) { markers.push_back(std::move(e)); }));
  if (map.mapped) map.markers = std::move(markers);
  return map;
}

// 1-based line number of byte `offset` of `text` (lines counted by LF), via a sorted cache.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    for (size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) lfs_.push_back(i);
  }
  uint64_t LineOf(uint64_t offset) const {
    return static_cast<uint64_t>(std::lower_bound(lfs_.begin(), lfs_.end(), offset) - lfs_.begin()) + 1;
  }
  // The lines holding bytes [begin, end) (an empty range: the line of begin).
  void Lines(uint64_t begin, uint64_t end, MarkerEntry* e) const {
    e->first_line = LineOf(begin);
    e->last_line = end > begin ? LineOf(end - 1) : e->first_line;
  }

 private:
  std::vector<size_t> lfs_;
};

void AppendPointerToken(std::string_view token, std::string* pointer) {
  pointer->push_back('/');
  for (char c : token) {
    if (c == '~') {
      pointer->append("~0");
    } else if (c == '/') {
      pointer->append("~1");
    } else {
      pointer->push_back(c);
    }
  }
}

bool IsMarkerItem(const JsonValue& v) { return v.kind == JsonValue::Kind::kObject && v.Find(kElidedKey) != nullptr; }

// The run length a marker item's "__caveman_elided__" member states; 0 when it is not a
// positive integer. REQUIRES: IsMarkerItem(item).
uint64_t ElidedCount(const JsonValue& item) {
  const JsonValue* n = item.Find(kElidedKey);
  uint64_t count = 0;
  size_t after = 0;
  if (n->kind != JsonValue::Kind::kNumber || !ReadNumber(n->text, 0, &count, &after) || after != n->text.size()) {
    return 0;
  }
  return count;
}

bool HoldsMarker(const JsonValue& array) { return std::any_of(array.items.begin(), array.items.end(), IsMarkerItem); }

// Walks the view tree against the original tree (iteratively: 10,000 levels cost no stack).
bool AlignJsonTrees(const JsonValue& view_root, const JsonValue& orig_root, std::string_view view_text,
                    const LineIndex& lines, std::vector<MarkerEntry>* out, std::string* reason) {
  struct Pair {
    const JsonValue* v;
    const JsonValue* o;
    std::string pointer;
  };
  // Depth-first in view order: children are pushed in reverse.
  std::vector<Pair> stack;
  stack.push_back({&view_root, &orig_root, std::string()});
  LineIndex view_lines(view_text);
  while (!stack.empty()) {
    Pair p = std::move(stack.back());
    stack.pop_back();
    const JsonValue& v = *p.v;
    const JsonValue& o = *p.o;
    if (v.kind != o.kind) {
      *reason = "JSON value at \"" + p.pointer + "\" differs in kind from the original";
      return false;
    }
    std::vector<Pair> children;
    if (v.kind == JsonValue::Kind::kObject) {
      for (const JsonMember& m : v.members) {
        const JsonValue* om = o.Find(m.key);
        if (om == nullptr) {
          *reason = "JSON key at \"" + p.pointer + "\" is not in the original";
          return false;
        }
        std::string ptr = p.pointer;
        AppendPointerToken(m.key, &ptr);
        children.push_back({&m.value, om, std::move(ptr)});
      }
    } else if (v.kind == JsonValue::Kind::kArray) {
      const bool collapsed = !HoldsMarker(o) && HoldsMarker(v);
      size_t idx = 0;
      for (const JsonValue& item : v.items) {
        if (collapsed && IsMarkerItem(item)) {
          const uint64_t count = ElidedCount(item);
          if (count == 0 || count > o.items.size() - idx) {
            *reason = "JSON marker at \"" + p.pointer + "\" does not fit its array";
            return false;
          }
          MarkerEntry e;
          e.kind = "elements";
          e.count = count;
          e.pointer = p.pointer;
          e.first_index = static_cast<int64_t>(idx);
          e.last_index = static_cast<int64_t>(idx + count - 1);
          e.byte_begin = o.items[idx].begin;
          e.byte_end = o.items[idx + count - 1].end;
          e.view_line = view_lines.LineOf(item.begin);
          lines.Lines(e.byte_begin, e.byte_end, &e);
          e.index = item.begin;  // view position; renumbered after the walk
          out->push_back(std::move(e));
          idx += count;
          continue;
        }
        if (idx >= o.items.size()) {
          *reason = "JSON array at \"" + p.pointer + "\" has more items than the original";
          return false;
        }
        std::string ptr = p.pointer + "/" + std::to_string(idx);
        children.push_back({&item, &o.items[idx], std::move(ptr)});
        ++idx;
      }
      if (idx != o.items.size()) {
        *reason = "JSON array at \"" + p.pointer + "\" accounts for " + std::to_string(idx) + " of " +
                  std::to_string(o.items.size()) + " items";
        return false;
      }
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(std::move(*it));
  }
  return true;
}

// One collapsed run of an original array: path segments as the scanner builds them.
struct JsonTarget {
  std::string path;  // "\x01key" / "\x02index" segments from the root
  uint64_t first = 0, last = 0;
  uint64_t array_size = 0;  // the original array's length the view implies
  size_t entry = 0;         // index into the markers being built
  bool have_begin = false, have_end = false;
};

void AppendIndexSegment(uint64_t i, std::string* path) {
  path->push_back('\x02');
  path->append(std::to_string(i));
  path->push_back('\x00');
}
void AppendKeySegment(std::string_view key, std::string* path) {
  path->push_back('\x01');
  path->append(std::to_string(key.size()));
  path->push_back(':');
  path->append(key);
}

// The view walk without the original tree: original indices follow from the markers' counts.
// REQUIRES: the original holds no `__caveman_elided__` key (then every marker item is new).
bool CollectJsonTargets(const JsonValue& view_root, std::string_view view_text, std::vector<MarkerEntry>* out,
                        std::vector<JsonTarget>* targets, std::string* reason) {
  struct Item {
    const JsonValue* v;
    std::string path, pointer;
  };
  std::vector<Item> stack;
  stack.push_back({&view_root, std::string(), std::string()});
  LineIndex view_lines(view_text);
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    const JsonValue& v = *it.v;
    std::vector<Item> children;
    if (v.kind == JsonValue::Kind::kObject) {
      for (const JsonMember& m : v.members) {
        Item c{&m.value, it.path, it.pointer};
        AppendKeySegment(m.key, &c.path);
        AppendPointerToken(m.key, &c.pointer);
        children.push_back(std::move(c));
      }
    } else if (v.kind == JsonValue::Kind::kArray) {
      uint64_t idx = 0;
      const size_t first_target = targets->size();
      for (const JsonValue& item : v.items) {
        if (IsMarkerItem(item)) {
          const uint64_t count = ElidedCount(item);
          if (count == 0) {
            *reason = "JSON marker at \"" + it.pointer + "\" has no count";
            return false;
          }
          MarkerEntry e;
          e.kind = "elements";
          e.count = count;
          e.pointer = it.pointer;
          e.first_index = static_cast<int64_t>(idx);
          e.last_index = static_cast<int64_t>(idx + count - 1);
          e.view_line = view_lines.LineOf(item.begin);
          e.index = item.begin;  // view position; renumbered after the walk
          targets->push_back({it.path, idx, idx + count - 1, 0, out->size(), false, false});
          out->push_back(std::move(e));
          idx += count;
          continue;
        }
        Item c{&item, it.path, it.pointer + "/" + std::to_string(idx)};
        AppendIndexSegment(idx, &c.path);
        children.push_back(std::move(c));
        ++idx;
      }
      for (size_t t = first_target; t < targets->size(); ++t) (*targets)[t].array_size = idx;
    }
    for (auto r = children.rbegin(); r != children.rend(); ++r) stack.push_back(std::move(*r));
  }
  return true;
}

// Index of the quote that closes the string whose opening quote is text[open] (a quote after
// an odd number of backslashes is escaped), or npos; *escaped: the string holds a backslash.
size_t StringEnd(std::string_view text, size_t open, bool* escaped) {
  *escaped = false;
  size_t from = open + 1;
  for (;;) {
    const void* q = std::memchr(text.data() + from, '"', text.size() - from);
    if (q == nullptr) return std::string_view::npos;
    const size_t k = static_cast<size_t>(static_cast<const char*>(q) - text.data());
    size_t b = k;
    while (b > open + 1 && text[b - 1] == '\\') --b;
    if (b != k) *escaped = true;
    if ((k - b) % 2 == 0) return k;
    from = k + 1;
  }
}

// Index of the bracket that closes the container opened at text[open], or npos.
size_t ContainerEnd(std::string_view text, size_t open) {
  size_t depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    switch (text[i]) {
      case '"': {
        bool escaped;
        i = StringEnd(text, i, &escaped);
        if (i == std::string_view::npos) return i;
        break;
      }
      case '{':
      case '[': ++depth; break;
      case '}':
      case ']':
        if (--depth == 0) return i;
        break;
      default: break;
    }
  }
  return std::string_view::npos;
}

// Whether some target's path starts with `path` (the targets' paths sorted). A container's
// path ends with a whole segment, and segments delimit themselves (a key's length comes
// first, an index ends with NUL), so a byte prefix is a prefix of whole segments: the
// container may hold a target.
bool LeadsToTarget(const std::vector<std::string>& sorted_paths, const std::string& path) {
  auto it = std::lower_bound(sorted_paths.begin(), sorted_paths.end(), path);
  return it != sorted_paths.end() && it->compare(0, path.size(), path) == 0;
}

// One pass over the original JSON text (valid: the compressor parsed it) recording the byte
// spans of the targets' first and last elements and the targets' array lengths. Iterative;
// memory: the path of the current value. A duplicate key's later value overwrites (CJ keeps
// the last duplicate). A container whose path leads to no target is skipped to its closing
// bracket without building paths inside it (issue 19: most of a large dump).
bool ScanJsonSpans(std::string_view text, std::vector<JsonTarget>* targets, std::vector<MarkerEntry>* entries,
                   std::string* reason) {
  std::unordered_map<std::string, std::vector<size_t>> by_path;
  for (size_t t = 0; t < targets->size(); ++t) by_path[(*targets)[t].path].push_back(t);
  std::vector<std::string> target_paths;
  for (const JsonTarget& t : *targets) target_paths.push_back(t.path);
  std::sort(target_paths.begin(), target_paths.end());
  struct Frame {
    bool array;
    size_t path_len;                            // path length of this container
    uint64_t count = 0;                         // array: elements seen
    uint64_t elem_begin = 0;                    // array: start of the current element
    const std::vector<size_t>* hits = nullptr;  // array: targets of this array
    std::string key;                            // object: the pending member's key
  };
  std::vector<Frame> stack;
  std::string path;
  std::unordered_map<size_t, uint64_t> sizes;  // target -> length seen
  auto value_starts = [&](uint64_t at) {
    if (stack.empty()) return;
    Frame& f = stack.back();
    if (f.array) {
      f.elem_begin = at;
      AppendIndexSegment(f.count, &path);
    } else {
      AppendKeySegment(f.key, &path);
    }
  };
  auto value_ends = [&](uint64_t end) {
    if (stack.empty()) return;
    Frame& f = stack.back();
    path.resize(f.path_len);
    if (!f.array) return;
    if (f.hits != nullptr) {
      for (size_t t : *f.hits) {
        JsonTarget& g = (*targets)[t];
        if (g.first == f.count) {
          (*entries)[g.entry].byte_begin = f.elem_begin;
          g.have_begin = true;
        }
        if (g.last == f.count) {
          (*entries)[g.entry].byte_end = end;
          g.have_end = true;
        }
      }
    }
    ++f.count;
  };
  auto open = [&](bool array) {
    Frame f;
    f.array = array;
    f.path_len = path.size();
    if (array) {
      auto hit = by_path.find(path);
      if (hit != by_path.end()) f.hits = &hit->second;
    }
    stack.push_back(std::move(f));
  };
  bool expect_key = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':') {
      if (c == ',' && !stack.empty() && !stack.back().array) expect_key = true;
      ++i;
      continue;
    }
    if (c == '"') {
      bool escaped = false;
      const size_t j = StringEnd(text, i, &escaped);
      if (j == std::string_view::npos) break;
      const std::string_view token = text.substr(i, j + 1 - i);
      if (expect_key) {
        std::optional<std::string> key =
            escaped ? DecodeJsonString(token)
                    : std::optional<std::string>(std::string(token.substr(1, token.size() - 2)));
        if (!key) break;
        stack.back().key = std::move(*key);
        expect_key = false;
      } else {
        value_starts(i);
        value_ends(j + 1);
      }
      i = j + 1;
      continue;
    }
    if (c == '{' || c == '[') {
      value_starts(i);
      if (!LeadsToTarget(target_paths, path)) {
        const size_t end = ContainerEnd(text, i);
        if (end == std::string_view::npos) break;
        value_ends(end + 1);
        expect_key = false;
        i = end + 1;
        continue;
      }
      open(c == '[');
      expect_key = c == '{';
      ++i;
      continue;
    }
    if (c == '}' || c == ']') {
      if (stack.empty()) break;
      if (stack.back().array && stack.back().hits != nullptr) {
        for (size_t t : *stack.back().hits) sizes[t] = stack.back().count;
      }
      stack.pop_back();
      expect_key = false;
      value_ends(i + 1);
      ++i;
      continue;
    }
    // A number or literal: up to the next delimiter.
    size_t j = i;
    while (j < text.size() && text[j] != ',' && text[j] != ']' && text[j] != '}' && text[j] != ' ' && text[j] != '\t' &&
           text[j] != '\n' && text[j] != '\r') {
      ++j;
    }
    value_starts(i);
    value_ends(j);
    i = j;
  }
  for (size_t t = 0; t < targets->size(); ++t) {
    const JsonTarget& g = (*targets)[t];
    auto seen = sizes.find(t);
    if (!g.have_begin || !g.have_end || seen == sizes.end() || seen->second != g.array_size) {
      *reason = "JSON marker at \"" + (*entries)[g.entry].pointer + "\" does not fit the original array";
      return false;
    }
  }
  return true;
}

MarkerMap AlignJson(std::string_view original, std::string_view view) {
  if (original.find(kElidedKey) == std::string_view::npos) {
    // The usual case: no marker objects in the original, so the view alone says which items
    // are markers; one scan of the original finds the spans (no tree of the original).
    std::optional<JsonValue> v;
    RunWithStack(StackBytesForInput(view.size()), [&] { v = ParseJson(view); });
    if (!v) return Unmapped("the view is not JSON");
    MarkerMap map;
    map.mapped = true;
    std::vector<JsonTarget> targets;
    if (!CollectJsonTargets(*v, view, &map.markers, &targets, &map.reason) ||
        !ScanJsonSpans(original, &targets, &map.markers, &map.reason)) {
      return Unmapped(std::move(map.reason));
    }
    LineIndex lines(original);
    for (MarkerEntry& e : map.markers) lines.Lines(e.byte_begin, e.byte_end, &e);
    std::stable_sort(map.markers.begin(), map.markers.end(),
                     [](const MarkerEntry& a, const MarkerEntry& b) { return a.index < b.index; });
    for (size_t i = 0; i < map.markers.size(); ++i) map.markers[i].index = i + 1;
    return map;
  }
  std::optional<JsonValue> v, o;
  // cj's parser recurses per nesting level: give it a stack sized for the input.
  RunWithStack(StackBytesForInput(std::max(original.size(), view.size())), [&] {
    v = ParseJson(view);
    if (v) o = ParseJson(original);
  });
  if (!v) return Unmapped("the view is not JSON");
  if (!o) return Unmapped("the original is not JSON");
  MarkerMap map;
  map.mapped = true;
  LineIndex lines(original);
  if (!AlignJsonTrees(*v, *o, view, lines, &map.markers, &map.reason)) return Unmapped(std::move(map.reason));
  std::stable_sort(map.markers.begin(), map.markers.end(),
                   [](const MarkerEntry& a, const MarkerEntry& b) { return a.index < b.index; });
  for (size_t i = 0; i < map.markers.size(); ++i) map.markers[i].index = i + 1;
  return map;
}

// §5.7 views: kept sections (their raw lines) and `… N sections elided (caveman) …`, each unit
// followed by a line ending — two (a blank line) between paragraphs, one in line mode and
// between the lines of one listing paragraph (compressors/text.cc) — plus the input's final
// line ending. Sections are TRIMmed and never blank, so the blank lines cannot be mistaken for
// one; the aligner takes one or two line endings after every unit.
MarkerMap AlignText(std::string_view original, std::string_view view) {
  const std::vector<std::string_view> sections = TextSections(original);
  LineIndex lines(original);
  LineIndex view_lines(view);
  MarkerMap map;
  map.mapped = true;
  auto section_start = [&](size_t k) -> uint64_t {
    return k < sections.size() ? static_cast<uint64_t>(sections[k].data() - original.data()) : original.size();
  };
  // The length of the line ending at view[at], 0 if none.
  auto line_ending = [&](size_t at) -> size_t {
    if (view.substr(at, 1) == "\n") return 1;
    if (view.substr(at, 2) == "\r\n") return 2;
    return 0;
  };
  size_t pos = 0, i = 0;
  for (bool first = true;; first = false) {
    if (!first) {
      if (pos == view.size()) {  // a view without a final line ending
        if (i == sections.size()) return map;
        return Unmapped("original sections remain after the last view section");
      }
      const size_t one = line_ending(pos);
      if (one == 0) return Unmapped("view section separator missing at byte " + std::to_string(pos));
      pos += one;
      if (i < sections.size()) pos += line_ending(pos);  // a blank line between paragraphs
    }
    const std::string_view rest = view.substr(pos);
    if (i == sections.size()) {
      if (rest.empty()) return map;
      return Unmapped("view text remains after the last original section");
    }
    if (rest.empty()) return Unmapped("original sections remain after the last view section");
    if (rest.substr(0, sections[i].size()) == sections[i] &&
        (pos + sections[i].size() == view.size() || line_ending(pos + sections[i].size()) != 0)) {
      pos += sections[i].size();
      ++i;
      continue;
    }
    const size_t line_end = std::min(rest.find('\n'), rest.size());
    std::string_view text = rest.substr(0, line_end);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    std::optional<MarkerText> m = ParseMarkerLine(text);
    if (!m || m->kind != "sections" || m->count == 0 || m->count > sections.size() - i) {
      return Unmapped("view section at byte " + std::to_string(pos) + " is neither an original section nor a marker");
    }
    MarkerEntry e;
    e.index = map.markers.size() + 1;
    e.kind = "sections";
    e.count = m->count;
    e.view_line = view_lines.LineOf(pos);
    e.byte_begin = section_start(i);
    e.byte_end = section_start(i + m->count);
    lines.Lines(e.byte_begin, e.byte_end, &e);
    map.markers.push_back(std::move(e));
    i += m->count;
    pos += text.size();
  }
}

// Code: the compressor's own spans.
MarkerMap MapSpans(std::string_view original, std::string_view view, const std::vector<ElidedSpan>& spans) {
  LineIndex lines(original);
  LineIndex view_lines(view);
  MarkerMap map;
  map.mapped = true;
  uint64_t last_end = 0;
  for (const ElidedSpan& s : spans) {
    if (s.begin < last_end || s.end < s.begin || s.end > original.size() || s.view_end > view.size()) {
      return Unmapped("the compressor's spans do not fit the original");
    }
    last_end = s.end;
    MarkerEntry e;
    e.index = map.markers.size() + 1;
    e.kind = s.kind;
    e.count = s.count;
    e.view_line = view_lines.LineOf(s.view_begin);
    e.byte_begin = s.begin;
    e.byte_end = s.end;
    lines.Lines(s.begin, s.end, &e);
    map.markers.push_back(std::move(e));
  }
  return map;
}

bool LooksLikeJson(std::string_view s) {
  s = Trim(s);
  return !s.empty() && (s.front() == '{' || s.front() == '[');
}

}  // namespace

MarkerMap BuildMarkerMap(std::string_view original, std::string_view view, const std::vector<ElidedSpan>& spans) {
  if (!spans.empty()) return MapSpans(original, view, spans);
  if (LooksLikeJson(view) && LooksLikeJson(original)) {
    // cj's parser, the tree walks and the tree's destructor recurse per nesting level: all of
    // it runs on a stack sized for the input (a 9,000-deep member overflowed an ASan stack).
    std::optional<MarkerMap> json;
    RunWithStack(StackBytesForInput(std::max(original.size(), view.size())), [&] {
      if (IsJson(view)) json = AlignJson(original, view);
    });
    if (json) return std::move(*json);
  }
  Spool o, v;
  if (!o.Write(original).ok() || !v.Write(view).ok()) return Unmapped("spool failure");
  Result<MarkerMap> lines = AlignLines(o, v);
  if (lines.ok() && lines->mapped) return std::move(lines).value();
  MarkerMap text = AlignText(original, view);
  if (text.mapped) return text;
  if (lines.ok()) return std::move(lines).value();
  return Unmapped(lines.status().message());
}

namespace {

// BuildMarkerMap over spools, with the markers of the line aligner (the path of every large
// line view) handed to on_marker(entry) as they are found: then *streamed is true and the
// result's markers are empty. Every other path returns its markers in the map, and whatever
// on_marker got before an alignment failed is to be dropped.
template <class OnMarker>
Result<MarkerMap> MapSpools(const Spool& original, const Spool& view, const std::vector<ElidedSpan>& spans,
                            OnMarker&& on_marker, bool* streamed) {
  *streamed = false;
  const bool small = original.size() <= kMarkerMapMaxInMemory && view.size() <= kMarkerMapMaxInMemory;
  std::string head;
  CAVEMAN_RETURN_IF_ERROR(view.ReadRange(0, 64, &head));
  if (!spans.empty() && !small) return Unmapped("too large to map (over 16 MiB)");
  // JSON-looking views (a log whose lines start with `[` looks so too) are tried in memory
  // when small; a large one streams through the line aligner like any line view.
  if (!spans.empty() || (LooksLikeJson(head) && small)) {
    CAVEMAN_ASSIGN_OR_RETURN(std::string o, original.ReadAllToString());
    CAVEMAN_ASSIGN_OR_RETURN(std::string v, view.ReadAllToString());
    return BuildMarkerMap(o, v, spans);
  }
  // Line types stream (bounded memory); text views (sections) are tried in memory.
  CAVEMAN_ASSIGN_OR_RETURN(MarkerMap lines, AlignLinesWith(original, view, on_marker));
  if (lines.mapped) {
    *streamed = true;
    return lines;
  }
  if (LooksLikeJson(head)) return Unmapped("JSON too large to map (over 16 MiB)");
  if (!small) return lines;
  CAVEMAN_ASSIGN_OR_RETURN(std::string o, original.ReadAllToString());
  CAVEMAN_ASSIGN_OR_RETURN(std::string v, view.ReadAllToString());
  MarkerMap text = AlignText(o, v);
  return text.mapped ? text : lines;
}

}  // namespace

Result<MarkerMap> BuildMarkerMap(const Spool& original, const Spool& view, const std::vector<ElidedSpan>& spans) {
  std::vector<MarkerEntry> found;
  bool streamed = false;
  Result<MarkerMap> map = MapSpools(
      original, view, spans, [&](MarkerEntry&& e) { found.push_back(std::move(e)); }, &streamed);
  if (map.ok() && streamed) map->markers = std::move(found);
  return map;
}

// ---- blob ----
// "caveman-marker-map 1" LF, then "mapped" or "unmapped <reason>" LF, then per marker:
// kind view_line count first_line last_line byte_begin byte_end first_index last_index pointer
// (space-separated; the pointer is last and percent-encodes '%', bytes < 0x20 and 0x7F).

namespace {

std::string EncodeField(std::string_view s) {
  std::string out;
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (c == '%' || c < 0x20 || c == 0x7F) {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

bool DecodeField(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return false;
    unsigned v = 0;
    auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (r.ec != std::errc() || r.ptr != s.data() + i + 3) return false;
    out->push_back(static_cast<char>(v));
    i += 2;
  }
  return true;
}

Status BadBlob() { return Status::Corruption("ccr: corrupt marker map"); }

}  // namespace

// One marker line of the blob.
static void AppendMarkerLine(const MarkerEntry& e, std::string* out) {
  auto number = [out](auto v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out->append(buf, r.ptr);
    *out += ' ';
  };
  *out += e.kind;
  *out += ' ';
  for (uint64_t v : {e.view_line, e.count, e.first_line, e.last_line, e.byte_begin, e.byte_end}) number(v);
  number(e.first_index);
  number(e.last_index);
  *out += EncodeField(e.pointer);
  *out += '\n';
}

std::string SerializeMarkerMap(const MarkerMap& map) {
  std::string out(kBlobHeader);
  out += '\n';
  out += map.mapped ? "mapped" : "unmapped " + EncodeField(map.reason);
  out += '\n';
  out.reserve(out.size() + map.markers.size() * 64);
  for (const MarkerEntry& e : map.markers) AppendMarkerLine(e, &out);
  return out;
}

std::string MarkerMapBlob(const Spool& original, const Spool& view, const std::vector<ElidedSpan>& spans) {
  // A line view's markers are serialised as the aligner finds them (a large log's map held
  // ~30,000 entries, then a copy in text; issue 19); any other path serialises its map.
  std::string blob(kBlobHeader);
  blob += "\nmapped\n";
  // Room for twice the view's size up front (the 64 MiB CI log's 3.36 MB view has a 4.33 MB
  // map): grown by doubling, the blob touched about twice its size in fresh pages and was
  // copied at every doubling. Pages reserved but never written cost nothing.
  if (view.size() >= (1u << 20)) blob.reserve(std::min<uint64_t>(view.size() * 2, uint64_t{64} << 20));
  bool streamed = false;
  Result<MarkerMap> map = MapSpools(
      original, view, spans, [&](MarkerEntry&& e) { AppendMarkerLine(e, &blob); }, &streamed);
  if (!map.ok()) return SerializeMarkerMap(Unmapped(map.status().message()));
  if (streamed) return blob;
  return SerializeMarkerMap(*map);  // by reference: a large map is not copied first
}

Result<MarkerMap> ParseMarkerMap(std::string_view blob) {
  MarkerMap map;
  auto next_line = [&](std::string_view* line) {
    const size_t nl = blob.find('\n');
    if (nl == std::string_view::npos) return false;
    *line = blob.substr(0, nl);
    blob.remove_prefix(nl + 1);
    return true;
  };
  std::string_view line;
  if (!next_line(&line) || line != kBlobHeader || !next_line(&line)) return BadBlob();
  if (line == "mapped") {
    map.mapped = true;
  } else if (line.substr(0, 9) == "unmapped ") {
    if (!DecodeField(line.substr(9), &map.reason)) return BadBlob();
  } else {
    return BadBlob();
  }
  while (next_line(&line)) {
    MarkerEntry e;
    std::vector<std::string_view> f;
    for (int k = 0; k < 9; ++k) {
      const size_t sp = line.find(' ');
      if (sp == std::string_view::npos) return BadBlob();
      f.push_back(line.substr(0, sp));
      line.remove_prefix(sp + 1);
    }
    auto u = [&](std::string_view s, uint64_t* v) {
      auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
      return r.ec == std::errc() && r.ptr == s.data() + s.size();
    };
    auto i = [&](std::string_view s, int64_t* v) {
      auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
      return r.ec == std::errc() && r.ptr == s.data() + s.size();
    };
    e.kind = std::string(f[0]);
    if (!u(f[1], &e.view_line) || !u(f[2], &e.count) || !u(f[3], &e.first_line) || !u(f[4], &e.last_line) ||
        !u(f[5], &e.byte_begin) || !u(f[6], &e.byte_end) || !i(f[7], &e.first_index) || !i(f[8], &e.last_index) ||
        e.byte_end < e.byte_begin || !DecodeField(line, &e.pointer)) {
      return BadBlob();
    }
    e.index = map.markers.size() + 1;
    map.markers.push_back(std::move(e));
  }
  if (!blob.empty()) return BadBlob();
  return map;
}

// ---- follow ----

OnlineMarkerTracker::OnlineMarkerTracker()
    : blob_(std::make_unique<Spool>(SpoolOptions{.memory_limit = kMemoryLimit})),
      pending_(SerializeMarkerMap(MarkerMap{true, {}, {}})) {}

void OnlineMarkerTracker::Unmap(std::string reason) {
  mapped_ = false;
  reason_ = std::move(reason);
  blob_.reset();
  pending_.clear();
  pending_.shrink_to_fit();
}

void OnlineMarkerTracker::Flush() {
  if (!mapped_ || pending_.empty()) return;
  if (!blob_->Write(pending_).ok()) return Unmap("the marker map could not be spooled");
  pending_.clear();
}

std::unique_ptr<Spool> OnlineMarkerTracker::TakeBlob() {
  Flush();
  if (mapped_) {
    std::unique_ptr<Spool> taken = std::move(blob_);
    Unmap("the marker map was taken already");  // a second call (there is none) gets the unmapped map
    return taken;
  }
  auto unmapped = std::make_unique<Spool>(SpoolOptions{.memory_limit = kMemoryLimit});
  (void)unmapped->Write(SerializeMarkerMap(Unmapped(reason_)));  // small: stays in memory
  return unmapped;
}

void OnlineMarkerTracker::Add(const OnlineEvent& e) {
  const uint64_t lfs = static_cast<uint64_t>(std::count(e.bytes.begin(), e.bytes.end(), '\n'));
  if (e.input_end > e.input_begin && e.input_begin != input_end_ && mapped_) Unmap("follow events out of order");
  if (!mapped_) return;
  if (e.lossy && e.lines > 0) {
    // A marker event is one line (a leading LF closes an unterminated line written before).
    std::string_view text(e.bytes);
    uint64_t leading = 0;
    if (!text.empty() && text.front() == '\n') {
      text.remove_prefix(1);
      leading = 1;
    }
    std::optional<MarkerText> m = ParseMarkerLine(Content(text));
    if (m && m->count == e.lines && Content(text).find('\n') == std::string_view::npos) {
      MarkerEntry entry;
      entry.index = ++markers_;
      entry.kind = std::string(m->kind);
      entry.view_line = view_lines_ + leading + 1;
      entry.count = m->count;
      entry.first_line = input_lines_ + 1;
      entry.last_line = input_lines_ + m->count;
      entry.byte_begin = e.input_begin;
      entry.byte_end = e.input_end;
      AppendMarkerLine(entry, &pending_);
      if (pending_.size() >= 64 * 1024) Flush();
    }
  }
  view_lines_ += lfs;
  // Lines of the input this event covers: its own count, or (verbatim bytes) their LFs.
  input_lines_ += e.lines > 0 ? e.lines : (e.input_end > e.input_begin && !e.lossy ? lfs : 0);
  if (e.input_end > e.input_begin) input_end_ = e.input_end;
}

}  // namespace caveman::internal
