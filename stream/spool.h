// Spool: an append-only byte buffer that stays in memory up to a bound and then spills to an
// anonymous temporary file, so that output (or an original) can be held until the size gate
// decides, in memory bounded independently of its size.
//
// Body: a re-readable, read-only view of one payload (a string or a Spool) handed to
// compressors; streaming compressors read it in chunks, in-memory ones ask for View().
//
// Thread-safety: none; a Spool belongs to one stream. Readers must not outlive the Spool and
// must not be used while the Spool is being written.
#ifndef CAVEMAN_STREAM_SPOOL_H_
#define CAVEMAN_STREAM_SPOOL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "caveman/stream/byte_io.h"
#include "stream/check.h"

namespace caveman {

struct SpoolOptions {
  // Bytes kept in memory before spilling to a temporary file. Default: 8 MiB.
  size_t memory_limit = 8 * 1024 * 1024;
  // Directory for the spill file; empty = $TMPDIR, else /tmp. The file is created with mode
  // 0600 and unlinked at once, so it disappears with the process whatever happens.
  std::string temp_dir;
};

namespace internal {

// The in-memory bytes of a Spool: one contiguous block that grows geometrically. From
// kMapBytes on it is an anonymous mapping in whole 2 MiB huge pages, extended with mremap, so
// growing copies no bytes and faults no written page in again (a 4 MiB spool grown by doubling
// through malloc touched 8 MiB of fresh pages and copied 4 MiB; issue 19). Smaller blocks live
// on the heap.
// Allocation failure throws std::bad_alloc, like std::string.
class SpoolMemory {
 public:
  SpoolMemory() = default;
  ~SpoolMemory() { Release(); }
  SpoolMemory(const SpoolMemory&) = delete;
  SpoolMemory& operator=(const SpoolMemory&) = delete;

  std::string_view view() const { return {data_, size_}; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // Capacity for at least `n` bytes: on the heap, exactly what is asked plus Body::kViewPadding;
  // from kMapBytes on, that rounded up to whole 2 MiB huge pages.
  void Reserve(size_t n);
  // REQUIRES: size() + d.size() <= capacity() or grows by Reserve's rule (at least doubling).
  void Append(std::string_view d);
  // Where the next byte goes, for writing in place; Extend(n) then takes n bytes written there.
  // REQUIRES (Extend): size() + n <= capacity().
  char* tail() { return data_ + size_; }
  void Extend(size_t n) { size_ += n; }
  // Frees the block.
  void Release();

  static constexpr size_t kMapBytes = 256 * 1024;

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool mapped_ = false;
};

}  // namespace internal

class Spool final : public ByteSink {
 public:
  explicit Spool(SpoolOptions options = {});
  ~Spool() override;
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // When no spill file can be created ($TMPDIR, /tmp, memfd) or the disk fills, the spool
  // keeps (or takes back) its content in memory and goes on there (issue 15): resource
  // failures degrade instead of failing the stream. Errors: kIoError only when a spilled
  // spool can be neither written nor read back.
  Status Write(std::string_view data) override;

  // Lets the spool hold up to `limit` bytes in memory before it spills (no effect once it
  // has spilled or when `limit` is lower): for an input that will be loaded whole anyway.
  void RaiseMemoryLimit(size_t limit);
  // Reads up to `max` bytes of `in` straight into the in-memory content, with no buffer in
  // between, when the spool is in memory and `max` more bytes fit under its memory limit.
  // Returns the bytes read (empty at the end of `in`; valid until the next write), or nullopt
  // when the caller must read into its own buffer and Write instead (spilled, over the limit,
  // or no memory to grow into: the limit then drops to the current size, as in Write).
  // Errors: those of `in`.
  Result<std::optional<std::string_view>> ReadFrom(ByteSource& in, size_t max);
  // Bytes after the end of memory_view() that belong to the buffer and may be read (values
  // unspecified). REQUIRES: in_memory().
  size_t memory_padding() const { return mem_.capacity() - mem_.size(); }

  uint64_t size() const { return size_; }
  bool in_memory() const { return fd_ < 0; }
  // REQUIRES: in_memory(). Valid until the next Write/Clear.
  std::string_view memory_view() const {
    CAVEMAN_DCHECK(in_memory());
    return mem_.view();
  }

