// The RecoveryStore contract (store/store.h) run against both backends (issue 18): SQLite on a
// temporary file and PostgreSQL on the real server tests/store/pg_harness.sh starts (ctest
// runs this binary under `pg_harness.sh run --`, which sets CAVEMAN_TEST_PG_URL). Without
// that variable the PostgreSQL cases FAIL rather than skip: scripts/setup installs postgresql.
// Each PostgreSQL case starts from empty tables. Both backends also run opened on a thread of
// their own (BackgroundOpenedStore, as `compress` opens them): every case then begins its
// first record while the open may still be running.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "store/background_store.h"
#include "stream/sha256.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

using caveman::testing::RandomBytes;

std::string CiText(size_t n) {
  std::string s;
  for (uint64_t i = 0; s.size() < n; ++i) {
    s += "2024-05-01T12:00:" + std::to_string(10 + i % 50) + "Z [INFO] test_module_" + std::to_string(i % 37) +
         "::case_" + std::to_string(i) + (i % 11 == 0 ? " FAILED: assertion left == right\n" : " ... ok\n");
  }
  s.resize(n);
  return s;
}

std::string HandleOf(std::string_view data) { return HandleFromDigest(Sha256::Digest(data)); }

RecordInfo Info(std::string type = "log", uint64_t before = 100, uint64_t after = 10, std::string metadata = "") {
  RecordInfo info;
  info.content_type = std::move(type);
  info.compressor = "log";
  info.tokens_before = before;
  info.tokens_after = after;
  info.metadata = std::move(metadata);
  return info;
}

Status PutPieces(RecoveryStore& store, const std::vector<std::string_view>& pieces, const std::string& handle,
                 const RecordInfo& info) {
  auto w = store.BeginRecord();
  if (!w.ok()) return w.status();
  for (std::string_view p : pieces) CAVEMAN_RETURN_IF_ERROR((*w)->Append(p));
  return (*w)->Commit(handle, info);
}

Result<std::string> Put(RecoveryStore& store, std::string_view data, const RecordInfo& info = Info()) {
  std::string h = HandleOf(data);
  CAVEMAN_RETURN_IF_ERROR(PutPieces(store, {data}, h, info));
  return h;
}

enum class Backend { kSqlite, kPostgres, kSqliteOpening, kPostgresOpening };

bool IsPostgres(Backend b) { return b == Backend::kPostgres || b == Backend::kPostgresOpening; }

std::string PgUrl() {
  const char* v = std::getenv("CAVEMAN_TEST_PG_URL");
  return v == nullptr ? "" : v;
}

// Empties the PostgreSQL store's tables (they exist after the first open).
void ResetPostgres(const std::string& url) {
  PGconn* c = PQconnectdb(url.c_str());
  ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
  PGresult* r = PQexec(c,
                       "DO $$ BEGIN IF to_regclass('ccr_recoveries') IS NOT NULL THEN "
                       "TRUNCATE ccr_recoveries, ccr_chunks, ccr_partials; UPDATE ccr_usage SET used_bytes = 0; "
                       "END IF; END $$");
  EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQerrorMessage(c);
  PQclear(r);
  PQfinish(c);
}

