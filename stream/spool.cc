#include "stream/spool.h"

#include "stream/huge_pages.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace caveman {
namespace {

Result<int> OpenAnonymousTempFile(const std::string& dir_opt) {
  std::string dir = dir_opt;
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = (t != nullptr && *t != '\0') ? t : "/tmp";
  }
  std::string tmpl = dir + "/caveman-spool-XXXXXX";
  std::vector<char> path(tmpl.begin(), tmpl.end());
  path.push_back('\0');
  int fd = ::mkostemp(path.data(), O_CLOEXEC);  // mode 0600
  if (fd < 0) return Status::IoError("create spool file in " + dir + ": " + std::strerror(errno));
  ::unlink(path.data());
  ::fchmod(fd, 0600);
  return fd;
}

// TEST ONLY (fault injection): when set, every spill file fails to open / every write to a
// spill file fails with ENOSPC.
std::atomic<bool> g_fail_spill_open{false};
std::atomic<bool> g_fail_spill_write{false};
std::atomic<size_t> g_fail_memory_above{0};  // 0: off

// The configured directory ($TMPDIR, else /tmp), then /tmp, then an anonymous memfd.
Result<int> OpenSpillFile(const std::string& dir_opt) {
  if (g_fail_spill_open.load(std::memory_order_relaxed)) {
    return Status::IoError("create spool file: injected failure");
  }
  Result<int> fd = OpenAnonymousTempFile(dir_opt);
  if (fd.ok()) return fd;
  if (!dir_opt.empty() || std::getenv("TMPDIR") != nullptr) {
    Result<int> tmp = OpenAnonymousTempFile("/tmp");
    if (tmp.ok()) return tmp;
  }
  const int mfd = ::memfd_create("caveman-spool", MFD_CLOEXEC);
  if (mfd >= 0) return mfd;
  return fd.status();
}

