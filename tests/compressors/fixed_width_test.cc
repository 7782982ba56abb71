// Fixed-width column tables (docs/DECISIONS.md "Fixed-width tables"): the parser, detection
// and the tabular compressor over the real tool outputs of fixtures/tables/ (README there).
//
// Golden: fixtures/tables/<name>.txt against <name>.expected (the view, byte for byte);
// CAVEMAN_UPDATE_GOLDEN=1 rewrites the .expected files (review them before committing).
#include "compressors/internal/fixed_width.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/detect.h"
#include "compressors/lines.h"
#include "compressors/tabular.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Fixture(const std::string& name) { return testing::ReadFile("fixtures/tables/" + name); }

std::string ToCrlf(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out.push_back('\r');
    out.push_back(c);
  }
  return out;
}

constexpr std::string_view kMarker = "rows elided (caveman)";

// The number N of a marker line "… N rows elided (caveman)…", 0 for other lines.
size_t MarkerCount(std::string_view line) {
  if (!internal::IsCavemanLine(line) || line.find(kMarker) == std::string_view::npos) return 0;
  return std::stoul(std::string(line.substr(4)));  // after "… " (4 bytes)
}

struct Case {
  const char* file;
  const char* command;  // what produced it (README)
  size_t columns;
  size_t markers;                 // marker lines in the view
  size_t elided;                  // rows the markers account for
  bool note;                      // contract note (≥ 4,096 elided bytes)
  std::vector<const char*> kept;  // substrings of rows that must be kept (anomalies)
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"df_ha.txt",
       "df -ha <mounts>",
       6,
       1,
       8,
       false,
       {" 96% /tmp/tables_fx/mnt2", " 91% /tmp/tables_fx/mnt4", "Filesystem      Size"}},
      {"ps_u.txt",
       "ps u --ppid 2,<pid> -p <pids>",
       11,
       5,
       44,
       false,
       {"[python3] <defunct>", " T    08:44   0:00 sleep 3600", " T    08:44   0:00 /bin/bash ./start.sh", "470248"}},
      {"ss_tan.txt",
       "ss -tan <port filter>",
       6,
       3,
       33,
       false,
       {"CLOSE-WAIT 791    0          127.0.0.1:51920", "CLOSE-WAIT 791    0          127.0.0.1:59366",
        "FIN-WAIT-2 0      0          127.0.0.1:18084", "FIN-WAIT-2 0      0          127.0.0.1:18083"}},
      {"ss_tanp.txt",
       "ss -tanp <port filter>",
       6,
       4,
       35,
       false,
       {"CLOSE-WAIT 791", "pid=20496,fd=3", "FIN-WAIT-2 0      0          127.0.0.1:18083"}},
      {"lsof_i.txt", "lsof -nP -a -i -p <pids>", 9, 2, 31, false, {"(CLOSE_WAIT)", "(LISTEN)"}},
      {"lsof_p.txt", "lsof -nP -p <pids>", 9, 10, 426, true, {"COMMAND    PID USER"}},
      // Every row says "Permission denied": the alarm is the norm, not an anomaly.
      {"lsof_denied.txt",
       "lsof (every row unreadable)",
       11,
       3,
       290,
       true,
       {"COMMAND     PID   TID", "/proc/1/fd/284 (readlink: Permission denied)"}},
      {"dpkg_l.txt",
       "dpkg -l",
       5,
       14,
       793,
       true,
       {"Desired=Unknown", "||/ Name", "+++-===", "ii  adduser", "ii  zstd"}},
      {"kubectl_get_pods_A.handbuilt.txt",
       "kubectl get pods -A (hand-built)",
       6,
       5,
       24,
       false,
       {"CrashLoopBackOff   17 (2m14s ago)", "OOMKilled", "ImagePullBackOff", " Error ", " Pending ", " Evicted ",
        "2 (9d ago)", "1/2     Running            3 (4h12m ago)"}},
      {"docker_ps.handbuilt.txt",
       "docker ps (hand-built)",
       7,
       4,
       13,
       false,
       {"(unhealthy)", "Restarting (1)", "Exited (137)", "Exited (1) 26 hours ago"}},
  };
  return cases;
}

std::vector<std::string_view> Lines(std::string_view s) { return internal::SplitLines(s).lines; }

