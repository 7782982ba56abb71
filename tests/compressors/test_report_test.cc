#include "compressors/test_report.h"

#include <string>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "caveman/stream/tokens.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Compress(std::string_view in) {
  auto c = NewTestReportCompressor();
  std::optional<std::string> out = RunOnString(*c, in);
  return out ? *out : std::string("<declined>");
}

TEST(TestReportTest, JUnitCountsFailuresAndDuration) {
  const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="a" time="1.3">
    <testcase classname="pkg.A" name="ok1"/>
    <testcase classname="pkg.A" name="bad">
      <failure message="expected 1 got 2">Traceback
  at pkg.A.bad(A.java:10)
  at pkg.Runner.run(Runner.java:5)
</failure>
    </testcase>
    <testcase classname="same" name="same"><error>boom &amp; bust
at x.go:1</error></testcase>
    <testcase name="sk"><skipped/></testcase>
  </testsuite>
  <testsuite name="b" time="2.0s"><testcase name="ok2"/></testsuite>
</testsuites>
)";
  EXPECT_EQ(Compress(xml),
            "TEST SUMMARY: 2 passed, 1 failed, 1 errors, 1 skipped (3.3s)\n"
            "\n"
            "FAILED: pkg.A::bad\n"
            "  expected 1 got 2\n"
            "  at pkg.A.bad(A.java:10)\n"
            "  at pkg.Runner.run(Runner.java:5)\n"
            "\n"
            "ERROR: same\n"
            "  boom & bust\n"
            "  at x.go:1\n"
            "  at x.go:1\n");
  EXPECT_TRUE(ParsesAsTestReport(xml));
}

TEST(TestReportTest, JUnitSingleSuiteRoot) {
  EXPECT_EQ(Compress("<testsuite><testcase name='t'/></testsuite>"), "TEST SUMMARY: 1 passed\n");
}

TEST(TestReportTest, RejectsUndefinedEntitiesAndBadXml) {
  EXPECT_FALSE(ParsesAsTestReport("<testsuite><testcase name='a&nbsp;'/></testsuite>"));
  EXPECT_FALSE(ParsesAsTestReport("<testsuite><testcase name='a'></testsuite>"));
  EXPECT_FALSE(ParsesAsTestReport("<testsuite></testsuite><testsuite/>"));
  EXPECT_FALSE(ParsesAsTestReport("<testsuite/>"));  // zero tests
  EXPECT_FALSE(ParsesAsTestReport("<other><testcase name='a'/></other>"));
  EXPECT_FALSE(ParsesAsTestReport("<testsuites><x/></testsuites>"));
  // A DTD is skipped; character references are fine.
  EXPECT_TRUE(ParsesAsTestReport(
      "<!DOCTYPE testsuite [<!ENTITY x \"y\">]><testsuite><testcase name='&#65;&#x42;'/></testsuite>"));
  EXPECT_FALSE(ParsesAsTestReport("<testsuite><testcase name='&#0;'/></testsuite>"));
  EXPECT_FALSE(ParsesAsTestReport("\xff<testsuite><testcase/></testsuite>"));
  EXPECT_FALSE(ParsesAsTestReport("   "));
  EXPECT_FALSE(ParsesAsTestReport("hello"));
}

TEST(TestReportTest, TrimStackOmitsMiddleFrames) {
  std::string frames;
  for (int i = 0; i < 10; ++i) frames += "  at f" + std::to_string(i) + " (a.js:" + std::to_string(i) + ")\nnoise\n";
  std::string xml =
      "<testsuite><testcase name='t'><failure message='m'>" + frames + "</failure></testcase></testsuite>";
  EXPECT_EQ(Compress(xml),
            "TEST SUMMARY: 1 failed\n\nFAILED: t\n  m\n"
            "  at f0 (a.js:0)\n  at f1 (a.js:1)\n  at f2 (a.js:2)\n"
            "  ... (5 frames omitted)\n"
            "  at f8 (a.js:8)\n  at f9 (a.js:9)\n");
}

TEST(TestReportTest, MessageFallsBackToCharacterData) {
  std::string xml =
      "<testsuite><testcase name='t'><failure message=''>line one\nline two</failure>"
      "</testcase></testsuite>";
  EXPECT_EQ(Compress(xml), "TEST SUMMARY: 1 failed\n\nFAILED: t\n  line one\n  line two\n");
}

