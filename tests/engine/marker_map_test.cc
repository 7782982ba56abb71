// Marker maps (issue 14), acceptance: every line-type and JSON golden fixture is compressed
// through the Engine into a store; then for every marker K the bytes RetrieveMarker(K) returns
// are exactly original[byte range] and hold the marker's count of units, the kept parts and
// the marker slices rebuild the original byte for byte, and the original with each marker's
// range replaced by the marker's own view text normalises to the view (so every range is the
// one the marker stands for, not just some partition of the original). Follow mode: the map
// of a streamed record does not depend on chunking and passes the same checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compressors/cj.h"
#include "compressors/terminal.h"
#include "compressors/text.h"
#include "caveman/engine/engine.h"
#include "engine/internal/follow_session.h"
#include "engine/internal/marker_map.h"
#include "caveman/store/store.h"
#include "stream/sha256.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

struct Fixture {
  std::string name;
  std::string type;
  std::string input;
  std::string query;
};

// fixtures/<dir>/<case>.expected with <case>.in (or .txt) beside it, plus the seed fixtures.
std::vector<Fixture> GoldenFixtures() {
  const fs::path root = fs::path(testing::SourceDir()) / "fixtures";
  const std::pair<const char*, const char*> dirs[] = {
      {"log", "log"},       {"terminal", "terminal"}, {"diff", "diff"},      {"search-result", "search-result"},
      {"config", "config"}, {"tabular", "tabular"},   {"tables", "tabular"}, {"text", "text"},
      {"code", "code"},
  };
  std::vector<Fixture> out;
  for (const auto& [dir, type] : dirs) {
    std::vector<fs::path> expected;
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() == ".expected") expected.push_back(e.path());
    }
    std::sort(expected.begin(), expected.end());
    for (const fs::path& ex : expected) {
      fs::path in = ex;
      in.replace_extension(".in");
      if (!fs::exists(in)) in.replace_extension(".txt");
      if (!fs::exists(in)) continue;
      fs::path q = ex;
      q.replace_extension(".query");
      Fixture f{std::string(dir) + "/" + in.filename().string(), type, Slurp(in), fs::exists(q) ? Slurp(q) : ""};
      while (!f.query.empty() && (f.query.back() == '\n' || f.query.back() == '\r')) f.query.pop_back();
      out.push_back(std::move(f));
    }
  }
  out.push_back({"seed/pytest.log", "repetition", Slurp(root / "seed" / "pytest.log"), ""});
  out.push_back({"seed/pytest.log (auto)", "", Slurp(root / "seed" / "pytest.log"), ""});
  out.push_back({"seed/orders.json", "json", Slurp(root / "seed" / "orders.json"), ""});
  for (const auto& e : fs::directory_iterator(root / "detect" / "json")) {
    out.push_back({"detect/json/" + e.path().filename().string(), "json", Slurp(e.path()), ""});
  }
  // This repository's own headers: long comment blocks (the code compressor's comment markers).
  for (const char* header : {"store/store.h", "engine/engine.h", "compressors/online.h"}) {
    out.push_back({header, "code", Slurp(fs::path(testing::SourceDir()) / header), ""});
  }
  for (const char* dir : {"git", "stanzas"}) {  // real tool output, detected as it comes
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() == ".txt") {
        out.push_back({std::string(dir) + "/" + e.path().filename().string(), "", Slurp(e.path()), ""});
      }
    }
  }
  return out;
}

