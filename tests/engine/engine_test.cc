#include "caveman/engine/engine.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "stream/sha256.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"
#include "stream/json_writer.h"

namespace caveman {
namespace {

std::unique_ptr<RecoveryStore> MemoryStore(uint64_t capacity = kDefaultStoreCapacity) {
  StoreOptions so;
  so.max_bytes = capacity;
  auto s = OpenMemoryStore(so);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

CompressOptions Forced(std::string type) {
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = std::move(type);
  return o;
}

// A store whose writes fail with a chosen status (fault injection).
class FailingStore final : public RecoveryStore {
 public:
  // `throw_after`: Append throws std::bad_alloc once this many bytes were appended (memory
  // running out on the input worker's thread); SIZE_MAX = never.
  explicit FailingStore(Status commit_status, size_t throw_after = SIZE_MAX)
      : commit_status_(std::move(commit_status)), throw_after_(throw_after) {}
  class Writer final : public RecordWriter {
   public:
    Writer(Status s, size_t throw_after) : s_(std::move(s)), throw_after_(throw_after) {}
    Status Append(std::string_view d) override {
      appended_ += d.size();
      if (appended_ > throw_after_) throw std::bad_alloc();
      return Status::OK();
    }
    Status Commit(const std::string&, const RecordInfo&) override { return s_; }
    void Abandon() override {}

   private:
    Status s_;
    size_t throw_after_;
    size_t appended_ = 0;
  };
  Result<std::unique_ptr<RecordWriter>> BeginRecord() override {
    return std::unique_ptr<RecordWriter>(std::make_unique<Writer>(commit_status_, throw_after_));
  }
  Status Get(std::string_view, ByteSink&) override { return Status::NotFound("x"); }
  Result<std::string> GetMetadata(std::string_view) override { return std::string(); }
  Result<StoreStats> Stats() override { return StoreStats{}; }
  Result<GcResult> Gc(std::optional<uint64_t>, bool) override { return GcResult{}; }

 private:
  Status commit_status_;
  size_t throw_after_;
};

TEST(Engine, SeedRepetitionMatchesSpec) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto r = engine.Compress(in, Forced("repetition"), &out);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Sha256::Hex(Sha256::Digest(out)), "5cee90cbcd6a139a210bd1af62342c7d11b4c782cbac8c27d6b688ed5f398731");
  EXPECT_EQ(r->recovery_handle, "ccr_dfe6a45fb401d36689e7abe649b5617c");
  EXPECT_EQ(r->method, "repetition");
  EXPECT_EQ(r->content_type, "repetition");
  if (engine.counter().name() == "o200k_base") {
    EXPECT_EQ(r->ReportJson(),
              "{\"content_type\":\"repetition\",\"tokens_before\":470,\"tokens_after\":120,"
              "\"token_count_basis\":\"o200k_base\",\"ratio\":0.7446808510638298,\"basis\":\"inferred\","
              "\"recovery_handle\":\"ccr_dfe6a45fb401d36689e7abe649b5617c\",\"method\":\"repetition\","
              "\"lossless_to_model\":false}");
  } else {
    ADD_FAILURE() << "o200k_base vocabulary did not load; counter is " << engine.counter().name();
  }
  StringSink back;
  ASSERT_TRUE(engine.Retrieve(r->recovery_handle, back).ok());
  EXPECT_TRUE(back.data() == in);
}

// The std::istream/std::ostream overloads of the public API (README example) produce the same
// bytes and report as the ByteSource path, and Retrieve(ostream) returns the original.
TEST(Engine, StandardStreamOverloadsMatchTheByteSourcePath) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string expected;
  auto direct = engine.Compress(in, Forced("repetition"), &expected);
  ASSERT_TRUE(direct.ok());

  std::istringstream is(in);
  std::ostringstream os;
  auto r = engine.Compress(is, Forced("repetition"), os);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(os.str(), expected);
  EXPECT_EQ(r->ReportJson(), direct->ReportJson());

