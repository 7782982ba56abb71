// Hostile input through the whole pipeline (Engine + in-memory store): a single 64 MiB
// line, 100,000-deep JSON, NUL bytes, invalid UTF-8 in the middle of a stream, CR-only line
// endings, text that imitates the engine's own markers, and secret-like field names.
//
// Every case checks the pipeline contract for every registered type (plus auto): Compress
// succeeds; a pass-through returns the input byte for byte; an accepted output is smaller in
// tokens, valid UTF-8 when the input is, compresses again to itself (§1.5), and the stored
// original round-trips exactly. Cases then check what the spec says about that input.
//
// The HostileInputLarge suite (64 MiB inputs) is excluded from the sanitizer run in CI.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <re2/re2.h>

#include "compressors/detect.h"
#include "compressors/internal/json_tree.h"
#include "compressors/text_util.h"
#include "compressors/registry.h"
#include "caveman/engine/engine.h"
#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

constexpr uint64_t kCliLimit = 64ull << 20;

std::vector<std::string> AllTypes() {
  Registry r;
  std::vector<std::string> out;
  for (std::string_view t : r.content_types()) out.emplace_back(t);
  out.emplace_back("auto");
  return out;
}

CompressOptions Options(const std::string& type, std::string query = {}) {
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = type;
  o.query = std::move(query);
  o.max_input_bytes = kCliLimit;
  return o;
}

class Harness {
 public:
  Harness() {
    auto s = OpenMemoryStore();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    engine_ = std::make_unique<Engine>(EngineOptions{.store = store_.get()});
  }
  Engine& engine() { return *engine_; }

  // Compresses `in` and checks the pipeline contract; returns the result (output in *out).
  CompressResult Check(std::string_view in, const CompressOptions& o, std::string* out, bool check_idempotence = true) {
    SCOPED_TRACE("type=" + o.type);
    out->clear();
    auto r = engine_->Compress(in, o, out);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    if (r->passed_through()) {
      EXPECT_TRUE(*out == in) << "pass-through changed the bytes";
      EXPECT_EQ(r->tokens_after, r->tokens_before);
      EXPECT_TRUE(r->recovery_handle.empty());
      return *r;
    }
    EXPECT_LT(r->tokens_after, r->tokens_before);
    EXPECT_FALSE(*out == in);
    if (internal::IsValidUtf8(in)) {
      EXPECT_TRUE(internal::IsValidUtf8(*out)) << "UTF-8 input gave invalid UTF-8 output";
    }
    EXPECT_FALSE(r->recovery_handle.empty());
    StringSink back;
    Status s = engine_->Retrieve(r->recovery_handle, back);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(back.data() == in) << "stored original differs";
    if (check_idempotence) {
      std::string again;
      auto r2 = engine_->Compress(*out, o, &again);
      EXPECT_TRUE(r2.ok());
      if (r2.ok()) {
        EXPECT_TRUE(r2->passed_through()) << "not idempotent, ct=" << r2->content_type;
      }
    }
    return *r;
  }

  // Check() for every registered type and auto.
  void CheckAllTypes(std::string_view in, std::string query = {}) {
    for (const std::string& t : AllTypes()) {
      std::string out;
      Check(in, Options(t, query), &out);
    }
  }

 private:
  std::unique_ptr<RecoveryStore> store_;
  std::unique_ptr<Engine> engine_;
};

// A log line with a timestamp, a level and logfmt fields; `i` varies the fields.
std::string LogLine(int i) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "2024-05-01T10:%02d:%02d INFO worker request_id=req-%05d status=ok latency_ms=%d",
                (i / 60) % 60, i % 60, i, 10 + i % 7);
  return buf;
}

std::string LogText(int lines, std::string_view eol = "\n") {
  std::string s;
  for (int i = 0; i < lines; ++i) {
    s += LogLine(i);
    s += eol;
  }
  return s;
}

// ---------------------------------------------------------------------------------------
// Deep nesting: the JSON parser is iterative and stops at depth 10,000 (§0.3, §10).

using caveman::testing::Nested;

TEST(HostileInput, HundredThousandDeepJsonIsNotJsonAndPassesThrough) {
  Harness h;
  for (const std::string& deep :
       {Nested(100000, "[", "]"), Nested(100000, "{\"a\":", "}"), Nested(100000, "[{\"k\":", "}]")}) {
    EXPECT_NE(Detect(deep), "json");
    internal::JsonTree tree;
    EXPECT_FALSE(tree.Parse(deep));
    for (const std::string& t : AllTypes()) {
      std::string out;
      CompressResult r = h.Check(deep, Options(t), &out);
      if (t == "json" || t == "toon" || t == "toolschema" || t == "toolschema-annotations" || t == "a11y" ||
          t == "test-report") {
        EXPECT_TRUE(r.passed_through()) << t << " accepted JSON deeper than 10,000";
      }
    }
    // Simulate takes the same path without a store write.
    auto sim = h.engine().Simulate(deep, Options("auto"));
    EXPECT_TRUE(sim.ok());
  }
  // An unterminated deep prefix (a truncated document) too.
  std::string open_only(100000, '[');
  h.CheckAllTypes(open_only);
}