std::vector<std::string_view> Lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    size_t end = nl == std::string_view::npos ? s.size() : nl + 1;
    out.push_back(s.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

std::string_view NoLf(std::string_view s) {
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

// The marker's own text in the view: JSON marker objects are found by occurrence (K-th in
// view order), everything else is its view line (bodies: the replacement text in it).
std::string MarkerViewText(std::string_view view, const MarkerEntry& e, size_t json_ordinal) {
  if (e.kind == "elements") {
    size_t at = std::string_view::npos, from = 0;
    for (size_t k = 0; k <= json_ordinal; ++k) {
      at = view.find("{\"__caveman_elided__\":", from);
      if (at == std::string_view::npos) return "";
      from = at + 1;
    }
    // Marker objects hold a number and strings only: the first '}' outside a string ends it.
    bool in_string = false;
    for (size_t i = at; i < view.size(); ++i) {
      if (in_string) {
        if (view[i] == '\\') {
          ++i;
        } else if (view[i] == '"') {
          in_string = false;
        }
      } else if (view[i] == '"') {
        in_string = true;
      } else if (view[i] == '}') {
        return std::string(view.substr(at, i + 1 - at));
      }
    }
    return "";
  }
  std::vector<std::string_view> lines = Lines(view);
  if (e.view_line == 0 || e.view_line > lines.size()) return "";
  std::string_view line = NoLf(lines[e.view_line - 1]);
  if (e.kind == "body") {
    for (std::string_view r : {std::string_view("{ /* caveman: body elided */ }"), std::string_view("...")}) {
      if (line.find(r) != std::string_view::npos) return std::string(r);
    }
    return "";
  }
  return std::string(line);
}

std::string Skeleton(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ' && c != '|' && c != '"' && c != '\t' && c != '\r') out.push_back(c);
  }
  return out;
}

bool IsNote(std::string_view line) { return internal::IsNoteLine(NoLf(line)); }

// What the view must equal once the original has its marker ranges replaced by the markers.
std::string Normalise(const std::string& type, std::string_view text, bool drop_notes) {
  if (type == "json") {
    auto v = internal::ParseJson(text);
    return v ? internal::Cj(*v) : "<not json>";
  }
  if (type == "text") {
    // The sections' non-blank lines: a view separates the lines of a listing paragraph by one
    // line ending and other units by a blank line, which the splice does not reproduce.
    std::string out;
    for (std::string_view s : TextSections(text)) {
      if (drop_notes && internal::IsNoteLine(s)) continue;
      for (std::string_view line : Lines(s)) {
        line = NoLf(line);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        out += line;
        out += '\n';
      }
    }
    return out;
  }
  std::string out;
  for (std::string_view line : Lines(text)) {
    if (drop_notes && IsNote(line)) continue;
    std::string_view c = NoLf(line);
    if (type == "terminal") {
      out += CleanTerminalLine(c);
    } else if (type == "tabular") {
      out += Skeleton(c);
    } else {
      out += c;
    }
    out += '\n';
  }
  return out;
}

// Units in a marker slice: lines (LFs, plus an unterminated last line) or JSON elements.
uint64_t UnitsIn(const MarkerEntry& e, std::string_view slice) {
  if (e.kind == "elements") {
    auto v = internal::ParseJson("[" + std::string(slice) + "]");
    return v ? v->items.size() : 0;
  }
  if (e.kind == "sections") return TextSections(slice).size();
  uint64_t n = static_cast<uint64_t>(std::count(slice.begin(), slice.end(), '\n'));
  if (!slice.empty() && slice.back() != '\n') ++n;
  return n;
}

// Runs every check on one stored record; returns the number of markers.
// `preexisting`: marker objects the original held already (copied into the view as they are;
// they must sort after every new marker in the view).
size_t CheckRecord(Engine& engine, const std::string& handle, const std::string& type_in, const std::string& original,
                   const std::string& view, const std::string& label, size_t preexisting = 0) {
  SCOPED_TRACE(label);
  auto map = engine.RetrieveMarkerMap(handle);
  if (!map.ok()) {
    ADD_FAILURE() << "no map: " << map.status().message();
    return 0;
  }
  const std::vector<MarkerEntry>& markers = *map;
  std::string type = type_in;
  if (!markers.empty() && markers[0].kind == "elements") type = "json";
  // The view's own count of markers, found by their texts.
  size_t expected_markers = 0;
  for (std::string_view needle : {"elided (caveman)", "identical lines elided", "comment lines elided",
                                  "{\"__caveman_elided__\":", "/* caveman: body elided */"}) {
    for (size_t at = view.find(needle); at != std::string::npos; at = view.find(needle, at + 1)) ++expected_markers;
  }
  // Python bodies become `...`, which no needle can count.
  if (type != "code" || view.find("...") == std::string::npos) {
    EXPECT_EQ(markers.size() + preexisting, expected_markers);
  }
  std::string rebuilt, spliced;
  uint64_t pos = 0;
  size_t json_ordinal = 0;
  // Ranges in original order for the rebuild and the splice.
  std::vector<std::pair<const MarkerEntry*, std::string>> by_offset;
  for (const MarkerEntry& e : markers) {
    EXPECT_EQ(e.index, &e - markers.data() + 1);
    EXPECT_LT(e.byte_begin, e.byte_end) << "marker " << e.index;
    EXPECT_LE(e.byte_end, original.size());
    EXPECT_LE(e.first_line, e.last_line);
    StringSink slice;
    Status st = engine.RetrieveMarker(handle, e.index, slice);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(slice.data(), original.substr(e.byte_begin, e.byte_end - e.byte_begin)) << "marker " << e.index;
    if (e.kind != "body") {
      EXPECT_EQ(UnitsIn(e, slice.data()), e.count) << "marker " << e.index << " " << e.kind;
    }
    // Line numbers agree with the bytes.
    EXPECT_EQ(e.first_line, 1 + std::count(original.begin(), original.begin() + e.byte_begin, '\n'));
    std::string text = MarkerViewText(view, e, e.kind == "elements" ? json_ordinal++ : 0);
    EXPECT_FALSE(text.empty()) << "marker " << e.index << " has no text in the view";
    by_offset.emplace_back(&e, std::move(text));
    (void)slice;
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto& a, const auto& b) { return a.first->byte_begin < b.first->byte_begin; });
  const bool paragraphs = original.find("\n\n") != std::string::npos || original.find("\r\n\r\n") != std::string::npos;
  for (const auto& [e, text] : by_offset) {
    EXPECT_LE(pos, e->byte_begin) << "markers overlap";
    if (pos > e->byte_begin) return markers.size();
    rebuilt += original.substr(pos, e->byte_begin - pos);
    spliced += original.substr(pos, e->byte_begin - pos);
    StringSink slice;
    EXPECT_TRUE(engine.RetrieveMarker(handle, e->index, slice).ok());
    rebuilt += slice.data();
    spliced += text;
    const bool lf = e->byte_end > 0 && original[e->byte_end - 1] == '\n';
    if (type == "text") {
      if (e->byte_end < original.size()) spliced += paragraphs ? "\n\n" : "\n";
    } else if (lf && type != "json" && type != "code") {
      spliced += '\n';
    } else if (type == "code" && e->kind == "comment" && lf) {
      spliced += '\n';
    }
    pos = e->byte_end;
  }
  rebuilt += original.substr(pos);
  spliced += original.substr(pos);
  EXPECT_EQ(rebuilt, original);
  EXPECT_EQ(Normalise(type, spliced, false), Normalise(type, view, true));
  return markers.size();
}

