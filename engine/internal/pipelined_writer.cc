// PipelinedStreamWriter: see pipelined_writer.h.
#include "engine/internal/pipelined_writer.h"

#include <new>

#include "stream/check.h"

namespace caveman::internal {

PipelinedStreamWriter::PipelinedStreamWriter(std::unique_ptr<StreamRecordWriter> inner)
    : inner_(std::move(inner)), thread_([this] { Run(); }) {
  CAVEMAN_DCHECK(inner_ != nullptr);
}

PipelinedStreamWriter::~PipelinedStreamWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  thread_.join();
}

void PipelinedStreamWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    std::string chunk = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    const bool failed = !status_.ok();
    lock.unlock();
    Status s;
    if (!failed) {  // after an error: drop the rest
      try {
        s = inner_->Append(chunk);
      } catch (const std::bad_alloc&) {  // issue 15: must not escape the thread (std::terminate)
        s = Status::ResourceExhausted("out of memory while storing the original");
      }
    }
    lock.lock();
    busy_ = false;
    if (!s.ok() && status_.ok()) status_ = s;
    queued_bytes_ -= chunk.size();
    chunk.clear();
    free_.push_back(std::move(chunk));
    cv_.notify_all();
  }
}

Status PipelinedStreamWriter::Append(std::string_view data) {
  if (data.empty()) return Status::OK();
  std::string buf;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    // Backpressure: memory stays bounded when the store is slower than the input.
    cv_.wait(lock, [&] { return queued_bytes_ == 0 || queued_bytes_ + data.size() <= kMaxQueuedBytes; });
    if (!free_.empty()) {
      buf = std::move(free_.back());
      free_.pop_back();
    }
  }
  buf.assign(data);  // copied outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_bytes_ += buf.size();
    queue_.push_back(std::move(buf));
  }
  cv_.notify_all();
  appended_ += data.size();
  return Status::OK();
}

Status PipelinedStreamWriter::WaitIdle() const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
  return status_;
}

Status PipelinedStreamWriter::Sync() {
  CAVEMAN_RETURN_IF_ERROR(WaitIdle());
  return inner_->Sync();
}

uint64_t PipelinedStreamWriter::synced_bytes() const {
  (void)WaitIdle();
  return inner_->synced_bytes();
}

std::string PipelinedStreamWriter::handle() const {
  (void)WaitIdle();
  return inner_->handle();
}

Status PipelinedStreamWriter::Commit(const std::string& handle, const RecordInfo& info) {
  CAVEMAN_RETURN_IF_ERROR(WaitIdle());
  return inner_->Commit(handle, info);
}

void PipelinedStreamWriter::Abandon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& c : queue_) queued_bytes_ -= c.size();
    queue_.clear();  // nothing queued matters any more
  }
  (void)WaitIdle();
  inner_->Abandon();
}

}  // namespace caveman::internal