// Every view line is an input line (in order) or a marker/note line; the markers account for
// exactly the input lines that are missing.
void ExpectLineStructure(const std::string& in, const std::string& out, bool crlf, size_t* markers, size_t* elided,
                         bool* note) {
  const auto in_lines = Lines(in);
  const auto out_lines = Lines(out);
  *markers = *elided = 0;
  *note = false;
  size_t k = 0;
  for (std::string_view line : out_lines) {
    if (internal::IsCavemanLine(line)) {
      EXPECT_EQ(!line.empty() && line.back() == '\r', crlf) << line;
      if (size_t n = MarkerCount(line); n > 0) {
        ++*markers;
        *elided += n;
        k += n;
      } else {
        *note = true;
      }
      continue;
    }
    ASSERT_LT(k, in_lines.size()) << "extra line: " << line;
    EXPECT_EQ(line, in_lines[k]) << "kept line " << k << " not byte-identical";
    ++k;
  }
  EXPECT_EQ(k, in_lines.size()) << "markers do not add up";
}

TEST(FixedWidthTables, FixturesDetectAsTabular) {
  for (const Case& c : Cases()) {
    const std::string in = Fixture(c.file);
    EXPECT_EQ(DetectBody(in), "tabular") << c.file;
    EXPECT_EQ(DetectBody(ToCrlf(in)), "tabular") << c.file;
    auto t = internal::ParseFixedWidth(in);
    ASSERT_TRUE(t.has_value()) << c.file;
    EXPECT_EQ(t->names.size(), c.columns) << c.file;
  }
}

TEST(FixedWidthTables, ColumnNamesAndCells) {
  const std::string ss = Fixture("ss_tan.txt");
  auto t = internal::ParseFixedWidth(ss);
  ASSERT_TRUE(t.has_value());
  // Header words that are not column starts in the rows join their neighbour.
  EXPECT_EQ(t->names, (std::vector<std::string>{"State", "Recv-Q", "Send-Q", "Local Address:Port", "Peer Address:Port",
                                                "Process"}));
  std::vector<std::string_view> cells;
  internal::FixedWidthCells(*t, t->split.lines[5], &cells);
  EXPECT_EQ(cells, (std::vector<std::string_view>{"CLOSE-WAIT", "791", "0", "127.0.0.1:51920", "127.0.0.1:18084", ""}));
  // ss right-aligns the peer address up to the header's one-space gap before "Process".
  // The parsed table holds views into its input: keep the input alive while it is used.
  const std::string ssp = Fixture("ss_tanp.txt");
  t = internal::ParseFixedWidth(ssp);
  ASSERT_TRUE(t.has_value());
  internal::FixedWidthCells(*t, t->split.lines[5], &cells);
  EXPECT_EQ(cells[4], "127.0.0.1:18084");
  EXPECT_EQ(cells[5], "users:((\"python3\",pid=20496,fd=4))");

  const std::string ps = Fixture("ps_u.txt");
  t = internal::ParseFixedWidth(ps);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->names.back(), "COMMAND");
  // Right-aligned numbers wider than their header word, free text in the last column.
  internal::FixedWidthCells(*t,
                            "root     19293  0.4  0.0 470248 21436 ?        Sl   08:44   0:00 "
                            "/usr/bin/python3 -m http.server 18081",
                            &cells);
  EXPECT_EQ(cells, (std::vector<std::string_view>{"root", "19293", "0.4", "0.0", "470248", "21436", "?", "Sl", "08:44",
                                                  "0:00", "/usr/bin/python3 -m http.server 18081"}));

  const std::string dpkg = Fixture("dpkg_l.txt");
  t = internal::ParseFixedWidth(dpkg);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->header, 3u);      // after the three legend lines
  EXPECT_EQ(t->data_begin, 5u);  // the +++-=== separator belongs to the header

  // docker truncates with "…": columns are code points, not bytes.
  const std::string docker = Fixture("docker_ps.handbuilt.txt");
  t = internal::ParseFixedWidth(docker);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->names.front(), "CONTAINER ID");
  internal::FixedWidthCells(*t, t->split.lines[2], &cells);
  EXPECT_EQ(cells[2], "\"docker-entrypoint.s\xE2\x80\xA6\"");
  EXPECT_EQ(cells[3], "3 days ago");
  EXPECT_EQ(cells[6], "db");
}