std::unique_ptr<RecoveryStore> MemoryStore() { return std::move(OpenMemoryStore()).value(); }

// A golden fixture compressed with its forced type and query.
Result<CompressResult> CompressFixture(const Engine& engine, const Fixture& f, std::string* view) {
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = f.type;
  o.query = f.query;
  return engine.Compress(f.input, o, view);
}

TEST(MarkerMap, EveryGoldenFixtureMapsEachMarkerToTheUnitsItReplaced) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  size_t records = 0, markers = 0;
  std::map<std::string, size_t> kinds;
  for (const Fixture& f : GoldenFixtures()) {
    std::string view;
    auto r = CompressFixture(engine, f, &view);
    ASSERT_TRUE(r.ok()) << f.name;
    if (r->recovery_handle.empty()) continue;  // passed through: no record, no map
    ++records;
    const std::string type = f.type.empty() ? r->content_type : f.type;
    markers += CheckRecord(engine, r->recovery_handle, type, f.input, view, f.name + " as " + r->content_type);
    auto map = engine.RetrieveMarkerMap(r->recovery_handle);
    if (map.ok()) {
      for (const MarkerEntry& e : *map) ++kinds[e.kind];
    }
  }
  // The fixtures exercise every kind of marker the line and JSON compressors write.
  for (const char* kind :
       {"lines", "identical", "context", "search", "config", "rows", "sections", "elements", "body", "comment"}) {
    EXPECT_GT(kinds[kind], 0u) << kind;
    std::printf("kind %s: %zu\n", kind, kinds[kind]);
  }
  std::printf("records %zu, markers %zu\n", records, markers);
  EXPECT_GE(records, 40u);
  EXPECT_GE(markers, 100u);
}