class StoreContract : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (IsPostgres(GetParam())) {
      url_ = PgUrl();
      ASSERT_FALSE(url_.empty()) << "CAVEMAN_TEST_PG_URL is not set: run under tests/store/pg_harness.sh run --";
      ResetPostgres(url_);
    } else {
      char tmpl[] = "/tmp/caveman-contract.XXXXXX";
      ASSERT_NE(mkdtemp(tmpl), nullptr);
      dir_ = tmpl;
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<RecoveryStore> Open(uint64_t max_bytes = kDefaultStoreCapacity) {
    StoreOptions o;
    o.max_bytes = max_bytes;
    if (IsPostgres(GetParam())) {
      o.url = url_;
    } else {
      o.path = dir_ + "/ccr.db";
    }
    if (GetParam() == Backend::kSqliteOpening || GetParam() == Backend::kPostgresOpening) {
      return OpenRecoveryStoreInBackground(o);
    }
    auto s = OpenRecoveryStore(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  std::string url_;
  std::string dir_;
};

TEST_P(StoreContract, RoundTripsSizesIncludingMultiChunkFrames) {
  auto store = Open();
  ASSERT_TRUE(store);
  // 3 MiB of random bytes: an incompressible frame of four ≤ 1 MiB chunk rows.
  for (const std::string& data :
       {std::string(), std::string("x"), CiText(200 * 1024), RandomBytes(3 * 1024 * 1024 + 17, 7)}) {
    auto h = Put(*store, data);
    ASSERT_TRUE(h.ok()) << h.status().message();
    StringSink out;
    ASSERT_TRUE(store->Get(*h, out).ok()) << data.size();
    EXPECT_EQ(out.data(), data) << data.size();
  }
  // A second connection (another process's view) reads them too.
  auto other = Open();
  ASSERT_TRUE(other);
  StringSink out;
  ASSERT_TRUE(other->Get(HandleOf("x"), out).ok());
  EXPECT_EQ(out.data(), "x");
}

// RecordWriter::EndOfInput ends the frame before Commit (the engine calls it from its input
// worker): the record still round-trips, a second call is harmless, and appending after it is
// refused (the record is then dropped, as after any failed Append).
TEST_P(StoreContract, EndOfInputEndsTheFrameBeforeCommit) {
  auto store = Open();
  ASSERT_TRUE(store);
  for (const std::string& data : {std::string(), CiText(5000), CiText(300 * 1024), RandomBytes(1100 * 1024, 4)}) {
    for (bool last : {false, true}) {
      SCOPED_TRACE(std::to_string(data.size()) + (last ? " AppendLast" : " Append"));
      const std::string d = data + (last ? "L" : "A");  // distinct records
      auto w = store->BeginRecord();
      ASSERT_TRUE(w.ok());
      const std::string_view all(d);
      const size_t half = d.size() / 2;
      ASSERT_TRUE((*w)->Append(all.substr(0, half)).ok());
      ASSERT_TRUE((last ? (*w)->AppendLast(all.substr(half)) : (*w)->Append(all.substr(half))).ok());
      ASSERT_TRUE((*w)->EndOfInput().ok());
      ASSERT_TRUE((*w)->EndOfInput().ok());
      ASSERT_TRUE((*w)->Commit(HandleOf(d), Info()).ok());
      StringSink out;
      ASSERT_TRUE(store->Get(HandleOf(d), out).ok());
      EXPECT_TRUE(out.data() == d);
    }
  }
  auto w = store->BeginRecord();
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("abc").ok());
  ASSERT_TRUE((*w)->EndOfInput().ok());
  EXPECT_FALSE((*w)->Append("d").ok());
  EXPECT_FALSE((*w)->Commit(HandleOf("abc"), Info()).ok());
  StringSink out;
  EXPECT_EQ(store->Get(HandleOf("abc"), out).code(), StatusCode::kNotFound);
}

TEST_P(StoreContract, PutTwiceRefreshesAndFollowsFieldRules) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::string data = CiText(10000);
  auto h = Put(*store, data, Info("log", 500, 50, "meta-1"));
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(Put(*store, data, Info("text", 0, 7, "meta-2")).ok());  // tokens_before 0: fields kept
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->totals.count, 1u);
  EXPECT_EQ(stats->by_content_type.count("log"), 1u);
  EXPECT_EQ(stats->totals.tokens_before, 500u);
  EXPECT_EQ(store->GetMetadata(*h).value(), "meta-1");
  ASSERT_TRUE(Put(*store, data, Info("json", 900, 90, "")).ok());  // fields replaced
  stats = store->Stats();
  EXPECT_EQ(stats->by_content_type.count("json"), 1u);
  EXPECT_EQ(stats->totals.tokens_after, 90u);
  auto h2 = Put(*store, "other original", Info("log", 1, 1, ""));
  ASSERT_TRUE(h2.ok());
  EXPECT_EQ(store->GetMetadata(*h2).value(), "");
  ASSERT_TRUE(Put(*store, "other original", Info("log", 1, 1, "late")).ok());
  EXPECT_EQ(store->GetMetadata(*h2).value(), "late");
}