TEST(FixedWidthTables, GoldenViewsKeptLinesAndMarkerCounts) {
  const bool update = std::getenv("CAVEMAN_UPDATE_GOLDEN") != nullptr;
  auto tabular = NewTabularCompressor();
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.file);
    const std::string in = Fixture(c.file);
    auto out = RunOnString(*tabular, in);
    ASSERT_TRUE(out.has_value());
    std::string base(c.file);
    base.resize(base.size() - 4);  // .txt
    const std::string expected_rel = "fixtures/tables/" + base + ".expected";
    if (update) {
      std::ofstream(testing::SourceDir() + "/" + expected_rel, std::ios::binary) << *out;
    } else {
      EXPECT_EQ(*out, testing::ReadFile(expected_rel));
    }
    EXPECT_LT(out->size(), in.size());
    size_t markers = 0, elided = 0;
    bool note = false;
    ExpectLineStructure(in, *out, /*crlf=*/false, &markers, &elided, &note);
    EXPECT_EQ(markers, c.markers);
    EXPECT_EQ(elided, c.elided);
    EXPECT_EQ(note, c.note);
    for (const char* k : c.kept) {
      bool found = false;
      for (std::string_view line : Lines(*out)) {
        found = found || (!internal::IsCavemanLine(line) && line.find(k) != std::string_view::npos);
      }
      EXPECT_TRUE(found) << "not kept: " << k;
    }
    // Idempotent: the view is still a table and compressing it again declines.
    EXPECT_EQ(DetectBody(*out), "tabular");
    EXPECT_FALSE(RunOnString(*tabular, *out).has_value());
  }
}

TEST(FixedWidthTables, CrlfInputKeepsCrlfLinesAndMarkers) {
  auto tabular = NewTabularCompressor();
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.file);
    const std::string lf = Fixture(c.file);
    const std::string in = ToCrlf(lf);
    auto out = RunOnString(*tabular, in);
    ASSERT_TRUE(out.has_value());
    size_t markers = 0, elided = 0;
    bool note = false;
    ExpectLineStructure(in, *out, /*crlf=*/true, &markers, &elided, &note);
    // The same rows are kept as for LF input.
    auto lf_out = RunOnString(*tabular, lf);
    ASSERT_TRUE(lf_out.has_value());
    std::string stripped;
    for (char ch : *out) {
      if (ch != '\r') stripped.push_back(ch);
    }
    EXPECT_EQ(stripped, *lf_out);
    EXPECT_EQ(DetectBody(*out), "tabular");
    EXPECT_FALSE(RunOnString(*tabular, *out).has_value());
  }
}

TEST(FixedWidthTables, QueryKeepsMatchingRows) {
  const std::string in = Fixture("dpkg_l.txt");
  auto out = RunOnString(*NewTabularCompressor(), in, "libsqlite3");
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("ii  libsqlite3-0:amd64"), std::string::npos);
}

// docs/DECISIONS.md, "An alarm on most rows is the norm": the same rows with the alarm on one
// row only keep that row.
TEST(FixedWidthTables, AnAlarmOnFewRowsIsKeptOnMostRowsIsTheNorm) {
  const std::string in = Fixture("lsof_denied.txt");
  const std::string denied = " (readlink: Permission denied)";
  std::string one;
  size_t rows = 0;
  for (std::string_view line : Lines(in)) {
    std::string l(line);
    if (++rows != 150) {
      const size_t at = l.find(denied);
      if (at != std::string::npos) l.erase(at);
    }
    one += l + "\n";
  }
  auto tabular = NewTabularCompressor();
  auto out = RunOnString(*tabular, one);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find(denied), std::string::npos);  // the one alarm row is shown
  size_t shown = 0;
  for (std::string_view line : Lines(*out)) shown += line.find(denied) != std::string_view::npos;
  EXPECT_EQ(shown, 1u);
  auto all = RunOnString(*tabular, in);
  ASSERT_TRUE(all.has_value());
  EXPECT_LT(Lines(*all).size(), 20u);  // every row denied: not 300 kept rows
}

TEST(FixedWidthTables, SmallTablesAreDeclined) {
  const std::string in = Fixture("kubectl_get_pods_A.handbuilt.txt");
  std::string head;
  size_t lines = 0;
  for (size_t p = 0; lines < 11; ++lines) p = in.find('\n', p) + 1, head = in.substr(0, p);
  EXPECT_EQ(DetectBody(head), "tabular");                                // header + 10 rows
  EXPECT_FALSE(RunOnString(*NewTabularCompressor(), head).has_value());  // below 12 rows
}

