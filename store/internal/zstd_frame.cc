#include "store/internal/zstd_frame.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader / ZSTD_frameHeader
#include <zstd.h>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "stream/check.h"
#include "stream/huge_pages.h"

namespace caveman::internal {
namespace {

// Every decoding failure reads the same to users (§6.3); the zstd detail is not kept because
// the message is part of the CLI surface.
Status CorruptFrame() { return Status::Corruption("ccr: corrupt recovery record"); }

Status ZstdInternal(const char* what, size_t code) {
  return Status::Internal(std::string("zstd ") + what + ": " + ZSTD_getErrorName(code));
}

// zstd's allocations, with the large ones in transparent huge pages (issue 19): a level-3
// context for a large record allocates a workspace of ≈ 3 MiB (window and match tables) that
// it fills, which in fresh 4 KiB pages took ≈ 550 page faults of the 64 MiB CI log's run, at
// 5–10 µs each on this VM (docs/PERFORMANCE.md, "Pattern databases used in place"). A 4 KiB
// record's context stays under kHugeFrom and comes from malloc as before; from some tens of
// KiB on a record's tables pass it and take a 2 MiB mapping (RSS rounds up to 2 MiB). Every
// block has a header of kHeader bytes (malloc's alignment kept, 64 on mappings) holding the
// length of its mapping, or 0 for malloc. The sanitizer builds keep zstd's own allocator, so
// LeakSanitizer still sees its blocks.
constexpr size_t kHugeFrom = 256 << 10;
constexpr size_t kHeader = 64;

[[maybe_unused]] void* ZstdAlloc(void*, size_t size) {
  size_t mapped = 0;
  char* base;
  if (size >= kHugeFrom) {
    mapped = RoundUpToHugePages(size + kHeader);
    void* p = MapHugePages(mapped);
    if (p == MAP_FAILED) return nullptr;
    base = static_cast<char*>(p);
  } else {
    base = static_cast<char*>(std::malloc(size + kHeader));
    if (base == nullptr) return nullptr;
  }
  std::memcpy(base, &mapped, sizeof mapped);
  return base + kHeader;
}

[[maybe_unused]] void ZstdFree(void*, void* address) {
  if (address == nullptr) return;
  char* base = static_cast<char*>(address) - kHeader;
  size_t mapped;
  std::memcpy(&mapped, base, sizeof mapped);
  if (mapped != 0) {
    ::munmap(base, mapped);
  } else {
    std::free(base);
  }
}

#if defined(__SANITIZE_ADDRESS__)
#define CAVEMAN_ZSTD_OWN_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAVEMAN_ZSTD_OWN_MEMORY 1
#endif
#endif
#ifdef CAVEMAN_ZSTD_OWN_MEMORY
constexpr ZSTD_customMem kZstdMemory = {nullptr, nullptr, nullptr};  // zstd's own (malloc)
#else
constexpr ZSTD_customMem kZstdMemory = {ZstdAlloc, ZstdFree, nullptr};
#endif

}  // namespace

Result<std::unique_ptr<FrameEncoder>> FrameEncoder::New(int level) {
  if (level < kMinZstdLevel || level > kMaxZstdLevel) {
    return Status::InvalidArgument("zstd level must be an integer from 1 to 19");
  }
  std::unique_ptr<FrameEncoder> enc(new FrameEncoder());
  enc->cctx_ = ZSTD_createCCtx_advanced(kZstdMemory);
  if (enc->cctx_ == nullptr) return Status::Internal("zstd: cannot allocate a compression context");
  size_t r = ZSTD_CCtx_setParameter(enc->cctx_, ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(r)) return ZstdInternal("set level", r);
  r = ZSTD_CCtx_setParameter(enc->cctx_, ZSTD_c_checksumFlag, 1);
  if (ZSTD_isError(r)) return ZstdInternal("set checksum flag", r);
  enc->buf_ = ChunkBuffer(ZSTD_CStreamOutSize());  // 128 KiB: not zero-filled for every record
  return enc;
}

FrameEncoder::~FrameEncoder() { ZSTD_freeCCtx(cctx_); }

Status FrameEncoder::Write(std::string_view data, ByteSink& out) {
  if (poisoned_ || finished_ || ended_) return Status::Internal("zstd encoder used after an error or Finish");
  if (!started_) {
    // Small records are held back so Finish can hand zstd the whole input at once: zstd then
    // knows the size and sizes its tables for it (a few KiB instead of ~1 MiB to clear for
    // every 4 KiB record; issue 19). The bytes of the frame are a valid frame either way.
    if (pending_.size() + data.size() <= kDeferBytes) {
      pending_.append(data);
      return Status::OK();
    }
    started_ = true;
    if (!pending_.empty()) {
      CAVEMAN_RETURN_IF_ERROR(Compress(pending_, out));
      std::string().swap(pending_);
    }
  }
  return Compress(data, out);
}

Status FrameEncoder::WriteLast(std::string_view data, ByteSink& out) {
  if (poisoned_ || finished_ || ended_) return Status::Internal("zstd encoder used after an error or Finish");
  if (started_ || !pending_.empty() || data.size() <= kDeferBytes) return Write(data, out);
  size_t r = ZSTD_CCtx_setParameter(cctx_, ZSTD_c_stableInBuffer, 1);
  if (!ZSTD_isError(r)) {
    r = ZSTD_CCtx_setPledgedSrcSize(cctx_, data.size());
    if (ZSTD_isError(r)) (void)ZSTD_CCtx_setParameter(cctx_, ZSTD_c_stableInBuffer, 0);
  }
  // An experimental parameter: a libzstd without it streams the bytes as Write does.
  if (ZSTD_isError(r)) return Write(data, out);
  started_ = true;
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  CAVEMAN_RETURN_IF_ERROR(Pump(&in, ZSTD_e_end, "compress", out));
  ended_ = true;
  return Status::OK();
}

Status FrameEncoder::Compress(std::string_view data, ByteSink& out) {
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  return Pump(&in, ZSTD_e_continue, "compress", out);
}

Status FrameEncoder::Pump(ZSTD_inBuffer_s* in, int op, const char* what, ByteSink& out) {
  // ZSTD_e_end / ZSTD_e_flush return the bytes still to flush: done at 0 with all input taken;
  // ZSTD_e_continue is done once all input is taken.
  size_t remaining = 0;
  do {
    ZSTD_outBuffer o{buf_.data(), buf_.size(), 0};
    remaining = ZSTD_compressStream2(cctx_, &o, in, static_cast<ZSTD_EndDirective>(op));
    if (ZSTD_isError(remaining)) {
      poisoned_ = true;
      return ZstdInternal(what, remaining);
    }
    if (o.pos > 0) {
      Status s = out.Write(std::string_view(buf_.data(), o.pos));
      if (!s.ok()) {
        poisoned_ = true;
        return s;
      }
    }
  } while ((op != ZSTD_e_continue && remaining != 0) || in->pos < in->size);
  return Status::OK();
}

Status FrameEncoder::Flush(ByteSink& out) { return Drain(/*end=*/false, out); }

Status FrameEncoder::Finish(ByteSink& out) {
  CAVEMAN_DCHECK(!finished_);
  if (!ended_) CAVEMAN_RETURN_IF_ERROR(Drain(/*end=*/true, out));
  finished_ = true;
  return Status::OK();
}

Status FrameEncoder::Drain(bool end, ByteSink& out) {
  if (poisoned_ || finished_ || ended_) return Status::Internal("zstd encoder used after an error or Finish");
  // The held-back bytes go in with this call (ZSTD_e_end on the first call = a single pass
  // of known size).
  ZSTD_inBuffer in{pending_.data(), pending_.size(), 0};
  started_ = true;
  CAVEMAN_RETURN_IF_ERROR(Pump(&in, end ? ZSTD_e_end : ZSTD_e_flush, end ? "end frame" : "flush", out));
  std::string().swap(pending_);
  return Status::OK();
}

Result<std::unique_ptr<FrameDecoder>> FrameDecoder::New() {
  std::unique_ptr<FrameDecoder> dec(new FrameDecoder());
  dec->dctx_ = ZSTD_createDCtx_advanced(kZstdMemory);
  if (dec->dctx_ == nullptr) return Status::Internal("zstd: cannot allocate a decompression context");
  dec->buf_ = ChunkBuffer(ZSTD_DStreamOutSize());
  return dec;
}

FrameDecoder::~FrameDecoder() { ZSTD_freeDCtx(dctx_); }

// zstd verifies the content checksum only when the frame carries one, so a record whose
// header lost the flag would skip verification silently; every record we write has it.
Status FrameDecoder::CheckHeader(std::string_view data) {
  size_t want = ZSTD_FRAMEHEADERSIZE_MAX - header_.size();
  header_.append(data.substr(0, want));
  ZSTD_frameHeader zfh;
  size_t r = ZSTD_getFrameHeader(&zfh, header_.data(), header_.size());
  if (ZSTD_isError(r)) return CorruptFrame();
  if (r > 0) {
    // More header bytes needed; a full-size prefix that still needs more is corrupt.
    if (header_.size() >= ZSTD_FRAMEHEADERSIZE_MAX) return CorruptFrame();
    return Status::OK();
  }
  if (zfh.frameType != ZSTD_frame || zfh.checksumFlag != 1) return CorruptFrame();
  header_checked_ = true;
  header_.clear();
  return Status::OK();
}

Status FrameDecoder::Write(std::string_view data, ByteSink& out) {
  if (data.empty()) return Status::OK();
  if (!header_checked_) CAVEMAN_RETURN_IF_ERROR(CheckHeader(data));
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  for (;;) {
    if (frame_done_) {
      // Trailing bytes would start a second frame (or be garbage): not our format.
      if (in.pos < in.size) return CorruptFrame();
      return Status::OK();
    }
    ZSTD_outBuffer o{buf_.data(), buf_.size(), 0};
    size_t r = ZSTD_decompressStream(dctx_, &o, &in);
    if (ZSTD_isError(r)) return CorruptFrame();  // includes checksum mismatch
    if (o.pos > 0) CAVEMAN_RETURN_IF_ERROR(out.Write(std::string_view(buf_.data(), o.pos)));
    if (r == 0) {
      frame_done_ = true;  // decoded, checksum verified and fully flushed
      continue;
    }
    // A full output buffer may hide more pending output even when input is consumed.
    if (in.pos == in.size && o.pos < o.size) return Status::OK();
  }
}

Status FrameDecoder::FinishPrefix() {
  // Write() returns only once all input is consumed and no output is pending.
  if (!header_checked_ && !header_.empty()) return CorruptFrame();
  return Status::OK();
}

Status FrameDecoder::Finish() {
  if (!header_checked_ || !frame_done_) return CorruptFrame();
  return Status::OK();
}

}  // namespace caveman::internal