// Issue 19: MarkerMapBlob serialises a line view's markers as it aligns them; the blob must be
// the general path's (BuildMarkerMap, then SerializeMarkerMap) for every view, aligned or not,
// spilled or in memory.
TEST(MarkerMap, StreamedBlobEqualsTheGeneralPath) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  size_t compared = 0;
  auto check = [&](std::string_view original, std::string_view view, const std::string& name) {
    for (size_t limit : {size_t{1} << 30, size_t{256}}) {
      Spool o(SpoolOptions{.memory_limit = limit});
      Spool v(SpoolOptions{.memory_limit = limit});
      ASSERT_TRUE(o.Write(original).ok());
      ASSERT_TRUE(v.Write(view).ok());
      Result<internal::MarkerMap> general = internal::BuildMarkerMap(o, v, {});
      ASSERT_TRUE(general.ok()) << name;
      EXPECT_EQ(internal::MarkerMapBlob(o, v, {}), internal::SerializeMarkerMap(*general)) << name;
      ++compared;
    }
  };
  for (const Fixture& f : GoldenFixtures()) {
    std::string view;
    auto r = CompressFixture(engine, f, &view);
    ASSERT_TRUE(r.ok()) << f.name;
    check(f.input, view, f.name);
  }
  check("a\nb\nc\n", "TEST SUMMARY: 1 passed\n", "unalignable");
  check("a\nb\n", "a\n\xE2\x80\xA6 5 lines elided (caveman) \xE2\x80\xA6\n", "overcounting marker");
  EXPECT_GE(compared, 80u);
}