TEST_P(StoreContract, CapacityFailsClosedAndGcFreesSpace) {
  std::string a = RandomBytes(200000, 1), b = RandomBytes(200000, 2);
  auto store = Open(300000);
  ASSERT_TRUE(store);
  auto ha = Put(*store, a);
  ASSERT_TRUE(ha.ok()) << ha.status().message();
  auto before = store->Stats();
  ASSERT_TRUE(before.ok());
  EXPECT_GT(before->storage_bytes, 200000u);
  auto hb = Put(*store, b);
  ASSERT_FALSE(hb.ok());
  EXPECT_EQ(hb.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(hb.status().message(), "ccr: storage budget exceeded");
  EXPECT_EQ(store->Stats()->storage_bytes, before->storage_bytes);
  StringSink none;
  EXPECT_EQ(store->Get(HandleOf(b), none).code(), StatusCode::kNotFound);
  // gc without an age keeps records; the record is then aged past 1 s.
  auto kept = store->Gc(std::nullopt, false);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->removed, 0u);
  sleep(2);
  auto dry = store->Gc(1, true);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->removed, 1u);
  EXPECT_EQ(store->Stats()->totals.count, 1u);
  auto gc = store->Gc(1, false);
  ASSERT_TRUE(gc.ok()) << gc.status().message();
  EXPECT_EQ(gc->removed, 1u);
  EXPECT_EQ(gc->freed_bytes, before->storage_bytes);
  EXPECT_EQ(gc->storage_bytes, 0u);
  EXPECT_TRUE(Put(*store, b).ok());
}

TEST_P(StoreContract, HandlesAreCheckedAndUnknownOnesNotFound) {
  auto store = Open();
  ASSERT_TRUE(store);
  StringSink out;
  EXPECT_EQ(store->Get("ccr_00000000000000000000000000000000", out).message(), "ccr: recovery handle not found");
  EXPECT_EQ(store->Get("not-a-handle", out).code(), StatusCode::kNotFound);
  EXPECT_EQ(store->GetMetadata("ccr_00000000000000000000000000000000").status().code(), StatusCode::kNotFound);
  Status s = PutPieces(*store, {"abc"}, HandleOf("abd"), Info());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Stats()->totals.count, 0u);
}

TEST_P(StoreContract, RangeStreamingAndMarkerMaps) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::string data = CiText(3 * 1024 * 1024);
  RecordInfo info = Info();
  info.marker_map = std::string("map\0blob", 8);
  auto h = Put(*store, data, info);
  ASSERT_TRUE(h.ok());
  StringSink range;
  ASSERT_TRUE(store->GetRange(*h, 1000, 5000, range).ok());
  EXPECT_EQ(range.data(), data.substr(1000, 5000));
  StringSink outside;
  EXPECT_EQ(store->GetRange(*h, data.size() - 1, 2, outside).code(), StatusCode::kInvalidArgument);
  StringSink head;
  bool stopped = false;
  ASSERT_TRUE(store
                  ->GetStreaming(
                      *h, head, [&] { return head.data().size() >= 100; }, &stopped)
                  .ok());
  EXPECT_TRUE(stopped);
  EXPECT_LT(head.data().size(), data.size());
  EXPECT_EQ(head.data(), data.substr(0, head.data().size()));
  auto map = store->GetMarkerMap(*h);
  ASSERT_TRUE(map.ok());
  ASSERT_TRUE(map->has_value());
  EXPECT_EQ(**map, std::string("map\0blob", 8));
  auto h2 = Put(*store, "no map here");
  EXPECT_FALSE(store->GetMarkerMap(*h2)->has_value());
}

// A marker map given as a reader (follow mode: the map stays in its spool) is stored as the
// same bytes as one given whole: on a new record, on a refresh of the same original, and on a
// stream record's commit. 2.5 MiB with NULs, so the SQLite store writes it in three pieces.
// A reader that gives other than the announced size fails the put and stores nothing.
TEST_P(StoreContract, MarkerMapsGivenAsReaders) {
  auto store = Open();
  ASSERT_TRUE(store);
  const std::string map_one = RandomBytes(2621440 + 17, 7), map_two = RandomBytes(1048576, 8);
  auto with_reader = [](const std::string& map, uint64_t announced) {
    RecordInfo info = Info();
    info.marker_map_size = announced;
    info.marker_map_reader = [&map] { return NewChunkedSource(map, 3, 300000); };
    return info;
  };
  const std::string data = CiText(200000);
  auto h = Put(*store, data, with_reader(map_one, map_one.size()));
  ASSERT_TRUE(h.ok()) << h.status().message();
  auto got = store->GetMarkerMap(*h);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE(**got == map_one);
  // The same original again: the row is refreshed and its map replaced.
  ASSERT_TRUE(Put(*store, data, with_reader(map_two, map_two.size())).ok());
  got = store->GetMarkerMap(*h);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE(**got == map_two);
  // A stream record's commit.
  auto w = store->BeginStreamRecord("tail -f");
  ASSERT_TRUE(w.ok()) << w.status().message();
  const std::string streamed = CiText(150000) + "streamed";
  ASSERT_TRUE((*w)->Append(streamed).ok());
  const std::string hs = HandleOf(streamed);
  ASSERT_TRUE((*w)->Commit(hs, with_reader(map_one, map_one.size())).ok());
  got = store->GetMarkerMap(hs);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE(**got == map_one);
  // Announced sizes the reader does not match.
  const std::string other = CiText(100000) + "other";
  EXPECT_EQ(Put(*store, other, with_reader(map_two, map_two.size() + 1)).status().code(), StatusCode::kIoError);
  EXPECT_EQ(Put(*store, other, with_reader(map_two, map_two.size() - 1)).status().code(), StatusCode::kIoError);
  StringSink none;
  EXPECT_EQ(store->Get(HandleOf(other), none).code(), StatusCode::kNotFound);
}