  std::ostringstream back;
  ASSERT_TRUE(engine.Retrieve(r->recovery_handle, back).ok());
  EXPECT_TRUE(back.str() == in);
  std::ostringstream missing;
  EXPECT_EQ(engine.Retrieve("ccr_00000000000000000000000000000000", missing).code(), StatusCode::kNotFound);
  EXPECT_TRUE(missing.str().empty());
}

// A failing std::ostream is a kIoError, never a silent loss.
TEST(Engine, FailedOstreamIsAnIoError) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::istringstream is(in);
  std::ostringstream os;
  os.setstate(std::ios::badbit);
  auto r = engine.Compress(is, Forced("repetition"), os);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
}

// Every pass-through says why (pretty report); an emitted view says kNone.
TEST(Engine, PassThroughReasons) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string seed = testing::ReadFile("fixtures/seed/pytest.log");
  auto reason = [&](std::string_view in, CompressOptions o, Engine& e) {
    std::string out;
    auto r = e.Compress(in, o, &out);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->pass_through_reason : PassThroughReason::kNone;
  };
  EXPECT_EQ(reason(seed, Forced("repetition"), engine), PassThroughReason::kNone);
  CompressOptions record;
  EXPECT_EQ(reason(seed, record, engine), PassThroughReason::kRecordMode);
  EXPECT_EQ(reason("", Forced(""), engine), PassThroughReason::kEmptyInput);
  EXPECT_EQ(reason(seed, Forced("no-such-type"), engine), PassThroughReason::kNoCompressor);
  EXPECT_EQ(reason("one line of prose, nothing repeats\n", Forced("repetition"), engine), PassThroughReason::kDeclined);
  Engine no_store;
  EXPECT_EQ(reason(seed, Forced("repetition"), no_store), PassThroughReason::kNoStore);
  FailingStore failing(Status::ResourceExhausted("ccr: storage budget exceeded"));
  Engine failing_engine(EngineOptions{.store = &failing});
  EXPECT_EQ(reason(seed, Forced("repetition"), failing_engine), PassThroughReason::kStoreFailed);
  EXPECT_STREQ(PassThroughReasonText(PassThroughReason::kNotSmaller), "the view would not count fewer tokens");
}