  // A reader from byte 0. Lifetime: must not outlive this Spool.
  std::unique_ptr<ByteSource> NewReader() const;
  // Reads [offset, offset+len) (clamped to size). Errors: kIoError.
  Status ReadRange(uint64_t offset, uint64_t len, std::string* out) const;
  // Reads min(cap, size - offset) bytes at `offset` into `buf` (no intermediate copy);
  // returns how many. Errors: kIoError.
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t cap) const;
  Status CopyTo(ByteSink& sink) const;
  // Whole content as a string (memory proportional to size).
  Result<std::string> ReadAllToString() const;
  // Drops the content (closes the spill file); the spool can be reused.
  void Clear();

 private:
  // Whether `more` bytes can go into memory now: not spilled, within the memory limit, and
  // the block grown to take them (geometrically, capped at the limit). When growing fails
  // the limit drops to the current size, so the caller spills.
  bool RoomInMemory(size_t more);

  SpoolOptions options_;
  internal::SpoolMemory mem_;
  int fd_ = -1;
  bool spill_failed_ = false;  // no spill file could be had: stay in memory
  uint64_t size_ = 0;
};

// TEST ONLY (fault injection): true makes every spill file fail to open, as with an
// unwritable TMPDIR and no descriptor left for /tmp or a memfd.
void SetSpoolSpillFailureForTest(bool fail);
// TEST ONLY: true makes every write to an open spill file fail with ENOSPC.
void SetSpoolDiskFullForTest(bool fail);
// TEST ONLY: nonzero makes every growth of a spool's memory that asks for more than `above`
// bytes fail (std::bad_alloc); growth inside a block already mapped (2 MiB steps) still works.
void SetSpoolMemoryFailureForTest(size_t above);

// Re-readable input of a compressor.
class Body {
 public:
  // `data` must outlive the Body.
  static Body FromView(std::string_view data) { return Body(data, nullptr); }
  // `spool` must outlive the Body and not be written while the Body is used.
  static Body FromSpool(const Spool& spool);

  uint64_t size() const { return spool_ ? spool_->size() : view_.size(); }
  // True if View() costs nothing.
  bool contiguous() const { return spool_ == nullptr; }
  std::unique_ptr<ByteSource> NewReader() const;
  // The whole body as one contiguous view; a spilled spool is loaded once and cached.
  // Lifetime: as long as this Body. Errors: kIoError.
  Result<std::string_view> View() const;
  // Bytes after the end of View() that belong to the Body's buffer and may be read (values
  // unspecified). A loaded spool keeps kViewPadding spare bytes, so parsers that read a
  // little past the end (simdjson) need no padded copy; an in-memory spool offers its spare
  // capacity. 0 before View() of a spilled spool and for FromView.
  size_t view_padding() const;
  static constexpr size_t kViewPadding = 64;
  // Appends bytes [offset, offset+len) (clamped to size) to *out without loading the rest.
  // Errors: kIoError.
  Status ReadRange(uint64_t offset, uint64_t len, std::string* out) const;

  // One value a stage derived from these bytes for a later stage, found again by the address
  // of its tag (detection leaves the JSON skeleton of a large text for the json compressor,
  // which would otherwise walk all of it again). One slot: a new value replaces the old.
  // Copies of the Body made afterwards share it. Thread-compatible, like the Body.
  void SetDerived(const void* tag, std::shared_ptr<const void> value) const {
    derived_tag_ = tag;
    derived_ = std::move(value);
  }
  std::shared_ptr<const void> Derived(const void* tag) const { return derived_tag_ == tag ? derived_ : nullptr; }

 private:
  Body(std::string_view v, const Spool* s, size_t padding = 0) : view_(v), spool_(s), padding_(padding) {}
  std::string_view view_;
  const Spool* spool_ = nullptr;
  size_t padding_ = 0;  // readable bytes after view_ (an in-memory spool's spare capacity)
  mutable std::shared_ptr<std::string> loaded_;
  mutable const void* derived_tag_ = nullptr;
  mutable std::shared_ptr<const void> derived_;
};

}  // namespace caveman

#endif  // CAVEMAN_STREAM_SPOOL_H_