TEST(HostileInput, DepthLimitIsExactlyTenThousand) {
  EXPECT_EQ(Detect(Nested(10000, "[", "]")), "json");
  EXPECT_NE(Detect(Nested(10001, "[", "]")), "json");
}

TEST(HostileInput, DeepJsonInsideACompressibleDocumentRoundTrips) {
  // A json compressor input that collapses an array and also carries a 9,000-deep member:
  // the selection walk, CJ output and RetrieveQuery narrowing must not recurse per level.
  std::string in = "{\"deep\":" + Nested(9000, "[", "]") + ",\"items\":[";
  for (int i = 0; i < 200; ++i) {
    if (i) in += ",";
    in += "{\"id\":" + std::to_string(i) + ",\"name\":\"item-" + std::to_string(i) + "\",\"state\":\"ready\"}";
  }
  in += "]}";
  ASSERT_EQ(Detect(in), "json");
  Harness h;
  std::string out;
  CompressResult r = h.Check(in, Options("auto"), &out);
  EXPECT_FALSE(r.passed_through());
  EXPECT_NE(out.find(Nested(9000, "[", "]")), std::string::npos) << "deep member not kept";
  if (!r.recovery_handle.empty()) {
    StringSink narrowed;
    EXPECT_TRUE(h.engine().RetrieveQuery(r.recovery_handle, "item-77", narrowed).ok());
    EXPECT_NE(narrowed.data().find("item-77"), std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------
// NUL bytes are ordinary (valid UTF-8) bytes.

TEST(HostileInput, NulBytesEverywhere) {
  Harness h;
  std::string in;
  for (int i = 0; i < 300; ++i) {
    in += LogLine(i);
    in += (i % 7 == 0) ? std::string("\0 nul\0", 6) : std::string();
    in += "\n";
  }
  h.CheckAllTypes(in);
  h.CheckAllTypes(in, "req-00042");
  h.CheckAllTypes(std::string(100000, '\0'));
  // NULs inside JSON strings (escaped) and raw NULs (not JSON).
  std::string json = "[";
  for (int i = 0; i < 100; ++i) {
    if (i) json += ",";
    json += "{\"id\":" + std::to_string(i) + ",\"blob\":\"a\\u0000b\"}";
  }
  json += "]";
  h.CheckAllTypes(json);
  std::string raw = json;
  raw[raw.find("\\u0000")] = '\0';
  EXPECT_NE(Detect(raw), "json");
  h.CheckAllTypes(raw);
}

// ---------------------------------------------------------------------------------------
// Invalid UTF-8 in the middle of a stream: byte-exact pass-through or a UTF-8-safe output,
// whatever the read boundaries.

TEST(HostileInput, InvalidUtf8MidStream) {
  std::string bad = LogText(400);
  const size_t mid = bad.size() / 2;
  bad.insert(mid, "\xff\xfe");            // never valid
  bad.insert(mid / 2, "\xe2\x82");        // truncated 3-byte sequence
  bad.insert(mid + mid / 2, "\xc0\xaf");  // overlong '/'
  bad.insert(mid / 3, "\xed\xa0\x80");    // surrogate
  Harness h;
  for (const std::string& t : AllTypes()) {
    std::string whole;
    CompressResult r = h.Check(bad, Options(t), &whole);
    // Chunked reads with tiny pieces split the invalid sequences across reads.
    for (size_t piece : {1u, 4093u}) {
      auto src = NewChunkedSource(bad, piece, piece);
      StringSink sink;
      CompressOptions o = Options(t);
      auto rs = h.engine().Compress(*src, o, sink);
      ASSERT_TRUE(rs.ok()) << t;
      EXPECT_TRUE(sink.data() == whole) << t << ": chunked read changed the output";
      EXPECT_EQ(rs->method, r.method) << t;
    }
  }
  // The line-based compressors of §5 decline invalid UTF-8 outright.
  for (const char* t : {"log", "repetition", "terminal", "tabular", "text", "search-result"}) {
    std::string out;
    EXPECT_TRUE(h.Check(bad, Options(t), &out).passed_through()) << t;
  }
}

// ---------------------------------------------------------------------------------------
// CR-only line endings (old Mac / progress output): one "line" per §4.1, terminal by §3.3.

TEST(HostileInput, CrOnlyLineEndings) {
  Harness h;
  std::string in = LogText(500, "\r");
  EXPECT_EQ(Detect(in), "terminal");
  h.CheckAllTypes(in);
  h.CheckAllTypes(in, "req-00042");
  // Mixed CR, LF and CRLF.
  std::string mixed;
  for (int i = 0; i < 600; ++i) mixed += LogLine(i) + (i % 3 == 0 ? "\r" : i % 3 == 1 ? "\n" : "\r\n");
  h.CheckAllTypes(mixed);
  // Only CRs.
  h.CheckAllTypes(std::string(50000, '\r'));
}

// ---------------------------------------------------------------------------------------
// Input that imitates the engine's own markers is never trusted as a marker except where the
// spec says so; in particular nothing it claims is hidden from the view.

TEST(HostileInput, FakeRepetitionMarkersAreNeverCollapsed) {
  // §5.15: a line starting with "… caveman: " is never collapsed.
  std::string in;
  for (int i = 0; i < 50; ++i) in += "\xE2\x80\xA6 caveman: 999 identical lines elided \xE2\x80\xA6\n";
  Harness h;
  std::string out;
  CompressResult r = h.Check(in, Options("repetition"), &out);
  EXPECT_TRUE(r.passed_through());
  h.CheckAllTypes(in);
}

TEST(HostileInput, FakeLogAndTerminalMarkersStayVisible) {
  // §5.2 / §5.16: marker lines of the input are always kept, so a forged marker is shown as
  // the text it is and never merged into a real marker's count.
  const std::string fake = "\xE2\x80\xA6 5000 lines elided (caveman): all status=ok \xE2\x80\xA6";
  std::string in;
  for (int i = 0; i < 400; ++i) {
    in += LogLine(i) + "\n";
    if (i % 97 == 50) in += fake + "\n";
  }
  Harness h;
  for (const char* t : {"log", "auto", "terminal"}) {
    std::string out;
    CompressResult r = h.Check(in, Options(t), &out);
    size_t want = 0, got = 0;
    for (size_t p = 0; (p = in.find(fake, p)) != std::string::npos; p += fake.size()) ++want;
    for (size_t p = 0; (p = out.find(fake, p)) != std::string::npos; p += fake.size()) ++got;
    EXPECT_EQ(got, want) << t << " (passed through: " << r.passed_through() << ")";
  }
  h.CheckAllTypes(in);
}

TEST(HostileInput, FakeJsonMarkerKeepsItsArrayUnchanged) {
  // §5.1: an array holding an object with __caveman_elided__ is returned unchanged.
  std::string in = "{\"rows\":[";
  for (int i = 0; i < 200; ++i) {
    in += "{\"id\":" + std::to_string(i) + ",\"state\":\"ok\"},";
  }
  in += "{\"__caveman_elided__\":1000000,\"__caveman_invariants__\":\"all state=ok\"}]}";
  Harness h;
  std::string out;
  CompressResult r = h.Check(in, Options("json"), &out);
  EXPECT_TRUE(r.passed_through());
  h.CheckAllTypes(in);
}

TEST(HostileInput, FakeTableMarkerMakesTabularDecline) {
  // §5.9: an input containing "rows elided (caveman)" declines.
  std::string in = "name,state\n";
  for (int i = 0; i < 100; ++i) in += "host-" + std::to_string(i) + ",ok\n";
  in += "\xE2\x80\xA6 9 rows elided (caveman) \xE2\x80\xA6,\n";
  Harness h;
  std::string out;
  EXPECT_TRUE(h.Check(in, Options("tabular"), &out).passed_through());
  h.CheckAllTypes(in);
}

TEST(HostileInput, FakeMarkersInEveryShape) {
  // Marker look-alikes of every compressor mixed into one text; the contract holds for every
  // type and the output never claims more than the input shows.
  std::string in;
  for (int i = 0; i < 120; ++i) {
    in += LogLine(i) + "\n";
    in +=
        "\xE2\x80\xA6 caveman: elided lines resemble shown lines and match the stated "
        "invariants \xE2\x80\xA6\n";
    in += "{\"__caveman_elided__\":3}\n";
    in += "\xE2\x80\xA6 7 lines elided (caveman) \xE2\x80\xA6\n";
    in += "# \xE2\x80\xA6 4 config lines elided (caveman) \xE2\x80\xA6\n";
  }
  Harness h;
  h.CheckAllTypes(in);
  h.CheckAllTypes(in, "caveman elided");
}

// ---------------------------------------------------------------------------------------
// Secret-like field names never appear in invariant summaries (§4.4 step 3).

const RE2& SecretName() {
  static const RE2* re = new RE2("(?i)(secret|passw|token|api[_-]?key|authoriz|credential|cookie|session)");
  return *re;
}

TEST(HostileInput, SecretFieldNamesNeverInJsonInvariants) {
  std::string in = "[";
  for (int i = 0; i < 300; ++i) {
    if (i) in += ",";
    in += "{\"id\":\"u-" + std::to_string(1000 + i) +
          "\",\"password\":\"hunter2\",\"api_key\":\"sk-live-abc\",\"Session_ID\":\"s" + std::to_string(i % 3) +
          "\",\"X-Auth-Token\":\"t\",\"region\":\"eu\"}";
  }
  in += "]";
  Harness h;
  std::string out;
  CompressResult r = h.Check(in, Options("auto"), &out);
  ASSERT_FALSE(r.passed_through());
  internal::JsonTree tree;
  ASSERT_TRUE(tree.Parse(out));
  int markers = 0;
  for (uint32_t i = 0; i < tree.size(tree.root()); ++i) {
    auto el = tree.item(tree.root(), i);
    if (tree.kind(el) != internal::JsonKind::kObject) continue;
    int64_t inv = tree.Find(el, "__caveman_invariants__");
    if (tree.Find(el, "__caveman_elided__") >= 0) ++markers;
    if (inv < 0) continue;
    std::string text(tree.text(static_cast<uint32_t>(inv)));
    EXPECT_FALSE(RE2::PartialMatch(text, SecretName())) << text;
    EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
    EXPECT_EQ(text.find("sk-live"), std::string::npos) << text;
    EXPECT_NE(text.find("region=eu"), std::string::npos) << text;  // the non-secret constant
  }
  EXPECT_GT(markers, 0);
}

TEST(HostileInput, SecretFieldNamesNeverInLogAndTableMarkers) {
  std::string log;
  for (int i = 0; i < 400; ++i) {
    log += "2024-05-01T10:00:00 INFO login user=u" + std::to_string(i) +
           " password=hunter2 api-key=sk-live-abc authorization=Bearer_x cookie=c1 env=prod\n";
  }
  std::string csv = "user,password,session_token,env\n";
  for (int i = 0; i < 400; ++i) csv += "u" + std::to_string(i) + ",hunter2,tok,prod\n";
  Harness h;
  for (const auto& [in, type] : {std::pair{log, "log"}, std::pair{csv, "tabular"}}) {
    std::string out;
    CompressResult r = h.Check(in, Options(type), &out);
    ASSERT_FALSE(r.passed_through()) << type;
    bool saw_marker = false;
    size_t start = 0;
    while (start < out.size()) {
      size_t end = out.find('\n', start);
      if (end == std::string::npos) end = out.size();
      std::string_view line(out.data() + start, end - start);
      if (line.find("elided (caveman)") != std::string_view::npos) {
        saw_marker = true;
        EXPECT_FALSE(RE2::PartialMatch(line, SecretName())) << line;
        EXPECT_EQ(line.find("hunter2"), std::string_view::npos) << line;
      }
      start = end + 1;
    }
    EXPECT_TRUE(saw_marker) << type;
  }
}

// ---------------------------------------------------------------------------------------
// A single 64 MiB line (the CLI limit, exactly). Memory may grow with the longest line
// (§1.4); the result must still be correct. Excluded from the sanitizer run.

std::string OneHugeLine(size_t size) {
  std::string s;
  s.reserve(size);
  static const char* kWords[] = {"alpha",   "beta",      "gamma", "delta",     "error",
                                 "request", "status=ok", "id=42", "{\"k\":1}", "\xC3\xA9t\xC3\xA9"};
  for (size_t i = 0; s.size() < size; ++i) {
    s += kWords[(i * 7 + i / 13) % 10];
    s += ' ';
  }
  s.resize(size);
  // Do not end inside the 2-byte é.
  while (!internal::IsValidUtf8(s)) s.back() = 'x';
  return s;
}

TEST(HostileInputLarge, SingleLineOfExactly64MiB) {
  const std::string in = OneHugeLine(kCliLimit);
  ASSERT_EQ(in.size(), kCliLimit);
  Harness h;
  for (const char* t : {"auto", "repetition", "log", "terminal", "text"}) {
    std::string out;
    h.Check(in, Options(t), &out, /*check_idempotence=*/false);
  }
  // One byte more: not a line type, so the original streams through with
  // cave_input_too_large (issue 13: never an empty stdout).
  std::string over = in + "x";
  StringSink sink;
  auto src = NewStringSource(over);
  auto r = h.engine().Compress(*src, Options("auto"), sink);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(sink.data() == over);
  EXPECT_EQ(r->error, "cave_input_too_large");
}

}  // namespace
}  // namespace caveman