TEST(Engine, LibraryVersionIsTheProjectVersion) {
  std::string v = LibraryVersion();
  EXPECT_EQ(v, CAVEMAN_VERSION_STRING);
  EXPECT_EQ(v, std::to_string(CAVEMAN_VERSION_MAJOR) + "." + std::to_string(CAVEMAN_VERSION_MINOR) + "." +
                   std::to_string(CAVEMAN_VERSION_PATCH));
  // The project version of CMakeLists.txt, read independently of the generated header.
  std::ifstream cmake(std::string(std::getenv("CAVEMAN_SOURCE_DIR")) + "/CMakeLists.txt");
  std::string text((std::istreambuf_iterator<char>(cmake)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("project(caveman_engine VERSION " + v + " "), std::string::npos) << v;
}

TEST(Engine, RecordModeAndUnknownModePassThrough) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  CompressOptions o = Forced("repetition");
  o.mode = ParseMode("bogus");
  std::string out;
  auto r = engine.Compress(in, o, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(out == in);
  EXPECT_TRUE(r->passed_through());
  EXPECT_EQ(r->tokens_after, r->tokens_before);
  EXPECT_EQ(r->content_type, "repetition");
  EXPECT_EQ(ParseMode("compress"), Mode::kCompress);
  EXPECT_EQ(ParseMode(""), Mode::kRecord);
}

TEST(Engine, NoStoreMeansPassThroughWithoutError) {
  Engine engine;
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto r = engine.Compress(in, Forced("repetition"), &out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(out == in);
  EXPECT_TRUE(r->passed_through());
  EXPECT_TRUE(r->error.empty());
}

TEST(Engine, ExternalRecoveryCompressesWithoutHandle) {
  Engine engine;
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  CompressOptions o = Forced("repetition");
  o.external_recovery = true;
  std::string out;
  auto r = engine.Compress(in, o, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->passed_through());
  EXPECT_TRUE(r->recovery_handle.empty());
  EXPECT_LT(out.size(), in.size());
}

TEST(Engine, UnknownForcedTypeIsReportedAsGiven) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string out;
  auto r = engine.Compress("some text\n", Forced("no-such-type"), &out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content_type, "no-such-type");
  EXPECT_TRUE(r->passed_through());
  EXPECT_EQ(out, "some text\n");
}

TEST(Engine, EmptyInputPassesThrough) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string out = "x";
  auto r = engine.Compress("", Forced("repetition"), &out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(out, "");
  EXPECT_EQ(r->tokens_before, 0u);
  EXPECT_TRUE(r->passed_through());
  EXPECT_NE(r->ReportJson().find("\"ratio\":0,"), std::string::npos);
}

TEST(Engine, BudgetExceededFailsClosed) {
  FailingStore store(Status::ResourceExhausted("ccr: storage budget exceeded"));
  Engine engine(EngineOptions{.store = &store});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto r = engine.Compress(in, Forced("repetition"), &out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(out == in);
  EXPECT_EQ(r->error, "cave_ccr_budget_exceeded");
  EXPECT_TRUE(r->passed_through());
  EXPECT_NE(r->ReportJson().find("\"error\":\"cave_ccr_budget_exceeded\""), std::string::npos);
}

TEST(Engine, RealCapacityLimitFailsClosed) {
  auto store = MemoryStore(/*capacity=*/10);
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto r = engine.Compress(in, Forced("repetition"), &out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(out == in);
  EXPECT_EQ(r->error, "cave_ccr_budget_exceeded");
}

TEST(Engine, OtherStoreFailureIsUnavailable) {
  FailingStore store(Status::IoError("disk on fire"));
  Engine engine(EngineOptions{.store = &store});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto r = engine.Compress(in, Forced("repetition"), &out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(out == in);
  EXPECT_EQ(r->error, "cave_ccr_unavailable");
}

// Issue 19: the handle is the SHA-256 of the input whoever computes it: the store's writer
// (AppendedHandle, one hash per run) or the engine itself for a writer that does not hash.
TEST(Engine, HandleIsTheInputsDigestWithAndWithoutAHashingWriter) {
  std::string in;
  for (int i = 0; i < 60000; ++i) {
    in += "2026-11-02T10:00:00Z INFO worker " + std::to_string(i % 7) + " step " + std::to_string(i) + " ok\n";
  }
  in += "2026-11-02T10:00:01Z ERROR worker 3 failed: exit 2\n";
  const std::string expected = HandleFromDigest(Sha256::Digest(in));
  auto store = MemoryStore();
  FailingStore accepting(Status::OK());  // its writer takes every byte and hashes none
  for (RecoveryStore* s : {store.get(), static_cast<RecoveryStore*>(&accepting)}) {
    // A 64 KiB spool limit: the original spills and the worker catches up from the spool.
    Engine engine(EngineOptions{.store = s, .spool_memory_limit = 64 * 1024});
    std::string out;
    auto r = engine.Compress(in, Forced("log"), &out);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->passed_through());
    EXPECT_EQ(r->recovery_handle, expected);
  }
  StringSink back;
  ASSERT_TRUE(store->Get(expected, back).ok());
  EXPECT_TRUE(back.data() == in);
}

// Issue 13, no size cliff: over max_input_bytes a line type streams (follow path), any
// other type passes through unchanged with cave_input_too_large; Simulate still refuses.
TEST(Engine, InputOverTheLimitStreamsOrPassesThrough) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  CompressOptions o = Forced("repetition");
  o.max_input_bytes = 300;
  std::string in;
  for (int i = 0; i < 40; ++i) in += "same line again\n";
  in += "last\n";
  auto src = NewStringSource(in);
  StringSink sink;
  auto r = engine.Compress(*src, o, sink);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->follow);
  EXPECT_EQ(sink.data(), "same line again\n\xE2\x80\xA6 caveman: 39 identical lines elided \xE2\x80\xA6\nlast\n");
  ASSERT_FALSE(r->recovery_handle.empty());
  StringSink back;
  ASSERT_TRUE(engine.Retrieve(r->recovery_handle, back).ok());
  EXPECT_EQ(back.data(), in);

  CompressOptions j = Forced("json");
  j.max_input_bytes = 100;
  const std::string doc = "[" + std::string(200, ' ') + "1]";
  auto src2 = NewStringSource(doc);
  StringSink sink2;
  auto r2 = engine.Compress(*src2, j, sink2);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(sink2.data(), doc);
  EXPECT_EQ(r2->error, "cave_input_too_large");
  EXPECT_EQ(r2->pass_through_reason, PassThroughReason::kInputTooLarge);
  EXPECT_TRUE(r2->passed_through());
  EXPECT_EQ(r2->tokens_before, r2->tokens_after);
  EXPECT_GT(r2->tokens_before, 0u);

  auto src3 = NewStringSource(doc);
  EXPECT_EQ(engine.Simulate(*src3, j).status().code(), StatusCode::kResourceExhausted);
  j.max_input_bytes = doc.size();  // exactly the limit is the batch path
  auto src4 = NewStringSource(doc);
  StringSink sink4;
  auto r4 = engine.Compress(*src4, j, sink4);
  ASSERT_TRUE(r4.ok());
  EXPECT_TRUE(r4->error.empty());
  EXPECT_FALSE(r4->follow);
}

TEST(Engine, OutputAndReportIndependentOfChunking) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get(), .spool_memory_limit = 512});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  testing::ExpectChunkingInvariant(in, [&](const std::vector<std::string_view>& pieces) {
    std::string joined;
    for (auto p : pieces) joined += p;
    // Feed through a source that returns exactly these pieces.
    struct PieceSource : ByteSource {
      const std::vector<std::string_view>* pieces;
      size_t i = 0, off = 0;
      Result<size_t> Read(char* buf, size_t cap) override {
        if (i == pieces->size()) return size_t{0};
        std::string_view p = (*pieces)[i].substr(off);
        size_t n = std::min(cap, p.size());
        std::memcpy(buf, p.data(), n);
        off += n;
        if (off == (*pieces)[i].size()) {
          ++i;
          off = 0;
        }
        return n;
      }
    } src;
    src.pieces = &pieces;
    StringSink sink;
    auto r = engine.Compress(src, Forced("repetition"), sink);
    EXPECT_TRUE(r.ok());
    return sink.data() + "\n--\n" + (r.ok() ? r->ReportJson() : r.status().ToString());
  });
}

