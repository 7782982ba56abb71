#include "store/internal/framed_record_writer.h"

namespace caveman::internal {

Status FramedRecordWriter::Take(std::string_view data, bool last) {
  if (finished_) return Status::Internal("ccr: record writer used after Commit or Abandon");
  if (ended_) {  // a caller's mistake: the record it meant is not this one
    Abandon();
    return Status::Internal("ccr: record writer appended to after EndOfInput");
  }
  sha_.Update(data);
  original_bytes_ += data.size();
  Status s = last ? enc_->WriteLast(data, frame_) : enc_->Write(data, frame_);
  if (!s.ok()) Abandon();
  return s;
}

Status FramedRecordWriter::EndOfInput() {
  if (finished_) return Status::Internal("ccr: record writer used after Commit or Abandon");
  if (ended_) return Status::OK();
  ended_ = true;
  Status s = enc_->Finish(frame_);
  if (!s.ok()) Abandon();
  return s;
}

Status FramedRecordWriter::Commit(const std::string& handle, const RecordInfo& info) {
  if (finished_) return Status::Internal("ccr: record writer used after Commit or Abandon");
  Status s = ended_ ? Status::OK() : enc_->Finish(frame_);
  if (s.ok() && !IsWellFormedHandle(handle)) {
    s = Status::InvalidArgument("ccr: malformed recovery handle: " + handle);
  }
  // A record stored under the wrong handle could never be verified on Get, so a lossy
  // result pointing at it would be unrecoverable: refuse it here instead.
  if (s.ok() && HandleFromDigest(sha_.Final()) != handle) {
    s = Status::InvalidArgument("ccr: handle does not match the recorded bytes: " + handle);
  }
  if (s.ok()) s = Put(handle, info, frame_, original_bytes_);
  Abandon();
  return s;
}

void FramedRecordWriter::Abandon() {
  finished_ = true;
  enc_.reset();
  frame_.Clear();
}

SpoolOptions StoreSpoolOptions(const StoreOptions& options) {
  SpoolOptions spool;
  spool.memory_limit = options.spool_memory_limit;
  return spool;
}

Result<std::unique_ptr<RecordWriter>> NewFrameStoreRecordWriter(FrameStore* store, const StoreOptions& options) {
  CAVEMAN_ASSIGN_OR_RETURN(auto enc, FrameEncoder::New(options.zstd_level));
  return std::unique_ptr<RecordWriter>(
      std::make_unique<FrameStoreRecordWriter>(store, std::move(enc), StoreSpoolOptions(options)));
}

}  // namespace caveman::internal