TEST(TestReportTest, Pytest) {
  std::string json = R"J({"exitcode": 1, "duration": 0.26, "tests": [
    {"nodeid": "t.py::a", "outcome": "passed"},
    {"nodeid": "t.py::b", "outcome": "failed", "call": {"longrepr": "def test_b():\n>       assert 1 == 2\nE       assert 1 == 2\n\nt.py:7: AssertionError"}},
    {"nodeid": "t.py::c", "outcome": "error", "call": {"longrepr": "fixture 'db' not found\n  t.py:12"}},
    {"nodeid": "t.py::d", "outcome": "skipped"},
    {"nodeid": "t.py::e", "outcome": "xfailed"}
  ]})J";
  EXPECT_EQ(Compress(json),
            "TEST SUMMARY: 1 passed, 1 failed, 1 errors, 1 skipped (0.3s)\n"
            "\nFAILED: t.py::b\n  assert 1 == 2\n  t.py:7: AssertionError\n"
            "\nERROR: t.py::c\n  fixture 'db' not found\n  t.py:12\n");
}

TEST(TestReportTest, PytestWrongTypeFallsBackToJestThenDeclines) {
  EXPECT_FALSE(ParsesAsTestReport(R"({"tests": [{"nodeid": 3, "outcome": "passed"}]})"));
  EXPECT_FALSE(ParsesAsTestReport(R"({"tests": null})"));
  EXPECT_FALSE(ParsesAsTestReport(R"({"tests": []})"));
  EXPECT_FALSE(ParsesAsTestReport(R"({"tests": [{"nodeid": "a", "outcome": "passed"}]} x)"));
  EXPECT_TRUE(ParsesAsTestReport(R"({"tests": [{"nodeid": "a", "outcome": "passed"}]})"));
}

TEST(TestReportTest, Jest) {
  std::string json = R"J({"numPassedTests": 3, "numFailedTests": 1, "numPendingTests": 2,
    "testResults": [{"assertionResults": [
      {"status": "passed", "title": "x", "fullName": "x"},
      {"status": "failed", "title": "adds", "fullName": "", "ancestorTitles": ["math", "sum"],
       "failureMessages": ["Error: expect(received).toBe(expected)\n\nExpected: 3\n    at Object.<anonymous> (src/sum.test.js:5:10)\n    at run (node_modules/jest/x.js:1:1)"]}
    ]}]})J";
  EXPECT_EQ(Compress(json),
            "TEST SUMMARY: 3 passed, 1 failed, 2 skipped\n"
            "\nFAILED: math \xE2\x80\xBA sum \xE2\x80\xBA adds\n"
            "  Error: expect(received).toBe(expected)\n"
            "  at Object.<anonymous> (src/sum.test.js:5:10)\n"
            "  at run (node_modules/jest/x.js:1:1)\n");
}

TEST(TestReportTest, OutputIsNotAReport) {
  std::string out = Compress("<testsuite><testcase name='t'/></testsuite>");
  EXPECT_EQ(Compress(out), "<declined>");
}

TEST(TestReportTest, LargeJUnitShrinksNinetyPercentWithExactCounts) {
  std::string xml = "<?xml version=\"1.0\"?>\n<testsuites>\n";
  int passed = 0, failed = 0, skipped = 0, errors = 0;
  for (int s = 0; s < 30; ++s) {
    xml += "  <testsuite name=\"suite" + std::to_string(s) + "\" tests=\"100\" time=\"0.5\">\n";
    for (int i = 0; i < 100; ++i) {
      int n = s * 100 + i;
      xml += "    <testcase classname=\"com.example.Suite" + std::to_string(s) + "\" name=\"testCase" +
             std::to_string(n) + "\" time=\"0.005\"";
      if (n % 997 == 500) {
        ++failed;
        xml += "><failure message=\"expected &lt;" + std::to_string(n) +
               "&gt;\" type=\"AssertionError\">java.lang.AssertionError\n"
               "\tat com.example.Suite.test(Suite.java:42)\n"
               "\tat org.junit.Runner.run(Runner.java:10)\n</failure></testcase>\n";
      } else if (n % 1499 == 7) {
        ++errors;
        xml += "><error message=\"NPE\">at com.example.X.y(X.java:1)</error></testcase>\n";
      } else if (n % 211 == 3) {
        ++skipped;
        xml += "><skipped/></testcase>\n";
      } else {
        ++passed;
        xml += "/>\n";
      }
    }
    xml += "  </testsuite>\n";
  }
  xml += "</testsuites>\n";
  std::string out = Compress(xml);
  std::string expected_head = "TEST SUMMARY: " + std::to_string(passed) + " passed, " + std::to_string(failed) +
                              " failed, " + std::to_string(errors) + " errors, " + std::to_string(skipped) +
                              " skipped (15.0s)\n";
  EXPECT_EQ(out.substr(0, expected_head.size()), expected_head);
  EXPECT_EQ(passed + failed + skipped + errors, 3000);
  EXPECT_NE(out.find("FAILED: com.example.Suite5::testCase500\n  expected <500>\n"), std::string::npos);
  const TokenCounter& tc = DefaultTokenCounter();
  double before = static_cast<double>(tc.Count(xml));
  double after = static_cast<double>(tc.Count(out));
  EXPECT_GE((before - after) / before, 0.90) << before << " -> " << after;
}