TEST_P(StoreContract, StreamRecordsArePartialUntilCommit) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto w = store->BeginStreamRecord("make -j2");
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::string first = CiText(300000), second = RandomBytes(1500000, 5);
  ASSERT_TRUE((*w)->Append(first).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  auto parts = store->ListPartials();
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].id, (*w)->partial_id());
  EXPECT_EQ((*parts)[0].command, "make -j2");
  EXPECT_TRUE((*parts)[0].writer_alive);
  StringSink prefix;
  ASSERT_TRUE(store->GetPartial((*w)->partial_id(), prefix).ok());
  EXPECT_EQ(prefix.data(), first);
  ASSERT_TRUE((*w)->Append(second).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  StringSink prefix2;
  ASSERT_TRUE(store->GetPartial((*w)->partial_id(), prefix2).ok());
  EXPECT_EQ(prefix2.data(), first + second);
  const std::string h = HandleOf(first + second);
  EXPECT_EQ((*w)->handle(), h);
  ASSERT_TRUE((*w)->Commit(h, Info()).ok());
  EXPECT_TRUE(store->ListPartials()->empty());
  StringSink whole;
  ASSERT_TRUE(store->Get(h, whole).ok());
  EXPECT_EQ(whole.data(), first + second);
  // Gc keeps it (its chunks are the record's, not orphans), and usage covers it exactly once.
  auto gc = store->Gc(std::nullopt, false);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->orphan_chunks, 0u);
  auto again = store->Get(h, whole);
  EXPECT_TRUE(again.ok());
  // Abandon deletes the partial record; usage returns to the committed record's.
  const uint64_t used = store->Stats()->storage_bytes;
  auto w2 = store->BeginStreamRecord("");
  ASSERT_TRUE((*w2)->Append("abandoned").ok());
  ASSERT_TRUE((*w2)->Sync().ok());
  EXPECT_GT(store->Stats()->storage_bytes, used);
  (*w2)->Abandon();
  EXPECT_TRUE(store->ListPartials()->empty());
  EXPECT_EQ(store->Stats()->storage_bytes, used);
}

TEST_P(StoreContract, ListRecordsPagesInHandleOrder) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::vector<std::string> handles;
  for (int i = 0; i < 7; ++i) {
    auto h = Put(*store, "record " + std::to_string(i), Info("log", 10 + i, 1, "m"));
    ASSERT_TRUE(h.ok()) << h.status().message();
    handles.push_back(*h);
  }
  std::sort(handles.begin(), handles.end());
  std::vector<std::string> seen;
  std::string after;
  for (;;) {
    auto page = store->ListRecords(after, 3);
    ASSERT_TRUE(page.ok()) << page.status().message();
    if (page->empty()) break;
    EXPECT_LE(page->size(), 3u);
    for (const RecordListing& r : *page) {
      seen.push_back(r.handle);
      EXPECT_EQ(r.info.metadata, "m");
      EXPECT_EQ(r.original_bytes, 8u);
      after = r.handle;
    }
  }
  EXPECT_EQ(seen, handles);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreContract,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres, Backend::kSqliteOpening,
                                           Backend::kPostgresOpening),
                         [](const ::testing::TestParamInfo<Backend>& p) -> std::string {
                           switch (p.param) {
                             case Backend::kSqlite: return "Sqlite";
                             case Backend::kPostgres: return "Postgres";
                             case Backend::kSqliteOpening: return "SqliteOpening";
                             case Backend::kPostgresOpening: return "PostgresOpening";
                           }
                           return "";
                         });

}  // namespace
}  // namespace caveman
