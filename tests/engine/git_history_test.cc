// git history (issue 16): `git log`, `git log --stat`, `git log -p`, `git show` and
// `--format=fuller` output of this repository (fixtures/git/) keeps every commit header block
// — the commit line through the subject line — and every file-stat line, in batch compress
// (log or diff, as detected) and in follow mode; and the tracker's line rules.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <string>
#include <vector>

#include "compressors/detect.h"
#include "compressors/lines.h"
#include "compressors/log_rules.h"
#include "compressors/online.h"
#include "caveman/engine/engine.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

struct Fixture {
  const char* file;
  const char* type;
};
constexpr Fixture kFixtures[] = {
    {"fixtures/git/log.txt", "log"},    {"fixtures/git/log_stat.txt", "log"}, {"fixtures/git/log_fuller.txt", "log"},
    {"fixtures/git/log_p.txt", "diff"}, {"fixtures/git/show.txt", "diff"},
};

// Header lines found independently of GitHistoryTracker: commit lines, `Key: value` lines
// right after them, and the first indented line after the blank line (the subject); stats.
std::vector<std::string> ExpectedHeaders(const std::string& text) {
  static const RE2 kCommit("^commit [0-9a-f]{40}( \\(.*\\))?$");
  static const RE2 kKey("^(Author|AuthorDate|Commit|CommitDate|Date|Merge): .*");
  static const RE2 kStat("^ \\S.* \\| +([0-9]+ ?[-+]*|Bin .*)$|^ [0-9]+ files? changed.*");
  std::vector<std::string> out;
  internal::SplitResult split = internal::SplitLines(text);
  bool in_header = false, want_subject = false;
  for (std::string_view line : split.lines) {
    std::string l(line);
    if (RE2::FullMatch(l, kCommit)) {
      out.push_back(l);
      in_header = true;
      continue;
    }
    if (in_header && RE2::FullMatch(l, kKey)) {
      out.push_back(l);
      continue;
    }
    if (in_header && l.empty()) {
      in_header = false;
      want_subject = true;
      continue;
    }
    in_header = false;
    if (want_subject && l.rfind("    ", 0) == 0) {
      out.push_back(l);
      want_subject = false;
      continue;
    }
    want_subject = false;
    if (RE2::FullMatch(l, kStat)) out.push_back(l);
  }
  return out;
}

// Every expected header appears in `view` as a whole line, in order.
void ExpectHeadersInOrder(const std::vector<std::string>& headers, const std::string& view, const char* what) {
  internal::SplitResult split = internal::SplitLines(view);
  size_t k = 0;
  for (std::string_view line : split.lines) {
    if (k < headers.size() && line == headers[k]) ++k;
  }
  EXPECT_EQ(k, headers.size()) << what << ": header " << (k < headers.size() ? headers[k] : "") << " missing";
}

struct Capture final : OnlineSink {
  void Emit(OnlineEvent&& e) override { text += e.bytes; }
  std::string text;
};

TEST(GitHistory, HeadersSurviveBatchAndFollow) {
  auto store = std::move(OpenMemoryStore()).value();
  Engine engine(EngineOptions{.store = store.get()});
  for (const Fixture& f : kFixtures) {
    const std::string in = testing::ReadFile(f.file);
    ASSERT_FALSE(in.empty()) << f.file;
    EXPECT_EQ(Detect(in), f.type) << f.file;
    const std::vector<std::string> headers = ExpectedHeaders(in);
    ASSERT_GE(headers.size(), 3u) << f.file;
    CompressOptions o;
    o.mode = Mode::kCompress;
    std::string view;
    auto r = engine.Compress(in, o, &view);
    ASSERT_TRUE(r.ok()) << f.file;
    EXPECT_EQ(r->content_type, f.type) << f.file;
    ExpectHeadersInOrder(headers, view, f.file);
    // Forced to log (the type `run -- git log` hints), every header survives too.
    o.type = "log";
    std::string log_view;
    ASSERT_TRUE(engine.Compress(in, o, &log_view).ok());
    ExpectHeadersInOrder(headers, log_view, f.file);
    // Follow mode's online log stage.
    auto stage = NewOnlineStage("log", "");
    Capture cap;
    const size_t body = in.rfind('\n') + 1;
    stage->PushLines(std::string_view(in).substr(0, body), 0, cap);
    stage->Finish(std::string_view(in).substr(body), body, false, cap);
    ExpectHeadersInOrder(headers, cap.text, f.file);
  }
}

TEST(GitHistory, TrackerLines) {
  EXPECT_TRUE(internal::IsGitCommitLine("commit 0123456789abcdef0123456789abcdef01234567"));
  EXPECT_TRUE(internal::IsGitCommitLine("commit 0123abc (HEAD -> main, origin/main)"));
  EXPECT_TRUE(internal::IsGitCommitLine("commit 0123456789abcdef0123456789abcdef01234567\r"));
  EXPECT_FALSE(internal::IsGitCommitLine("commit this change"));
  EXPECT_FALSE(internal::IsGitCommitLine("commit 12ab"));
  EXPECT_FALSE(internal::IsGitCommitLine("  commit 0123456789abcdef"));
  internal::GitHistoryTracker t;
  const std::vector<std::pair<std::string, bool>> lines = {
      {"Author: nobody", false},  // before any commit line: nothing is a header
      {"commit 0123456789abcdef0123456789abcdef01234567", true},
      {"Merge: 0123456 89abcde", true},
      {"Author: A U Thor <a@example.com>", true},
      {"Date:   Thu Dec 3 08:00:00 2026 +0000", true},
      {"", true},
      {"    Subject line", true},
      {"", false},
      {"    Body line one", false},
      {"    Author: quoted in the body", false},
      {"", false},
      {" src/a.cc       | 12 ++++++------", true},
      {" bin/blob       | Bin 0 -> 120 bytes", true},
      {" 2 files changed, 6 insertions(+), 6 deletions(-)", true},
      {"diff --git a/src/a.cc b/src/a.cc", false},
      {"+int x = a | b;", false},
  };
  for (const auto& [line, header] : lines) EXPECT_EQ(t.Feed(line), header) << line;
}

}  // namespace
}  // namespace caveman