// Skip reasons (issue 16): grouped into one line, groups by count, ties by first appearance.
TEST(TestReportTest, SkipReasonsAreGroupedByCount) {
  const std::string xml = R"(<testsuite>
    <testcase name="a"><skipped message="needs /dev/fuse"/></testcase>
    <testcase name="b"><skipped message="src/x_test.cc:21&#x0A;no network"/></testcase>
    <testcase name="c"><skipped>src/x_test.cc:30
no   network
</skipped></testcase>
    <testcase name="d"><skipped/></testcase>
    <testcase name="e"><failure message="boom"/></testcase>
  </testsuite>)";
  EXPECT_EQ(Compress(xml),
            "TEST SUMMARY: 1 failed, 4 skipped\n"
            "\n"
            "4 skipped: 2 \xC3\x97 no network, 1 \xC3\x97 needs /dev/fuse, 1 \xC3\x97 (no reason)\n"
            "\n"
            "FAILED: e\n"
            "  boom\n");
}

TEST(TestReportTest, SkipsWithoutAnyReasonAddNoLine) {
  EXPECT_EQ(Compress("<testsuite><testcase name='a'><skipped/></testcase>"
                     "<testcase name='b'/></testsuite>"),
            "TEST SUMMARY: 1 passed, 1 skipped\n");
}

TEST(TestReportTest, SkipReasonGroupsAreCappedAndLongReasonsCut) {
  std::string xml = "<testsuite>";
  for (int i = 0; i < 12; ++i) {
    xml +=
        "<testcase name='t" + std::to_string(i) + "'><skipped message='reason " + std::to_string(i) + "'/></testcase>";
  }
  xml += "<testcase name='long'><skipped message='" + std::string(200, 'x') + "'/></testcase>";
  xml += "</testsuite>";
  std::string out = Compress(xml);
  EXPECT_NE(out.find("13 skipped: 1 \xC3\x97 reason 0, "), std::string::npos) << out;
  EXPECT_NE(out.find(", 1 \xC3\x97 reason 9, +3 more (3 skipped)\n"), std::string::npos) << out;
  // The 200-byte reason is the 13th group: beyond the cap, so it only counts.
  EXPECT_EQ(out.find("xxxxx"), std::string::npos);
  std::string one = Compress("<testsuite><testcase name='long'><skipped message='" + std::string(200, 'x') +
                             "'/></testcase></testsuite>");
  EXPECT_NE(one.find("1 \xC3\x97 " + std::string(120, 'x') + "\xE2\x80\xA6\n"), std::string::npos) << one;
}

TEST(TestReportTest, PytestSkipReasonFromTheSetupLongrepr) {
  const std::string json = R"js({"exitcode": 0, "duration": 0.5, "tests": [
    {"nodeid": "t.py::a", "outcome": "passed"},
    {"nodeid": "t.py::b", "outcome": "skipped",
     "setup": {"outcome": "skipped", "longrepr": "('/src/t.py', 3, 'Skipped: no network')"}},
    {"nodeid": "t.py::c", "outcome": "skipped",
     "call": {"longrepr": "('/src/t.py', 9, 'Skipped: no network')"}},
    {"nodeid": "t.py::d", "outcome": "skipped", "setup": {"longrepr": 7}}
  ]})js";
  EXPECT_EQ(Compress(json),
            "TEST SUMMARY: 1 passed, 3 skipped (0.5s)\n"
            "\n"
            "3 skipped: 2 \xC3\x97 no network, 1 \xC3\x97 (no reason)\n");
}

// Real runner output (fixtures/test-reports/README.md): GoogleTest's own XML and ctest's
// --output-junit of the same scratch suite; every failure and the grouped skips survive.
TEST(TestReportTest, RealJUnitReportsWithSkipsAndFailures) {
  for (const char* name : {"gtest_skips", "ctest_skips"}) {
    const std::string base = std::string("fixtures/test-reports/") + name;
    const std::string in = testing::ReadFile(base + ".xml");
    EXPECT_TRUE(ParsesAsTestReport(in)) << name;
    EXPECT_EQ(Compress(in), testing::ReadFile(base + ".expected")) << name;
  }
  const std::string g = Compress(testing::ReadFile("fixtures/test-reports/gtest_skips.xml"));
  EXPECT_NE(g.find("6 skipped: 4 \xC3\x97 shared fixtures not mounted, 1 \xC3\x97 no GPU, "
                   "1 \xC3\x97 (no reason)\n"),
            std::string::npos);
  EXPECT_NE(g.find("FAILED: StoreProbe::EnoughCores\n"), std::string::npos);
  EXPECT_NE(g.find("FAILED: StoreProbe::OsRelease\n"), std::string::npos);
}

}  // namespace
}  // namespace caveman