// Near misses: aligned-looking text that is not a fixed-width table.
TEST(FixedWidthTables, NearMissesAreNotTables) {
  // `ip -br addr`: aligned, but no header row.
  EXPECT_FALSE(internal::ParseFixedWidth(Fixture("ip_br_addr.txt")).has_value());
  EXPECT_NE(DetectBody(Fixture("ip_br_addr.txt")), "tabular");

  // A title-case heading over prose.
  std::string prose = "Release Notes  For Version Two\n";
  for (int i = 0; i < 12; ++i) {
    prose += "This release fixes a number of problems reported by users of the " + std::to_string(i) +
             " series and improves the documentation considerably.\n";
  }
  EXPECT_FALSE(internal::IsFixedWidthTable(prose));
  EXPECT_NE(DetectBody(prose), "tabular");

  // A log with fixed-width fields: the first line is a log line.
  std::string log;
  for (int i = 0; i < 20; ++i) {
    log += "2026-12-03 08:4" + std::to_string(i % 10) + ":00  INFO   worker-" + std::to_string(i % 3) +
           "   processed batch " + std::to_string(i) + "\n";
  }
  EXPECT_EQ(DetectBody(log), "log");

  // Code with aligned trailing comments.
  std::string code = "struct Options {\n";
  for (int i = 0; i < 12; ++i) {
    code += "  int    field_" + std::to_string(i) + " = 0;   // Default: " + std::to_string(i) + "\n";
  }
  code += "};\n";
  EXPECT_FALSE(internal::IsFixedWidthTable(code));
  EXPECT_NE(DetectBody(code), "tabular");

  // A header row followed by free prose: the columns are not stable.
  std::string ragged = "NAME     STATUS   AGE\n";
  const char* sentences[] = {"the deployment was rolled back twice before anyone noticed",
                             "metrics looked fine until midnight",
                             "a second replica came up on the wrong node pool",
                             "nobody owns the cron job that rotates these certificates",
                             "restarting it helped for about an hour",
                             "disk pressure on two workers",
                             "we should page the storage team next time",
                             "probes were pointing at the old port after the migration",
                             "it recovered by itself",
                             "the alert fired but went to an archived channel",
                             "load balancer health checks were too aggressive",
                             "follow-up ticket filed"};
  for (const char* line : sentences) ragged += std::string(line) + "\n";
  EXPECT_FALSE(internal::IsFixedWidthTable(ragged));

  // Seven rows: below detection's floor of eight.
  std::string small = "NAME     STATUS    AGE\n";
  for (int i = 0; i < 6; ++i) small += "web-" + std::to_string(i) + "    Running   3d\n";
  EXPECT_TRUE(internal::ParseFixedWidth(small).has_value());
  EXPECT_FALSE(internal::IsFixedWidthTable(small));

  // Markdown and CSV tables keep their own parser (rule 7 tries it first).
  std::string md = "| Name     | Status  |\n|----------|---------|\n";
  for (int i = 0; i < 10; ++i) md += "| web-" + std::to_string(i) + "    | Running |\n";
  EXPECT_EQ(DetectBody(md), "tabular");
  EXPECT_EQ(TableRowCount(md), 12u);
}

TEST(FixedWidthTables, MarkerAndNoteLinesAreNotRows) {
  EXPECT_TRUE(internal::IsCavemanLine("\xE2\x80\xA6 3 rows elided (caveman) \xE2\x80\xA6"));
  EXPECT_FALSE(internal::IsCavemanLine("... 3 rows elided (caveman) ..."));
  std::string view = "NAME     STATUS    AGE\n";
  for (int i = 0; i < 3; ++i) view += "web-" + std::to_string(i) + "    Running   3d\n";
  view += "\xE2\x80\xA6 40 rows elided (caveman): all STATUS=Running AGE=3d \xE2\x80\xA6\n";
  for (int i = 0; i < 3; ++i) view += "db-" + std::to_string(i) + "     Running   3d\n";
  EXPECT_TRUE(internal::IsFixedWidthTable(view));
  EXPECT_EQ(DetectBody(view), "tabular");
}

}  // namespace
}  // namespace caveman
