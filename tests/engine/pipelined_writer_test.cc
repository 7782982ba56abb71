// PipelinedStreamWriter (issue 19): appends on a background thread, every other call after
// they are done, so the record is the one the wrapped writer alone would write.
#include "engine/internal/pipelined_writer.h"

#include <atomic>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "caveman/store/store.h"
#include "caveman/stream/tokens.h"
#include "stream/sha256.h"

namespace caveman::internal {
namespace {

std::unique_ptr<RecoveryStore> MemoryStore() {
  auto s = OpenMemoryStore(StoreOptions{});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::string Text(size_t n) {
  std::string t;
  for (uint64_t i = 0; t.size() < n; ++i)
    t += "2026-12-04T21:00:00Z INFO step " + std::to_string(i * 7919 % 1000) + "\n";
  t.resize(n);
  return t;
}

TEST(PipelinedStreamWriter, RecordEqualsTheWrappedWritersAcrossRandomChunksAndSyncs) {
  const std::string text = Text(3 << 20);
  auto store = MemoryStore();
  auto inner = store->BeginStreamRecord("make");
  ASSERT_TRUE(inner.ok()) << inner.status().ToString();
  PipelinedStreamWriter w(std::move(inner).value());
  std::mt19937 rng(19);
  size_t off = 0;
  int syncs = 0;
  int chunks = 0;
  while (off < text.size()) {
    // 1 byte up to 256 KiB.
    const size_t n = std::min<size_t>(text.size() - off, 1 + rng() % (rng() % 2 ? 64 : (256 << 10)));
    ASSERT_TRUE(w.Append(std::string_view(text).substr(off, n)).ok());
    off += n;
    EXPECT_EQ(w.appended_bytes(), off);
    if (++chunks % 5 == 0) {
      ASSERT_TRUE(w.Sync().ok());
      ++syncs;
      EXPECT_EQ(w.synced_bytes(), off);  // everything appended before the call is covered
      StringSink partial;
      ASSERT_TRUE(store->GetPartial(w.partial_id(), partial).ok());
      EXPECT_TRUE(partial.data() == text.substr(0, off));
    }
  }
  EXPECT_GT(syncs, 0);
  const std::string handle = HandleFromDigest(Sha256::Digest(text));
  EXPECT_EQ(w.handle(), handle);
  RecordInfo info;
  info.content_type = info.compressor = "log";
  ASSERT_TRUE(w.Commit(handle, info).ok());
  StringSink back;
  ASSERT_TRUE(store->Get(handle, back).ok());
  EXPECT_TRUE(back.data() == text);
}

// A wrapped writer whose Append fails from the `fail_at`-th call on; records what it got.
class FlakyWriter final : public StreamRecordWriter {
 public:
  // `throws`: the failing Append throws std::bad_alloc instead (memory ran out in the store).
  explicit FlakyWriter(int fail_at, std::string* got, bool* abandoned, bool throws = false)
      : fail_at_(fail_at), throws_(throws), got_(got), abandoned_(abandoned) {}
  Status Append(std::string_view data) override {
    if (++calls_ >= fail_at_) {
      if (throws_) throw std::bad_alloc();
      return Status::IoError("disk on fire");
    }
    got_->append(data);
    return Status::OK();
  }
  Status Sync() override {
    synced_ = got_->size();
    return Status::OK();
  }
  uint64_t appended_bytes() const override { return got_->size(); }
  uint64_t synced_bytes() const override { return synced_; }
  const std::string& partial_id() const override { return id_; }
  std::string handle() const override { return HandleFromDigest(Sha256::Digest(*got_)); }
  Status Commit(const std::string&, const RecordInfo&) override { return Status::OK(); }
  void Abandon() override { *abandoned_ = true; }

 private:
  int fail_at_;
  bool throws_;
  int calls_ = 0;
  std::string* got_;
  bool* abandoned_;
  uint64_t synced_ = 0;
  std::string id_ = "part_00000000000000000000000000000000";
};

TEST(PipelinedStreamWriter, AnAppendErrorIsStickyAndStopsLaterAppends) {
  std::string got;
  bool abandoned = false;
  PipelinedStreamWriter w(std::make_unique<FlakyWriter>(3, &got, &abandoned));
  ASSERT_TRUE(w.Append("one\n").ok());
  ASSERT_TRUE(w.Append("two\n").ok());
  ASSERT_TRUE(w.Sync().ok());
  EXPECT_EQ(w.synced_bytes(), 8u);
  (void)w.Append("three\n");  // fails in the background
  Status s = w.Sync();        // waits for it, then reports it
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_EQ(w.Append("four\n").code(), StatusCode::kIoError);
  RecordInfo info;
  EXPECT_EQ(w.Commit("ccr_00000000000000000000000000000000", info).code(), StatusCode::kIoError);
  EXPECT_EQ(got, "one\ntwo\n");  // nothing after the failure reached the wrapped writer
  w.Abandon();
  EXPECT_TRUE(abandoned);
}

// Issue 15: memory running out inside the background Append (std::bad_alloc) must not end the
// process (an exception escaping the thread calls std::terminate): it becomes the sticky error.
TEST(PipelinedStreamWriter, AnAllocationFailureInTheBackgroundIsAStickyError) {
  std::string got;
  bool abandoned = false;
  PipelinedStreamWriter w(std::make_unique<FlakyWriter>(2, &got, &abandoned, /*throws=*/true));
  ASSERT_TRUE(w.Append("one\n").ok());
  (void)w.Append("two\n");  // throws in the background
  Status s = w.Sync();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ(w.Append("three\n").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(got, "one\n");
  w.Abandon();
  EXPECT_TRUE(abandoned);
}

// A counter that counts bytes and throws std::bad_alloc from its `fail_at`-th Count on.
class ThrowingCounter final : public TokenCounter {
 public:
  explicit ThrowingCounter(int fail_at) : fail_at_(fail_at) {}
  std::string_view name() const override { return "bytes"; }
  uint64_t Count(std::string_view text) const override {
    if (++calls_ >= fail_at_) throw std::bad_alloc();
    return text.size();
  }

 private:
  int fail_at_;
  mutable std::atomic<int> calls_{0};
};

// Issue 15: follow mode counts its input on BackgroundTokenCount's thread; memory running out
// there must neither end the process nor leave Feed waiting for a worker that stopped.
TEST(BackgroundTokenCount, AnAllocationFailureOnTheWorkerEndsTheCountNotTheProcess) {
  std::string chunk;
  for (int i = 0; i < 200; ++i) chunk += "line " + std::to_string(i) + "\n";
  for (int fail_at : {1, 5, 1000000}) {
    SCOPED_TRACE(fail_at);
    ThrowingCounter counter(fail_at);
    BackgroundTokenCount background(counter);
    for (int i = 0; i < 64; ++i) background.Feed(chunk);  // more than the queue holds
    const uint64_t total = background.Finish();
    if (fail_at == 1000000) {
      EXPECT_TRUE(background.complete());
      EXPECT_EQ(total, 64 * chunk.size());
    } else {
      EXPECT_FALSE(background.complete());
      EXPECT_EQ(total, 0u);
    }
  }
}

}  // namespace
}  // namespace caveman::internal
