// Issue 16, whole-pipeline line-structure property: for every golden input of the repository
// (fixtures/**/*.in, *.txt, *.log, *.jsonl), `compress` with auto-detection gives a view in which
// each line is a line of the input, in order, or a synthesized caveman line (marker or note), and
// the view keeps the input's line-ending convention. Where every marker of the view states how
// many input lines it replaced ("… N lines elided …", "… caveman: N identical lines elided …"),
// kept lines plus those counts add up to the input's line count exactly.
//
// Scope: views of the line types (log, repetition, diff, search-result, config, tabular, text).
// terminal is left out on purpose: it rewrites lines (ANSI removal, carriage-return overwrites)
// before eliding, so its lines are not input lines by design; code, JSON, HTML and test reports
// restructure by design too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "caveman/engine/engine.h"
#include "engine/internal/stages.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kLineTypes = {"log", "repetition", "diff", "search-result", "config", "tabular", "text"};

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> v;
  size_t b = 0;
  for (size_t e = s.find('\n'); e != std::string::npos; b = e + 1, e = s.find('\n', b)) {
    v.push_back(s.substr(b, e - b));
  }
  if (b < s.size()) v.push_back(s.substr(b));
  return v;
}

bool MajorityCrlf(const std::string& s) {
  size_t lf = 0, crlf = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n') continue;
    ++lf;
    if (i > 0 && s[i - 1] == '\r') ++crlf;
  }
  return lf > 0 && crlf * 2 > lf;
}

// The input lines a marker line says it replaced, if it says so in lines.
std::optional<size_t> MarkerLineCount(const std::string& line) {
  const std::string ellipsis = "\xE2\x80\xA6 ";
  size_t p = line.find(ellipsis);
  if (p == std::string::npos) return std::nullopt;
  p += ellipsis.size();
  if (line.compare(p, 8, "caveman:") == 0) p += 9;  // "… caveman: N identical lines elided …"
  size_t q = p;
  while (q < line.size() && isdigit(static_cast<unsigned char>(line[q]))) ++q;
  if (q == p) return std::nullopt;
  const std::string rest = line.substr(q);
  if (rest.find(" lines elided") == std::string::npos && rest.find(" rows elided") == std::string::npos) {
    return std::nullopt;
  }
  return std::stoul(line.substr(p, q - p));
}

std::vector<fs::path> GoldenInputs() {
  std::vector<fs::path> v;
  for (const auto& e : fs::recursive_directory_iterator("fixtures")) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext == ".in" || ext == ".txt" || ext == ".log" || ext == ".jsonl") v.push_back(e.path());
  }
  std::sort(v.begin(), v.end());
  return v;
}

TEST(LineStructure, EveryGoldenViewIsInputLinesAndMarkers) {
  auto store = OpenMemoryStore(StoreOptions{});
  ASSERT_TRUE(store.ok());
  Engine engine(EngineOptions{.store = store->get()});
  size_t checked = 0, counted = 0;
  std::set<std::string> types_seen;
  for (const fs::path& path : GoldenInputs()) {
    const std::string in = testing::ReadFile(path.string());
    CompressOptions o;
    o.mode = Mode::kCompress;
    std::string out;
    auto r = engine.Compress(in, o, &out);
    ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
    if (out == in || kLineTypes.count(r->content_type) == 0) continue;
    // Delimited tables (Markdown, CSV, TSV) are re-rendered as a Markdown table by §5.13; only
    // fixed-width tables keep their lines.
    const std::string first = in.substr(0, in.find('\n'));
    if (r->content_type == "tabular" && (first.find('|') != std::string::npos || first.find(',') != std::string::npos ||
                                         first.find('\t') != std::string::npos)) {
      continue;
    }
    SCOPED_TRACE(path.string() + " (" + r->content_type + ")");
    ++checked;
    types_seen.insert(r->content_type);
    EXPECT_EQ(MajorityCrlf(out), MajorityCrlf(in)) << "line endings changed";
    const std::vector<std::string> in_lines = Lines(in);
    size_t k = 0;        // next input line a kept line may match
    size_t covered = 0;  // kept lines + counted marker lines
    bool all_counted = true;
    for (const std::string& line : Lines(out)) {
      if (line.find("caveman") != std::string::npos) {
        if (auto n = MarkerLineCount(line)) {
          covered += *n;
        } else {
          all_counted = false;
        }
        continue;
      }
      while (k < in_lines.size() && in_lines[k] != line) ++k;
      if (k >= in_lines.size()) {
        ADD_FAILURE() << "view line is no input line (in order): [" << line << "]";
        all_counted = false;
        break;
      }
      ++k;
      ++covered;
    }
    if (all_counted && r->content_type != "text") {
      ++counted;
      EXPECT_EQ(covered, in_lines.size()) << "markers' counts do not add up";
    }
  }
  // The property must have had something to check: most golden inputs are line types.
  EXPECT_GE(checked, 20u);
  EXPECT_GE(counted, 10u);
  EXPECT_GE(types_seen.size(), 5u);
  std::string seen;
  for (const auto& t : types_seen) seen += t + " ";
  RecordProperty("types", seen);
  std::printf("line structure: %zu views checked, %zu with exact counts; types %s\n", checked, counted, seen.c_str());
}

// The guard's rule on its own: dropping lines and adding caveman lines keeps the structure;
// reshaping, reordering, adding a blank line or changing the endings does not.
TEST(LineStructure, GuardRule) {
  const std::string y = "alpha\n  beta\ngamma\ndelta\n";
  EXPECT_TRUE(internal::KeepsLineStructure(y, y));
  EXPECT_TRUE(internal::KeepsLineStructure(y, "alpha\n\xE2\x80\xA6 2 lines elided (caveman) \xE2\x80\xA6\ndelta\n"));
  EXPECT_FALSE(internal::KeepsLineStructure(y, "alpha\nbeta\ngamma\n"));  // indentation lost
  EXPECT_FALSE(internal::KeepsLineStructure(y, "gamma\nalpha\n"));        // reordered
  EXPECT_FALSE(internal::KeepsLineStructure(y, "alpha\n\n  beta\n"));     // blank line added
  const std::string crlf = "alpha\r\n  beta\r\ngamma\r\n";
  EXPECT_TRUE(internal::KeepsLineStructure(crlf, "alpha\r\ngamma\r\n"));
  EXPECT_FALSE(internal::KeepsLineStructure(crlf, "alpha\ngamma\n"));  // CRs lost
}

}  // namespace
}  // namespace caveman