Status WriteFully(int fd, std::string_view data) {
  if (g_fail_spill_write.load(std::memory_order_relaxed) && !data.empty()) {
    return Status::IoError(std::string("write spool: ") + std::strerror(ENOSPC));
  }
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(std::string("write spool: ") + std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

class SpoolReader final : public ByteSource {
 public:
  explicit SpoolReader(const Spool& s) : spool_(s) {}
  Result<size_t> Read(char* buf, size_t cap) override {
    CAVEMAN_ASSIGN_OR_RETURN(size_t n, spool_.ReadAt(pos_, buf, cap));
    pos_ += n;
    return n;
  }

 private:
  const Spool& spool_;
  uint64_t pos_ = 0;
};

// Full pread of [offset, offset + len) into dst. Errors: kIoError (also for a short file).
Status PreadFully(int fd, uint64_t offset, char* dst, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, dst + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(std::string("read spool: ") + (n < 0 ? std::strerror(errno) : "short read"));
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

}  // namespace

namespace internal {

void SpoolMemory::Reserve(size_t n) {
  if (n <= capacity_) return;
  const size_t fail_above = g_fail_memory_above.load(std::memory_order_relaxed);
  if (fail_above != 0 && n > fail_above) throw std::bad_alloc();
  n += Body::kViewPadding;  // spare bytes a parser may read past the end (Body::view_padding)
  if (n < kMapBytes) {
    char* p = static_cast<char*>(std::realloc(data_, n));
    if (p == nullptr) throw std::bad_alloc();
    data_ = p;
    capacity_ = n;
    return;
  }
  // A mapped block starts on a 2 MiB boundary, ends on one and is advised for huge pages from
  // its first byte, so each of its 2 MiB stretches is one huge page where THP allows: filling 2
  // MiB of fresh 4 KiB pages costs 5–6 ms on this VM against ≈ 0.2 ms for one huge page, and
  // even 256 KiB 0.6–0.9 against 0.1–0.2 ms (scripts/page_sources.c, modes 0 and 3). Pages
  // touched before the advice would stay 4 KiB pages for good (an unaligned or late-advised
  // mapping left its first stretches, and after a move every one, in 4 KiB pages). RSS rounds
  // up to 2 MiB per mapped block.
  const size_t want = RoundUpToHugePages(n);
  void* p;
  if (mapped_) {
    p = ::mremap(data_, capacity_, want, 0);  // in place, when the addresses after it are free
    if (p == MAP_FAILED) {
      void* dest = MapHugeAligned(want);
      if (dest != MAP_FAILED) {
        p = ::mremap(data_, capacity_, want, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
        // (A failed MREMAP_FIXED may already have unmapped `dest`; another thread's mapping
        // could land there before this munmap. The kernel fails it only on limits such as
        // the mapping count, where the process is failing anyway; kept as it was.)
        if (p == MAP_FAILED) ::munmap(dest, want);
      }
    }
    if (p == MAP_FAILED) p = ::mremap(data_, capacity_, want, MREMAP_MAYMOVE);
  } else {
    p = MapHugePages(want);  // advised before the copy touches it
    if (p != MAP_FAILED && size_ > 0) std::memcpy(p, data_, size_);
  }
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (!mapped_) std::free(data_);
  data_ = static_cast<char*>(p);
  capacity_ = want;
  mapped_ = true;
  // The whole mapping, so it stays one VMA (mremap cannot grow a range split in several).
  (void)::madvise(data_, capacity_, MADV_HUGEPAGE);
}

void SpoolMemory::Append(std::string_view d) {
  if (d.empty()) return;
  if (size_ + d.size() > capacity_) Reserve(std::max(size_ + d.size(), 2 * capacity_));
  std::memcpy(data_ + size_, d.data(), d.size());
  size_ += d.size();
}

void SpoolMemory::Release() {
  if (mapped_) {
    ::munmap(data_, capacity_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = capacity_ = 0;
  mapped_ = false;
}

}  // namespace internal

void SetSpoolSpillFailureForTest(bool fail) { g_fail_spill_open.store(fail); }
void SetSpoolDiskFullForTest(bool fail) { g_fail_spill_write.store(fail); }
void SetSpoolMemoryFailureForTest(size_t above) { g_fail_memory_above.store(above); }

Spool::Spool(SpoolOptions options) : options_(std::move(options)) {}

Spool::~Spool() { Clear(); }

void Spool::Clear() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  spill_failed_ = false;
  mem_.Release();
  size_ = 0;
}

bool Spool::RoomInMemory(size_t more) {
  if (fd_ >= 0 || mem_.size() + more > options_.memory_limit) return false;
  // Grow geometrically but never asking past the limit: a spool holds at most memory_limit
  // bytes in memory, and its block is at most that rounded up to whole 2 MiB huge pages (a
  // 1 MiB limit can cost 2 MiB of RSS once the block is mapped).
  const size_t need = mem_.size() + more;
  if (need <= mem_.capacity()) return true;
  try {
    mem_.Reserve(std::min(options_.memory_limit, std::max(need, 2 * mem_.capacity())));
  } catch (const std::bad_alloc&) {
    options_.memory_limit = mem_.size();  // no memory to grow into: spill now, as past the limit (issue 15)
    return false;
  }
  return true;
}

Status Spool::Write(std::string_view data) {
  if (data.empty()) return Status::OK();
  if (RoomInMemory(data.size())) {
    mem_.Append(data);
    size_ += data.size();
    return Status::OK();
  }
  if (fd_ < 0 && !spill_failed_) {
    // Issue 15: a spill file that cannot be had (TMPDIR unwritable, missing or a file; no
    // descriptor left) is not fatal: /tmp, then an anonymous memfd, then memory.
    Result<int> fd = OpenSpillFile(options_.temp_dir);
    if (fd.ok()) {
      Status s = WriteFully(*fd, mem_.view());
      if (s.ok()) {
        fd_ = *fd;
        mem_.Release();
      } else {
        ::close(*fd);
        spill_failed_ = true;
      }
    } else {
      spill_failed_ = true;
    }
  }
  if (fd_ < 0) {  // spilling failed: the spool grows in memory
    mem_.Append(data);
    size_ += data.size();
    return Status::OK();
  }
  Status s = WriteFully(fd_, data);
  if (!s.ok()) {
    // Disk full (ENOSPC) mid-spool: take the content back into memory and go on there.
    std::string back;
    Status r = ReadRange(0, size_, &back);
    if (!r.ok() || back.size() != size_) return s;
    ::close(fd_);
    fd_ = -1;
    spill_failed_ = true;
    mem_.Release();
    mem_.Reserve(back.size() + data.size());
    mem_.Append(back);
    mem_.Append(data);
  }
  size_ += data.size();
  return Status::OK();
}

Result<std::optional<std::string_view>> Spool::ReadFrom(ByteSource& in, size_t max) {
  using Direct = std::optional<std::string_view>;
  if (max == 0 || !RoomInMemory(max)) return Direct();
  char* at = mem_.tail();
  CAVEMAN_ASSIGN_OR_RETURN(size_t n, in.Read(at, max));
  mem_.Extend(n);
  size_ += n;
  return Direct(std::string_view(at, n));
}

void Spool::RaiseMemoryLimit(size_t limit) {
  if (fd_ < 0 && !spill_failed_ && limit > options_.memory_limit) options_.memory_limit = limit;
}

Status Spool::ReadRange(uint64_t offset, uint64_t len, std::string* out) const {
  if (offset >= size_) return Status::OK();
  len = std::min(len, size_ - offset);
  if (fd_ < 0) {
    out->append(mem_.view().substr(offset, len));
    return Status::OK();
  }
  const size_t base = out->size();
  out->resize(base + len);
  Status s = PreadFully(fd_, offset, out->data() + base, len);
  if (!s.ok()) out->resize(base);
  return s;
}

Result<size_t> Spool::ReadAt(uint64_t offset, char* buf, size_t cap) const {
  if (offset >= size_) return size_t{0};
  const size_t n = static_cast<size_t>(std::min<uint64_t>(cap, size_ - offset));
  if (fd_ < 0) {
    std::memcpy(buf, mem_.view().data() + offset, n);
    return n;
  }
  CAVEMAN_RETURN_IF_ERROR(PreadFully(fd_, offset, buf, n));
  return n;
}

std::unique_ptr<ByteSource> Spool::NewReader() const { return std::make_unique<SpoolReader>(*this); }

Status Spool::CopyTo(ByteSink& sink) const {
  if (fd_ < 0) return sink.Write(mem_.view());
  auto r = NewReader();
  return CopyStream(*r, sink);
}

Result<std::string> Spool::ReadAllToString() const {
  std::string out;
  out.reserve(size_);
  CAVEMAN_RETURN_IF_ERROR(ReadRange(0, size_, &out));
  return out;
}

Body Body::FromSpool(const Spool& spool) {
  if (spool.in_memory()) return Body(spool.memory_view(), nullptr, spool.memory_padding());
  return Body({}, &spool);
}

std::unique_ptr<ByteSource> Body::NewReader() const {
  if (spool_ == nullptr) return NewStringSource(view_);
  if (loaded_) return NewStringSource(*loaded_);
  return spool_->NewReader();
}

Status Body::ReadRange(uint64_t offset, uint64_t len, std::string* out) const {
  if (spool_ == nullptr || loaded_) {
    std::string_view all = spool_ == nullptr ? view_ : std::string_view(*loaded_);
    if (offset < all.size()) out->append(all.substr(offset, len));
    return Status::OK();
  }
  return spool_->ReadRange(offset, len, out);
}

Result<std::string_view> Body::View() const {
  if (spool_ == nullptr) return view_;
  if (!loaded_) {
    auto all = std::make_shared<std::string>();
    all->reserve(spool_->size() + kViewPadding);
    CAVEMAN_RETURN_IF_ERROR(spool_->ReadRange(0, spool_->size(), all.get()));
    loaded_ = std::move(all);
  }
  return std::string_view(*loaded_);
}

size_t Body::view_padding() const { return loaded_ ? loaded_->capacity() - loaded_->size() : padding_; }

}  // namespace caveman