TEST(Engine, CompressingTheOutputAgainPassesThrough) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string once, twice;
  ASSERT_TRUE(engine.Compress(in, Forced("repetition"), &once).ok());
  auto r = engine.Compress(once, Forced("repetition"), &twice);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->passed_through());
  EXPECT_EQ(twice, once);
}

TEST(Engine, SimulateNeverWritesTheStore) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  auto s = engine.Simulate(in, Forced("repetition"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->compressor, "repetition");
  EXPECT_TRUE(s->requires_ccr);
  EXPECT_TRUE(s->recoverable);
  EXPECT_TRUE(s->lossy());
  auto stats = engine.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->totals.count, 0u);
  Engine no_store;
  auto s2 = no_store.Simulate(in, Forced("repetition"));
  ASSERT_TRUE(s2.ok());
  EXPECT_FALSE(s2->recoverable);
  EXPECT_LT(s2->tokens_after, s2->tokens_before);
  EXPECT_NE(s2->ToJson().find("\"recoverable\":false"), std::string::npos);
}

TEST(Engine, StatsCountStoredRecords) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto r = engine.Compress(in, Forced("repetition"), &out);
  ASSERT_TRUE(r.ok());
  auto stats = engine.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->totals.count, 1u);
  EXPECT_EQ(stats->totals.tokens_before, r->tokens_before);
  EXPECT_EQ(stats->by_content_type.at("repetition").tokens_after, r->tokens_after);
}