// The line aligner skips a marker's lines without handing them out (issue 19): random
// originals (empty lines, lines longer than the reader's 64 KiB step, an unterminated last
// line) and views that keep some lines and replace runs of every length by markers, the
// original in memory and spilled; every entry must be the one computed here, and a marker
// that counts one line more than remain leaves the view unmapped.
TEST(MarkerMap, AlignerSkipsEachMarkersLinesExactly) {
  std::mt19937_64 rng(23);
  auto pick = [&](uint64_t n) { return rng() % n; };
  int markers_checked = 0;
  for (int round = 0; round < 120; ++round) {
    std::vector<std::string> lines;
    const size_t n = 1 + pick(round % 10 == 0 ? 3000 : 400);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t r = pick(100);
      const size_t len = r < 10 ? 0 : r < 12 ? 66000 + pick(5000) : pick(140);
      std::string line(len, 'a' + static_cast<char>(pick(26)));
      if (len > 0) line += std::to_string(i);  // no two lines alike
      lines.push_back(line);
    }
    const bool terminated = pick(3) != 0;
    if (!terminated && lines.back().empty()) lines.back() = "last";  // an unterminated line has bytes
    std::string original;
    std::vector<uint64_t> begin(n + 1);
    for (size_t i = 0; i < n; ++i) {
      begin[i] = original.size();
      original += lines[i];
      if (i + 1 < n || terminated) original += '\n';
    }
    begin[n] = original.size();
    // The view: kept lines and markers for runs of 1 to 300 lines.
    std::string view;
    std::vector<MarkerEntry> want;
    uint64_t view_line = 0;
    for (size_t i = 0; i < n;) {
      ++view_line;
      if (pick(3) == 0) {
        view += lines[i] + "\n";
        ++i;
        continue;
      }
      const size_t run = std::min<size_t>(n - i, 1 + pick(pick(4) == 0 ? 300 : 40));
      view += "\xE2\x80\xA6 " + std::to_string(run) + " lines elided (caveman) \xE2\x80\xA6\n";
      MarkerEntry e;
      e.index = want.size() + 1;
      e.view_line = view_line;
      e.count = run;
      e.first_line = i + 1;
      e.last_line = i + run;
      e.byte_begin = begin[i];
      e.byte_end = begin[i + run];
      want.push_back(e);
      i += run;
    }
    for (size_t limit : {size_t{1} << 30, size_t{256}}) {
      Spool o(SpoolOptions{.memory_limit = limit});
      Spool v(SpoolOptions{.memory_limit = limit});
      ASSERT_TRUE(o.Write(original).ok());
      ASSERT_TRUE(v.Write(view).ok());
      Result<internal::MarkerMap> map = internal::BuildMarkerMap(o, v, {});
      ASSERT_TRUE(map.ok());
      ASSERT_TRUE(map->mapped) << "round " << round << ": " << map->reason;
      ASSERT_EQ(map->markers.size(), want.size()) << "round " << round;
      for (size_t k = 0; k < want.size(); ++k) {
        const MarkerEntry& got = map->markers[k];
        SCOPED_TRACE(::testing::Message() << "round " << round << " marker " << k + 1);
        EXPECT_EQ(got.index, want[k].index);
        EXPECT_EQ(got.view_line, want[k].view_line);
        EXPECT_EQ(got.count, want[k].count);
        EXPECT_EQ(got.first_line, want[k].first_line);
        EXPECT_EQ(got.last_line, want[k].last_line);
        EXPECT_EQ(got.byte_begin, want[k].byte_begin);
        EXPECT_EQ(got.byte_end, want[k].byte_end);
        ++markers_checked;
      }
      if (!want.empty() && want.back().last_line == n) {
        // The last marker counting one line more than the original has.
        std::string over = view;
        const std::string old_text = " " + std::to_string(want.back().count) + " lines elided";
        const size_t at = over.rfind(old_text);
        ASSERT_NE(at, std::string::npos);
        over.replace(at, old_text.size(), " " + std::to_string(want.back().count + 1) + " lines elided");
        Spool v2(SpoolOptions{.memory_limit = limit});
        ASSERT_TRUE(v2.Write(over).ok());
        Result<internal::MarkerMap> bad = internal::BuildMarkerMap(o, v2, {});
        ASSERT_TRUE(bad.ok());
        EXPECT_FALSE(bad->mapped) << "round " << round;
      }
    }
  }
  EXPECT_GT(markers_checked, 1500);
}

// JSON: nested collapsed arrays, keys with escapes and `/` `~`, a duplicate key (the last one
// counts), pretty and compact layouts, and an original that already holds a marker object
// (then the tree walk is used instead of the one-pass scan).
TEST(MarkerMap, JsonRunsInNestedArraysEscapedAndDuplicateKeys) {
  auto records = [](int n, const std::string& prefix, bool nested) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) {
      if (i) s += ",\n    ";
      s += "{\"id\": \"" + prefix + std::to_string(i) + "\", \"state\": \"ok\", \"zone\": \"z" + std::to_string(i % 3) +
           "\"";
      if (nested && i == 1) {
        s += ", \"parts\": [";
        for (int k = 0; k < 30; ++k) s += std::string(k ? "," : "") + "{\"p\":\"q" + std::to_string(k) + "\",\"w\":1}";
        s += "]";
      }
      s += "}";
    }
    return s + "]";
  };
  const std::string base = "{\n  \"items\": " + records(40, "a", true) +
                           ",\n  \"we\\\"ird/k~ey\": " + records(25, "b", false) +
                           ",\n  \"dup\": [1, 2],\n  \"dup\": " + records(30, "c", false);
  const std::string inputs[] = {
      base + "\n}\n",
      base + ",\n  \"zz_old\": [{\"__caveman_elided__\": 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n}\n",
  };
  for (const std::string& input : inputs) {
    auto store = MemoryStore();
    Engine engine(EngineOptions{.store = store.get()});
    CompressOptions o;
    o.mode = Mode::kCompress;
    o.type = "json";
    std::string view;
    auto r = engine.Compress(input, o, &view);
    ASSERT_TRUE(r.ok());
    ASSERT_FALSE(r->recovery_handle.empty()) << view;
    ASSERT_EQ(r->method, "elision");
    const size_t preexisting = input.find("zz_old") != std::string::npos ? 1 : 0;
    EXPECT_GE(CheckRecord(engine, r->recovery_handle, "json", input, view, "json", preexisting), 4u);
    auto map = engine.RetrieveMarkerMap(r->recovery_handle);
    ASSERT_TRUE(map.ok());
    std::set<std::string> pointers;
    for (const MarkerEntry& e : *map) pointers.insert(e.pointer);
    EXPECT_TRUE(pointers.count("/items")) << view;
    EXPECT_TRUE(pointers.count("/items/1/parts")) << view;
    EXPECT_TRUE(pointers.count("/we\"ird~1k~0ey")) << view;
    EXPECT_TRUE(pointers.count("/dup")) << view;
  }
}

