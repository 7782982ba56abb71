// What the built-in record writers (SQLite, PostgreSQL) share: the original's SHA-256 and
// length and its zstd frame (checksum on, spooled) as the bytes arrive; the backend only
// stores the finished frame (FrameStore::PutFrame). One copy of the RecordWriter contract's
// bookkeeping: a failed append drops the record, EndOfInput ends the frame early, Commit
// checks the handle against the bytes appended before anything is written. The frame needs
// no connection to the backend, so a record can be framed while its store is still opening
// (store/background_store.h).
#ifndef CAVEMAN_STORE_INTERNAL_FRAMED_RECORD_WRITER_H_
#define CAVEMAN_STORE_INTERNAL_FRAMED_RECORD_WRITER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "caveman/store/store.h"
#include "store/internal/zstd_frame.h"
#include "stream/sha256.h"
#include "stream/spool.h"

namespace caveman::internal {

// The spool options of a store's spools (frames, originals read back): options.spool_memory_limit.
SpoolOptions StoreSpoolOptions(const StoreOptions& options);

// A backend that stores records framed by a FramedRecordWriter (SqliteStore, PgStore).
class FrameStore {
 public:
  // Stores the record: `frame` is one complete zstd frame (FrameEncoder at the store's
  // StoreOptions::zstd_level) of the `original_bytes` appended, whose SHA-256 prefix `handle`
  // is (FramedRecordWriter::Commit checked both). One transaction. Errors: as
  // RecordWriter::Commit; kNotSupported for a store opened read-only.
  virtual Status PutFrame(const std::string& handle, const RecordInfo& info, const Spool& frame,
                          uint64_t original_bytes) = 0;

 protected:
  ~FrameStore() = default;
};

class FramedRecordWriter : public RecordWriter {
 public:
  FramedRecordWriter(std::unique_ptr<FrameEncoder> enc, SpoolOptions spool_options)
      : enc_(std::move(enc)), frame_(std::move(spool_options)) {}

  Status Append(std::string_view data) final { return Take(data, /*last=*/false); }
  Status AppendLast(std::string_view data) final { return Take(data, /*last=*/true); }
  Status EndOfInput() final;
  Status Commit(const std::string& handle, const RecordInfo& info) final;
  std::optional<std::string> AppendedHandle() const final { return HandleFromDigest(sha_.Peek()); }
  void Abandon() final;

 protected:
  // Stores the record: `frame` is the finished frame of the `original_bytes` appended, whose
  // SHA-256 prefix `handle` is. Called at most once, from Commit.
  virtual Status Put(const std::string& handle, const RecordInfo& info, const Spool& frame,
                     uint64_t original_bytes) = 0;

 private:
  Status Take(std::string_view data, bool last);

  std::unique_ptr<FrameEncoder> enc_;
  Spool frame_;
  Sha256 sha_;
  uint64_t original_bytes_ = 0;
  bool finished_ = false;  // committed or abandoned
  bool ended_ = false;     // EndOfInput ended the frame
};

// The record writer of a FrameStore: frames as above, stores through PutFrame.
class FrameStoreRecordWriter final : public FramedRecordWriter {
 public:
  FrameStoreRecordWriter(FrameStore* store, std::unique_ptr<FrameEncoder> enc, SpoolOptions spool_options)
      : FramedRecordWriter(std::move(enc), std::move(spool_options)), store_(store) {}

 private:
  Status Put(const std::string& handle, const RecordInfo& info, const Spool& frame, uint64_t original_bytes) final {
    return store_->PutFrame(handle, info, frame, original_bytes);
  }

  FrameStore* store_;
};

// The record writer every FrameStore begins: frames at options.zstd_level, spools the frame
// with options.spool_memory_limit, stores into `store`. Errors: kInvalidArgument for a level
// zstd refuses.
Result<std::unique_ptr<RecordWriter>> NewFrameStoreRecordWriter(FrameStore* store, const StoreOptions& options);

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_FRAMED_RECORD_WRITER_H_
