#include "store/background_store.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "store/internal/framed_record_writer.h"

namespace caveman {
namespace {

using internal::FrameStore;
using internal::NewFrameStoreRecordWriter;

class BackgroundOpenedStore final : public OpeningStore, public FrameStore {
 public:
  explicit BackgroundOpenedStore(StoreOptions options);
  ~BackgroundOpenedStore() override;

  RecoveryStore* Wait() override;
  const Status& open_status() const override { return open_status_; }

  // Framed here, without waiting; the frame is stored at Commit (PutFrame), which waits.
  Result<std::unique_ptr<RecordWriter>> BeginRecord() override;
  Status PutFrame(const std::string& handle, const RecordInfo& info, const Spool& frame,
                  uint64_t original_bytes) override;

  // The rest waits for the open.
  Status Get(std::string_view handle, ByteSink& out) override;
  Status GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>& enough,
                      bool* stopped) override;
  Result<std::string> GetMetadata(std::string_view handle) override;
  Result<std::optional<std::string>> GetMarkerMap(std::string_view handle) override;
  Status GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out) override;
  Result<StoreStats> Stats() override;
  Result<GcResult> Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) override;
  Result<std::vector<RecordListing>> ListRecords(std::string_view after, size_t limit) override;
  Result<std::unique_ptr<StreamRecordWriter>> BeginStreamRecord(std::string_view command) override;
  Result<std::vector<PartialInfo>> ListPartials() override;
  Status GetPartial(std::string_view id, ByteSink& out) override;

 private:
  void Open();
  // fn(the opened store) after waiting for the open; the open's error if it failed.
  template <typename Fn>
  auto OnOpened(Fn&& fn) -> decltype(fn(std::declval<RecoveryStore&>())) {
    RecoveryStore* s = Wait();
    if (s == nullptr) return open_status_;
    return fn(*s);
  }

  const StoreOptions options_;
  std::thread opener_;
  bool waited_ = false;
  // Written by the opening thread (or the constructor), read after the join or after
  // failed_ (stored last, with release) reads true.
  std::unique_ptr<RecoveryStore> store_;
  Status open_status_;
  std::atomic<bool> failed_{false};
};

std::function<void()> g_open_hook_for_test;

BackgroundOpenedStore::BackgroundOpenedStore(StoreOptions options) : options_(std::move(options)) {
  try {
    opener_ = std::thread([this] { Open(); });
  } catch (...) {  // no thread (ulimit -u: std::system_error; no memory: std::bad_alloc)
    Open();        // open here instead
  }
}

BackgroundOpenedStore::~BackgroundOpenedStore() { (void)Wait(); }

void BackgroundOpenedStore::Open() {
  if (g_open_hook_for_test) g_open_hook_for_test();
  // Nothing may escape a thread's function (std::terminate): any exception is an open that
  // failed. Not kResourceExhausted for memory: that code reads as cave_ccr_budget_exceeded.
  try {
    auto opened = OpenRecoveryStore(options_);
    if (opened.ok()) {
      store_ = std::move(opened).value();
    } else {
      open_status_ = opened.status();
    }
  } catch (const std::bad_alloc&) {
    open_status_ = Status::IoError("cannot open recovery store: out of memory");
  } catch (...) {
    open_status_ = Status::IoError("cannot open recovery store: unexpected error");
  }
  failed_.store(store_ == nullptr, std::memory_order_release);
}

RecoveryStore* BackgroundOpenedStore::Wait() {
  if (!waited_) {
    if (opener_.joinable()) opener_.join();
    waited_ = true;
  }
  return store_.get();
}

Result<std::unique_ptr<RecordWriter>> BackgroundOpenedStore::BeginRecord() {
  // An open that has failed already: no framing in vain (open_status_ is written before).
  if (failed_.load(std::memory_order_acquire)) return open_status_;
  // The writer the opened store would give (a level it would refuse fails here), storing here.
  return NewFrameStoreRecordWriter(this, options_);
}

Status BackgroundOpenedStore::PutFrame(const std::string& handle, const RecordInfo& info, const Spool& frame,
                                       uint64_t original_bytes) {
  return OnOpened([&](RecoveryStore& s) -> Status {
    auto* frames = dynamic_cast<FrameStore*>(&s);
    if (frames == nullptr) return Status::Internal("ccr: the opened store takes no framed records");
    return frames->PutFrame(handle, info, frame, original_bytes);
  });
}

Status BackgroundOpenedStore::Get(std::string_view handle, ByteSink& out) {
  return OnOpened([&](RecoveryStore& s) { return s.Get(handle, out); });
}

Status BackgroundOpenedStore::GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>& enough,
                                           bool* stopped) {
  return OnOpened([&](RecoveryStore& s) { return s.GetStreaming(handle, out, enough, stopped); });
}

Result<std::string> BackgroundOpenedStore::GetMetadata(std::string_view handle) {
  return OnOpened([&](RecoveryStore& s) { return s.GetMetadata(handle); });
}

Result<std::optional<std::string>> BackgroundOpenedStore::GetMarkerMap(std::string_view handle) {
  return OnOpened([&](RecoveryStore& s) { return s.GetMarkerMap(handle); });
}

Status BackgroundOpenedStore::GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out) {
  return OnOpened([&](RecoveryStore& s) { return s.GetRange(handle, offset, length, out); });
}

Result<StoreStats> BackgroundOpenedStore::Stats() {
  return OnOpened([&](RecoveryStore& s) { return s.Stats(); });
}

Result<GcResult> BackgroundOpenedStore::Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) {
  return OnOpened([&](RecoveryStore& s) { return s.Gc(older_than_seconds, dry_run); });
}

Result<std::vector<RecordListing>> BackgroundOpenedStore::ListRecords(std::string_view after, size_t limit) {
  return OnOpened([&](RecoveryStore& s) { return s.ListRecords(after, limit); });
}

Result<std::unique_ptr<StreamRecordWriter>> BackgroundOpenedStore::BeginStreamRecord(std::string_view command) {
  return OnOpened([&](RecoveryStore& s) { return s.BeginStreamRecord(command); });
}

Result<std::vector<PartialInfo>> BackgroundOpenedStore::ListPartials() {
  return OnOpened([&](RecoveryStore& s) { return s.ListPartials(); });
}

Status BackgroundOpenedStore::GetPartial(std::string_view id, ByteSink& out) {
  return OnOpened([&](RecoveryStore& s) { return s.GetPartial(id, out); });
}

}  // namespace

void SetBackgroundOpenHookForTest(std::function<void()> hook) { g_open_hook_for_test = std::move(hook); }

std::unique_ptr<OpeningStore> OpenRecoveryStoreInBackground(StoreOptions options) {
  return std::make_unique<BackgroundOpenedStore>(std::move(options));
}

}  // namespace caveman