// Follow mode's map is written to a spool as markers arrive: past 1 MiB it is in the spool's
// file, not in memory (a 512 MiB follow run's map is 36 MB), and it reads back as the map of
// every marker, in order. Events out of order make it the unmapped map.
TEST(MarkerMap, FollowTrackerSpoolsItsMapBeyondOneMebibyte) {
  internal::OnlineMarkerTracker tracker;
  constexpr uint64_t kMarkers = 30000;
  uint64_t offset = 0;
  for (uint64_t i = 0; i < kMarkers; ++i) {
    OnlineEvent kept;
    kept.bytes = "kept line " + std::to_string(i) + "\n";
    kept.input_begin = offset;
    kept.input_end = offset + kept.bytes.size();
    kept.lines = 1;
    offset = kept.input_end;
    tracker.Add(kept);
    OnlineEvent marker;
    marker.bytes = "\xE2\x80\xA6 7 lines elided (caveman) \xE2\x80\xA6\n";
    marker.input_begin = offset;
    marker.input_end = offset + 700;
    marker.lines = 7;
    marker.lossy = true;
    offset = marker.input_end;
    tracker.Add(marker);
  }
  std::unique_ptr<Spool> blob = tracker.TakeBlob();
  ASSERT_TRUE(blob);
  EXPECT_GT(blob->size(), internal::OnlineMarkerTracker::kMemoryLimit);
  EXPECT_FALSE(blob->in_memory());
  Result<std::string> text = blob->ReadAllToString();
  ASSERT_TRUE(text.ok());
  Result<internal::MarkerMap> map = internal::ParseMarkerMap(*text);
  ASSERT_TRUE(map.ok()) << map.status().message();
  EXPECT_TRUE(map->mapped);
  ASSERT_EQ(map->markers.size(), kMarkers);
  EXPECT_EQ(map->markers[0].view_line, 2u);
  EXPECT_EQ(map->markers[0].first_line, 2u);
  EXPECT_EQ(map->markers[0].last_line, 8u);
  EXPECT_EQ(map->markers.back().byte_end, offset);
  EXPECT_EQ(map->markers.back().view_line, 2 * kMarkers);

  internal::OnlineMarkerTracker out_of_order;
  OnlineEvent a;
  a.bytes = "x\n";
  a.input_begin = 5;
  a.input_end = 7;
  a.lines = 1;
  out_of_order.Add(a);
  Result<std::string> unmapped = out_of_order.TakeBlob()->ReadAllToString();
  ASSERT_TRUE(unmapped.ok());
  Result<internal::MarkerMap> um = internal::ParseMarkerMap(*unmapped);
  ASSERT_TRUE(um.ok());
  EXPECT_FALSE(um->mapped);
  EXPECT_EQ(um->reason, "follow events out of order");
}

