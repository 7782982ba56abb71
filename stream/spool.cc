#include "stream/spool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
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
    if (spool_.in_memory()) {
      std::string_view m = spool_.memory_view();
      size_t n = std::min<uint64_t>(cap, m.size() - pos_);
      std::memcpy(buf, m.data() + pos_, n);
      pos_ += n;
      return n;
    }
    tmp_.clear();
    CAVEMAN_RETURN_IF_ERROR(spool_.ReadRange(pos_, cap, &tmp_));
    std::memcpy(buf, tmp_.data(), tmp_.size());
    pos_ += tmp_.size();
    return tmp_.size();
  }

 private:
  const Spool& spool_;
  uint64_t pos_ = 0;
  std::string tmp_;
};

}  // namespace

void SetSpoolSpillFailureForTest(bool fail) { g_fail_spill_open.store(fail); }
void SetSpoolDiskFullForTest(bool fail) { g_fail_spill_write.store(fail); }

Spool::Spool(SpoolOptions options) : options_(std::move(options)) {}

Spool::~Spool() { Clear(); }

void Spool::Clear() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  spill_failed_ = false;
  mem_.clear();
  mem_.shrink_to_fit();
  size_ = 0;
}

Status Spool::Write(std::string_view data) {
  if (data.empty()) return Status::OK();
  if (fd_ < 0 && mem_.size() + data.size() <= options_.memory_limit) {
    // Grow geometrically but never past the limit, so a spool costs at most memory_limit.
    size_t need = mem_.size() + data.size();
    if (need > mem_.capacity()) {
      mem_.reserve(std::min(options_.memory_limit, std::max(need, 2 * mem_.capacity())));
    }
    mem_.append(data);
    size_ += data.size();
    return Status::OK();
  }
  if (fd_ < 0 && !spill_failed_) {
    // Issue 15: a spill file that cannot be had (TMPDIR unwritable, missing or a file; no
    // descriptor left) is not fatal: /tmp, then an anonymous memfd, then memory.
    Result<int> fd = OpenSpillFile(options_.temp_dir);
    if (fd.ok()) {
      Status s = WriteFully(*fd, mem_);
      if (s.ok()) {
        fd_ = *fd;
        mem_.clear();
        mem_.shrink_to_fit();
      } else {
        ::close(*fd);
        spill_failed_ = true;
      }
    } else {
      spill_failed_ = true;
    }
  }
  if (fd_ < 0) {  // spilling failed: the spool grows in memory
    mem_.append(data);
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
    mem_ = std::move(back);
    mem_.append(data);
  }
  size_ += data.size();
  return Status::OK();
}

Status Spool::ReadRange(uint64_t offset, uint64_t len, std::string* out) const {
  if (offset >= size_) return Status::OK();
  len = std::min(len, size_ - offset);
  if (fd_ < 0) {
    out->append(mem_.data() + offset, len);
    return Status::OK();
  }
  size_t base = out->size();
  out->resize(base + len);
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd_, out->data() + base + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      out->resize(base + done);
      return Status::IoError(std::string("read spool: ") + (n < 0 ? std::strerror(errno) : "short read"));
    }
    done += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

std::unique_ptr<ByteSource> Spool::NewReader() const { return std::make_unique<SpoolReader>(*this); }

Status Spool::CopyTo(ByteSink& sink) const {
  if (fd_ < 0) return sink.Write(mem_);
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
  if (spool.in_memory()) return Body(spool.memory_view(), nullptr);
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

size_t Body::view_padding() const { return loaded_ ? loaded_->capacity() - loaded_->size() : 0; }

}  // namespace caveman