TEST(EngineFormat, RatioFormatting) {
  EXPECT_EQ(FormatRatio(0), "0");
  EXPECT_EQ(FormatRatio(0.7446808510638298), "0.7446808510638298");
  EXPECT_EQ(FormatRatio(0.5), "0.5");
  EXPECT_EQ(FormatRatio(1e-7), "1e-7");
  EXPECT_EQ(FormatRatio(2.5e-7), "2.5e-7");
  EXPECT_EQ(FormatRatio(0.000001), "0.000001");
  EXPECT_EQ(FormatRatio(0.9309506790564689), "0.9309506790564689");
}

TEST(EngineFormat, JsonQuoteEscapes) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\t<>&\x01"), "\"a\\\"b\\\\c\\n\\t\\u003c\\u003e\\u0026\\u0001\"");
  EXPECT_EQ(JsonQuote("\xE2\x80\xA8/\x7F"), "\"\\u2028/\x7F\"");
}

TEST(EngineFormat, PartialRecordPrecedesError) {
  CompressResult r;
  r.content_type = "log";
  r.token_count_basis = "o200k_base";
  r.error = "cave_ccr_budget_exceeded";
  const std::string without = r.ReportJson();
  EXPECT_EQ(without.find("partial_record"), std::string::npos);
  r.partial_record = "part_0123456789abcdef0123456789abcdef";
  EXPECT_EQ(r.ReportJson(),
            "{\"content_type\":\"log\",\"tokens_before\":0,\"tokens_after\":0,"
            "\"token_count_basis\":\"o200k_base\",\"ratio\":0,\"basis\":\"inferred\","
            "\"partial_record\":\"part_0123456789abcdef0123456789abcdef\","
            "\"error\":\"cave_ccr_budget_exceeded\"}");
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// Issue 15 item 5: the before_view hook sees the final result (handle, view size) before any
// byte of the view is written; refusing keeps the view back and passes the original through.
TEST(EngineHardening, BeforeViewRunsFirstAndCanKeepTheViewBack) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  const std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  for (bool accept : {true, false}) {
    CompressOptions o = Forced("repetition");
    StringSink sink;
    std::string seen_handle;
    uint64_t seen_bytes = 0;
    size_t written_before = SIZE_MAX;
    o.before_view = [&](const CompressResult& r) {
      seen_handle = r.recovery_handle;
      seen_bytes = r.bytes_out;
      written_before = sink.data().size();
      return accept;
    };
    auto src = NewStringSource(in);
    auto r = engine.Compress(*src, o, sink);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(written_before, 0u);
    EXPECT_EQ(seen_handle, "ccr_dfe6a45fb401d36689e7abe649b5617c");
    if (accept) {
      EXPECT_EQ(seen_bytes, sink.data().size());
      EXPECT_LT(sink.data().size(), in.size());
      EXPECT_EQ(r->recovery_handle, seen_handle);
    } else {
      EXPECT_TRUE(sink.data() == in);
      EXPECT_EQ(r->pass_through_reason, PassThroughReason::kReportFailed);
      EXPECT_TRUE(r->passed_through());
    }
  }
}

// A log of `lines` lines that the log compressor shrinks well (routine lines, one error).
std::string CompressibleLog(int lines) {
  std::string in;
  for (int i = 0; i < lines; ++i) {
    in += "2026-11-02T10:00:00Z INFO worker " + std::to_string(i % 7) + " step " + std::to_string(i) + " ok\n";
  }
  in += "2026-11-02T10:00:01Z ERROR worker 3 failed: exit 2\n";
  return in;
}