TEST(MarkerMap, OutOfRangeAndUnmappedRecordsAreClearErrors) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = "repetition";
  const std::string input = testing::ReadFile("fixtures/seed/pytest.log");
  std::string view;
  auto r = engine.Compress(input, o, &view);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->recovery_handle.empty());
  auto map = engine.RetrieveMarkerMap(r->recovery_handle);
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->size(), 3u);
  StringSink sink;
  Status st = engine.RetrieveMarker(r->recovery_handle, 4, sink);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "marker 4 out of range: the record has 3 markers");
  EXPECT_EQ(engine.RetrieveMarker(r->recovery_handle, 0, sink).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(sink.data().empty());
  EXPECT_EQ(engine.RetrieveMarkerMap("ccr_00000000000000000000000000000000").status().code(), StatusCode::kNotFound);

  // A record written without a map (as every record before schema 3).
  auto w = store->BeginRecord();
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("old record\n").ok());
  const std::string old = HandleFromDigest(Sha256::Digest("old record\n"));
  ASSERT_TRUE((*w)->Commit(old, RecordInfo{"log", "log", 3, 1, ""}).ok());
  auto none = engine.RetrieveMarkerMap(old);
  EXPECT_EQ(none.status().code(), StatusCode::kNotSupported);
  EXPECT_EQ(none.status().message(), "ccr: no marker map: the record was stored before marker maps");
}

TEST(MarkerMap, ReplacesTheMapWhenTheSameOriginalGetsANewView) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  const std::string input = testing::ReadFile("fixtures/log/app_logfmt.in");
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = "log";
  std::string v1, v2;
  auto r1 = engine.Compress(input, o, &v1);
  ASSERT_TRUE(r1.ok() && !r1->recovery_handle.empty());
  const size_t first = engine.RetrieveMarkerMap(r1->recovery_handle)->size();
  o.query = "r-10050";  // a request id inside the second marker's run: that line is kept now
  auto r2 = engine.Compress(input, o, &v2);
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2->recovery_handle, r1->recovery_handle);
  ASSERT_NE(v1, v2);
  CheckRecord(engine, r2->recovery_handle, "log", input, v2, "second view");
  EXPECT_GT(first, 0u);
}

TEST(MarkerMap, UnalignableViewIsRecordedAsUnmapped) {
  // A view that is not the original's lines and markers (a test-report summary).
  internal::MarkerMap m = internal::BuildMarkerMap("a\nb\nc\n", "TEST SUMMARY: 1 passed\n");
  EXPECT_FALSE(m.mapped);
  auto parsed = internal::ParseMarkerMap(internal::SerializeMarkerMap(m));
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->mapped);
  EXPECT_EQ(parsed->reason, m.reason);
  // A marker that claims more lines than remain.
  EXPECT_FALSE(internal::BuildMarkerMap("a\nb\n", "a\n\xE2\x80\xA6 5 lines elided (caveman) \xE2\x80\xA6\n").mapped);
  // Lines left over.
  EXPECT_FALSE(
      internal::BuildMarkerMap("a\nb\nc\nd\n", "a\n\xE2\x80\xA6 1 lines elided (caveman) \xE2\x80\xA6\n").mapped);
  EXPECT_FALSE(internal::ParseMarkerMap("garbage").ok());
}

// Note lines are synthesized lines the aligner skips; an original line that merely starts
// like one is not (a terminal view cleans `\e[1m# caveman: build started\e[0m` to that text).
TEST(MarkerMap, NoteLinesAreTheSynthesizedOnesOnly) {
  EXPECT_TRUE(internal::IsNoteLine("# caveman: 8 stanzas; same in each: Architecture: amd64"));
  EXPECT_TRUE(internal::IsNoteLine("# caveman: 12 stanzas"));
  EXPECT_FALSE(internal::IsNoteLine("# caveman: build started"));
  EXPECT_FALSE(internal::IsNoteLine("# caveman: 3 stanza"));
  EXPECT_TRUE(internal::IsNoteLine("\xE2\x80\xA6 caveman: elided lines resemble shown lines"));
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string input = "\x1b[1m# caveman: build started\x1b[0m\n";
  for (int i = 0; i < 40; ++i) input += "\x1b[32mok\x1b[0m step " + std::to_string(i) + " of the build\r\n";
  Fixture f{"terminal note-like line", "terminal", input, ""};
  std::string view;
  auto r = CompressFixture(engine, f, &view);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->recovery_handle.empty()) << view;
  ASSERT_EQ(view.rfind("# caveman: build started\n", 0), 0u) << view;
  CheckRecord(engine, r->recovery_handle, "terminal", input, view, f.name);
}

