// One zstd frame, written and read with the raw streaming API: the only file of the store that
// touches zstd (one translation point per dependency, STYLE §8).
//
// Why not Boost's zstd filter: it starts frames without a content checksum and stops reading
// when input runs out without checking that the frame ended, so a truncated record would read
// back silently short. Here the encoder sets ZSTD_c_checksumFlag and loops ZSTD_e_end until it
// returns 0; the decoder refuses a frame without a checksum, bytes after the frame, and a frame
// that has not ended when input ends.
//
// Thread-safety: none; one encoder/decoder per record.
#ifndef CAVEMAN_STORE_INTERNAL_ZSTD_FRAME_H_
#define CAVEMAN_STORE_INTERNAL_ZSTD_FRAME_H_

#include <memory>
#include <string>
#include <string_view>

#include "stream/chunk_buffer.h"
#include "caveman/stream/byte_io.h"
#include "caveman/stream/status.h"

struct ZSTD_CCtx_s;
struct ZSTD_inBuffer_s;
struct ZSTD_DCtx_s;

namespace caveman::internal {

inline constexpr int kMinZstdLevel = 1;
inline constexpr int kMaxZstdLevel = 19;

class FrameEncoder {
 public:
  // REQUIRES: kMinZstdLevel <= level <= kMaxZstdLevel. Errors: kInvalidArgument, kInternal.
  static Result<std::unique_ptr<FrameEncoder>> New(int level);
  ~FrameEncoder();
  FrameEncoder(const FrameEncoder&) = delete;
  FrameEncoder& operator=(const FrameEncoder&) = delete;

  // Compresses `data` (ZSTD_e_continue); compressed bytes go to `out` as they are produced,
  // except that the first kDeferBytes of a frame are held until more arrive, Flush or Finish
  // (so a small record is compressed in one pass of known size).
  // Errors: kInternal (zstd), or whatever `out` returns; afterwards the encoder is poisoned.
  Status Write(std::string_view data, ByteSink& out);
  // Write of the last bytes of the frame, which stay valid and unchanged until Finish. When
  // they are the whole frame (nothing written before), zstd reads them in place
  // (ZSTD_c_stableInBuffer) and ends the frame here: no copy into its window, and matches are
  // sought in one contiguous buffer instead of a ring (issue 19: `store_bench` storing the
  // 64 MiB JSON dump, 242 → 217 ms CPU). Otherwise the same as Write. Finish still follows.
  Status WriteLast(std::string_view data, ByteSink& out);
  // Flushes everything written so far (ZSTD_e_flush): the bytes given to `out` up to now
  // decode to exactly the data written, although the frame has not ended.
  Status Flush(ByteSink& out);
  // Ends the frame (epilogue and checksum). REQUIRES: not yet finished.
  Status Finish(ByteSink& out);

 private:
  FrameEncoder() = default;
  Status Drain(bool end, ByteSink& out);
  Status Compress(std::string_view data, ByteSink& out);
  // ZSTD_compressStream2 with directive `op` (a ZSTD_EndDirective) until `in` is taken and,
  // for flush and end, nothing is left to flush; output goes to `out`.
  Status Pump(ZSTD_inBuffer_s* in, int op, const char* what, ByteSink& out);
  static constexpr size_t kDeferBytes = 128 << 10;  // one zstd block
  ZSTD_CCtx_s* cctx_ = nullptr;
  ChunkBuffer buf_{0};   // output buffer, left uninitialised (sized by New)
  std::string pending_;  // written before the first compress call (see Write)
  bool started_ = false;
  bool poisoned_ = false;
  bool finished_ = false;
  bool ended_ = false;  // WriteLast ended the frame; Finish has nothing left to do
};

class FrameDecoder {
 public:
  static Result<std::unique_ptr<FrameDecoder>> New();
  ~FrameDecoder();
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;

  // Feeds compressed bytes in any piece sizes; decompressed bytes go to `out`.
  // Errors: kCorruption (zstd error, checksum mismatch, frame without checksum, skippable
  // frame, bytes after the end of the frame), or whatever `out` returns.
  Status Write(std::string_view data, ByteSink& out);
  // Errors: kCorruption unless exactly one complete frame was fed.
  Status Finish();
  // For partial records: the frame need not have ended (a flushed prefix of one frame);
  // everything fed must have been decoded. Errors: kCorruption.
  Status FinishPrefix();

 private:
  FrameDecoder() = default;
  Status CheckHeader(std::string_view data);
  ZSTD_DCtx_s* dctx_ = nullptr;
  ChunkBuffer buf_{0};  // output buffer, left uninitialised (sized by New)
  std::string header_;  // first bytes of the frame until the header has been checked
  bool header_checked_ = false;
  bool frame_done_ = false;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_ZSTD_FRAME_H_