// Issue 15: memory and the spill file both fail while the input is being read. The read
// stage stops holding it; the engine streams what it held, the chunk it could not take and
// the rest of the source through unchanged (never an empty output, never an abort), counted,
// for every chunking down to 1-byte reads and with or without detection.
TEST(Engine, InputThatCannotBeHeldStreamsThroughWhole) {
  const std::string in = CompressibleLog(6000);  // ≈ 290 KiB
  ASSERT_GT(in.size(), 256u << 10);
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get(), .spool_memory_limit = 64 * 1024});
  const uint64_t tokens = engine.counter().Count(in);
  SetSpoolSpillFailureForTest(true);         // no spill file, no memfd
  SetSpoolMemoryFailureForTest(128u << 10);  // and no memory past 128 KiB
  for (const char* type : {"", "log", "json"}) {
    for (size_t piece : {size_t{1}, size_t{13}, size_t{4096}, size_t{1} << 20}) {
      SCOPED_TRACE(std::string("type '") + type + "', pieces of up to " + std::to_string(piece));
      auto src = NewChunkedSource(in, /*seed=*/piece, piece);
      StringSink sink;
      auto r = engine.Compress(*src, Forced(type), sink);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(sink.data() == in);
      EXPECT_EQ(r->pass_through_reason, PassThroughReason::kOutOfMemory);
      EXPECT_TRUE(r->recovery_handle.empty());
      EXPECT_EQ(r->bytes_in, in.size());
      EXPECT_EQ(r->bytes_out, in.size());
      EXPECT_EQ(r->tokens_before, tokens);
      EXPECT_EQ(r->tokens_after, tokens);
    }
  }
  SetSpoolMemoryFailureForTest(0);
  SetSpoolSpillFailureForTest(false);
  // The same engine and input compress normally again.
  StringSink sink;
  auto src = NewStringSource(in);
  auto r = engine.Compress(*src, Forced("log"), sink);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->passed_through());
}

// Issue 15: memory running out on the input worker's thread (here: the record writer's Append
// throws std::bad_alloc) must not end the process (an exception escaping a thread calls
// std::terminate); the original passes through, whatever the chunking, and nothing is stored.
TEST(Engine, OutOfMemoryOnTheInputWorkerPassesTheOriginalThrough) {
  const std::string in = CompressibleLog(20000);  // ≈ 1.3 MiB: the worker takes several chunks
  for (size_t after : {size_t{0}, size_t{300} << 10, in.size() - 1}) {
    FailingStore throwing(Status::OK(), after);
    Engine engine(EngineOptions{.store = &throwing});
    for (size_t piece : {size_t{4096}, size_t{1} << 20}) {
      SCOPED_TRACE("throws after " + std::to_string(after) + " bytes, pieces of up to " + std::to_string(piece));
      auto src = NewChunkedSource(in, /*seed=*/7, piece);
      StringSink sink;
      auto r = engine.Compress(*src, Forced("log"), sink);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(sink.data() == in);
      EXPECT_TRUE(r->passed_through());
      EXPECT_TRUE(r->recovery_handle.empty());
    }
  }
}

// A store that counts how its writers are fed, writing through to a memory store.
class CountingStore final : public RecoveryStore {
 public:
  struct Calls {
    size_t appends = 0, append_lasts = 0, ends = 0, appends_after_end = 0;
    uint64_t last_bytes = 0;
    std::thread::id end_thread, commit_thread;
    bool ended_before_commit = false;
  };
  class Writer final : public RecordWriter {
   public:
    Writer(std::unique_ptr<RecordWriter> inner, Calls* calls) : inner_(std::move(inner)), calls_(calls) {}
    Status Append(std::string_view d) override {
      ++calls_->appends;
      if (calls_->ends > 0) ++calls_->appends_after_end;
      return inner_->Append(d);
    }
    Status AppendLast(std::string_view d) override {
      ++calls_->append_lasts;
      if (calls_->ends > 0) ++calls_->appends_after_end;
      calls_->last_bytes = d.size();
      return inner_->AppendLast(d);
    }
    Status EndOfInput() override {
      ++calls_->ends;
      calls_->end_thread = std::this_thread::get_id();
      return inner_->EndOfInput();
    }
    Status Commit(const std::string& h, const RecordInfo& i) override {
      calls_->commit_thread = std::this_thread::get_id();
      calls_->ended_before_commit = calls_->ends > 0;
      return inner_->Commit(h, i);
    }
    void Abandon() override { inner_->Abandon(); }