TEST(MarkerMap, BlobRoundTripsPointersWithAnyBytes) {
  internal::MarkerMap m;
  m.mapped = true;
  MarkerEntry e;
  e.index = 1;
  e.kind = "elements";
  e.view_line = 1;
  e.count = 7;
  e.first_line = 2;
  e.last_line = 9;
  e.byte_begin = 10;
  e.byte_end = 200;
  e.pointer = "/a b/%x/\n/~1/0";
  e.first_index = 3;
  e.last_index = 9;
  m.markers.push_back(e);
  auto back = internal::ParseMarkerMap(internal::SerializeMarkerMap(m));
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->markers.size(), 1u);
  const MarkerEntry& b = back->markers[0];
  EXPECT_EQ(b.pointer, e.pointer);
  EXPECT_EQ(b.kind, e.kind);
  EXPECT_EQ(b.byte_begin, 10u);
  EXPECT_EQ(b.byte_end, 200u);
  EXPECT_EQ(b.first_index, 3);
  EXPECT_EQ(b.last_index, 9);
  EXPECT_EQ(b.count, 7u);
}

// Follow mode: markers are recorded as they are queued; the stored map must not depend on
// how the input was chunked, and it passes the same checks as batch maps.
TEST(MarkerMap, FollowMapDoesNotDependOnChunking) {
  const fs::path root = fs::path(testing::SourceDir()) / "fixtures";
  const std::vector<std::pair<fs::path, std::string>> inputs = {
      {root / "follow" / "cmake-make-verbose.log", "log"},
      {root / "follow" / "ctest-output-on-failure.log", "log"},
      {root / "follow" / "npm-install.tty.log", "terminal"},
      {root / "follow" / "apt-get-reinstall.tty.log", "terminal"},
      {root / "seed" / "pytest.log", "repetition"},
      {root / "log" / "app_logfmt.in", "log"},
  };
  size_t total = 0;
  for (const auto& [path, type] : inputs) {
    const std::string input = Slurp(path);
    std::string reference;  // serialised map of the whole-input run
    for (size_t max_chunk : {input.size(), size_t{1}, size_t{3}, size_t{97}, size_t{4096}}) {
      auto store = MemoryStore();
      internal::FollowConfig config;
      config.counter = &DefaultTokenCounter();
      config.store = store.get();
      config.type = type;
      StringSink sink;
      internal::FollowSession session(config, sink);
      std::mt19937_64 rng(max_chunk);
      const auto now = internal::FollowClock::time_point{} + std::chrono::hours(1);  // no idle ticks
      for (size_t pos = 0; pos < input.size();) {
        const size_t n = std::min(input.size() - pos, 1 + static_cast<size_t>(rng() % max_chunk));
        ASSERT_TRUE(session.Push(std::string_view(input).substr(pos, n), now).ok());
        ASSERT_TRUE(session.Tick(now).ok());
        pos += n;
      }
      ASSERT_TRUE(session.EndOfInput(now).ok());
      CompressResult r = session.Finish();
      ASSERT_FALSE(r.recovery_handle.empty()) << path;
      Engine engine(EngineOptions{.store = store.get()});
      auto map = engine.RetrieveMarkerMap(r.recovery_handle);
      ASSERT_TRUE(map.ok()) << map.status().message();
      internal::MarkerMap m{true, {}, *map};
      const std::string blob = internal::SerializeMarkerMap(m);
      if (reference.empty()) {
        reference = blob;
        total += CheckRecord(engine, r.recovery_handle, type, input, sink.data(), path.string() + " follow");
      } else {
        EXPECT_EQ(blob, reference) << path << " max chunk " << max_chunk;
      }
    }
  }
  EXPECT_GE(total, 20u);
}

}  // namespace
}  // namespace caveman
