// PipelinedStreamWriter (issue 19): appends on a background thread, every other call after
// they are done, so the record is the one the wrapped writer alone would write.
#include "engine/internal/pipelined_writer.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "caveman/store/store.h"
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
  explicit FlakyWriter(int fail_at, std::string* got, bool* abandoned)
      : fail_at_(fail_at), got_(got), abandoned_(abandoned) {}
  Status Append(std::string_view data) override {
    if (++calls_ >= fail_at_) return Status::IoError("disk on fire");
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

}  // namespace
}  // namespace caveman::internal