   private:
    std::unique_ptr<RecordWriter> inner_;
    Calls* calls_;
  };
  Result<std::unique_ptr<RecordWriter>> BeginRecord() override {
    CAVEMAN_ASSIGN_OR_RETURN(auto w, inner_->BeginRecord());
    return std::unique_ptr<RecordWriter>(std::make_unique<Writer>(std::move(w), &calls));
  }
  Status Get(std::string_view h, ByteSink& out) override { return inner_->Get(h, out); }
  Result<std::string> GetMetadata(std::string_view h) override { return inner_->GetMetadata(h); }
  Result<StoreStats> Stats() override { return inner_->Stats(); }
  Result<GcResult> Gc(std::optional<uint64_t> a, bool d) override { return inner_->Gc(a, d); }
  Calls calls;

 private:
  std::unique_ptr<RecoveryStore> inner_ = MemoryStore();
};

// Issue 19: an input that starts like JSON is held whole, and the worker gives it to the
// record writer in one AppendLast (compressed in place) instead of chunk by chunk; any other
// input streams through Append. Either way the original comes back, whatever the read sizes.
TEST(Engine, InputHeldWholeGoesToTheRecordInOneAppendLast) {
  std::string json = "[";
  for (int i = 0; i < 6000; ++i) {
    json += (i ? "," : "") + std::string("{\"id\":") + std::to_string(i) + ",\"state\":\"ok\",\"node\":\"n" +
            std::to_string(i % 7) + "\"}";
  }
  json += "]\n";
  const std::string log = CompressibleLog(6000);
  for (const std::string* in : std::initializer_list<const std::string*>{&json, &log}) {
    for (size_t piece : {size_t{1}, size_t{4096}, size_t{1} << 20}) {
      SCOPED_TRACE((in == &json ? "json" : "log") + std::string(", pieces of up to ") + std::to_string(piece));
      CountingStore store;
      Engine engine(EngineOptions{.store = &store});
      auto src = NewChunkedSource(*in, /*seed=*/3, piece);
      StringSink sink;
      auto r = engine.Compress(*src, Forced(""), sink);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_FALSE(r->recovery_handle.empty());
      if (in == &json) {
        EXPECT_EQ(store.calls.append_lasts, 1u);
        EXPECT_EQ(store.calls.last_bytes, json.size());
        EXPECT_EQ(store.calls.appends, 0u);
      } else {
        EXPECT_EQ(store.calls.append_lasts, 0u);
        EXPECT_GT(store.calls.appends, 0u);
      }
      StringSink back;
      ASSERT_TRUE(store.Get(r->recovery_handle, back).ok());
      EXPECT_TRUE(back.data() == *in);
      // The worker ends the frame once every byte is in it, before the commit and off the
      // thread that commits (issue 19: zstd's last block is not the view's wait).
      EXPECT_EQ(store.calls.ends, 1u);
      EXPECT_EQ(store.calls.appends_after_end, 0u);
      EXPECT_TRUE(store.calls.ended_before_commit);
      EXPECT_NE(store.calls.end_thread, store.calls.commit_thread);
    }
  }
}

// §1.5 whatever the guard refuses: a terminal view that re-detects as html (fuzz_engine) made
// the guard keep the view because the html re-run broke its line structure (issue 16); the
// view was then not stable (`compress` of it shrank 364 -> 78 tokens). A refused re-run now
// declines the view; in every case, compressing the output again changes nothing.
TEST(Engine, OutputCompressesToItselfWhenTheGuardRefusesARerun) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  for (const char* file : {"tests/fuzz/corpus/fuzz_engine/terminal-view-redetected-as-html",
                           "tests/fuzz/corpus/fuzz_engine/terminal-rejoined-escape"}) {
    SCOPED_TRACE(file);
    const std::string in = testing::ReadFile(file);
    ASSERT_FALSE(in.empty());
    std::string out;
    auto r = engine.Compress(in, Forced(""), &out);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (r->passed_through()) {
      EXPECT_TRUE(out == in);
      continue;
    }
    std::string again;
    auto r2 = engine.Compress(out, Forced(""), &again);
    ASSERT_TRUE(r2.ok()) << r2.status().ToString();
    EXPECT_TRUE(r2->passed_through()) << r2->content_type << " " << r2->tokens_before << " -> " << r2->tokens_after;
  }
}

}  // namespace
}  // namespace caveman
