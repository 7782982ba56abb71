// PipelinedStreamWriter: a StreamRecordWriter that hands Append (the SHA-256 and the zstd
// frame of the original, the follow path's largest cost after its online stage) to a
// background thread, so that a fast stream is compressed for the store on the second core
// while the online stage and the output run on the first (issue 19: `--follow` throughput).
//
// Every other call first waits until the queued appends are done and then goes to the wrapped
// writer on the calling thread, so the wrapped writer never runs two calls at once and every
// result (Sync coverage, handle, Commit) is the one the wrapped writer alone would give for the
// same bytes. An append error is sticky: the next Append, Sync or Commit returns it.
//
// Memory: at most kMaxQueuedBytes of copies wait (Append blocks beyond that), plus the wrapped
// writer's own.
//
// Thread-safety: one thread calls the methods (as for any StreamRecordWriter).
#ifndef CAVEMAN_ENGINE_INTERNAL_PIPELINED_WRITER_H_
#define CAVEMAN_ENGINE_INTERNAL_PIPELINED_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "caveman/store/store.h"
#include "caveman/stream/status.h"

namespace caveman::internal {

class PipelinedStreamWriter final : public StreamRecordWriter {
 public:
  static constexpr size_t kMaxQueuedBytes = 8 << 20;

  // REQUIRES: `inner` is not null.
  explicit PipelinedStreamWriter(std::unique_ptr<StreamRecordWriter> inner);
  // Drops queued appends (a partial record holds what was synced, and nothing queued is).
  ~PipelinedStreamWriter() override;

  Status Append(std::string_view data) override;
  Status Sync() override;
  uint64_t appended_bytes() const override { return appended_; }
  uint64_t synced_bytes() const override;
  const std::string& partial_id() const override { return inner_->partial_id(); }
  std::string handle() const override;
  Status Commit(const std::string& handle, const RecordInfo& info) override;
  void Abandon() override;

 private:
  // Waits until the queue is empty and no append runs; returns the sticky append status.
  Status WaitIdle() const;
  void Run();

  std::unique_ptr<StreamRecordWriter> inner_;
  uint64_t appended_ = 0;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::vector<std::string> free_;  // recycled buffers
  size_t queued_bytes_ = 0;
  bool busy_ = false;  // the thread is inside inner_->Append
  bool stop_ = false;
  Status status_;       // first append error
  std::thread thread_;  // last: starts after the other members exist
};

}  // namespace caveman::internal

#endif  // CAVEMAN_ENGINE_INTERNAL_PIPELINED_WRITER_H_
