#include "compressors/repetition.h"

#include <array>
#include <vector>

#include "compressors/text_util.h"
#include "stream/chunk_buffer.h"
#include "stream/line_splitter.h"
#include "stream/sha256.h"

namespace caveman {
namespace {

constexpr std::string_view kMarkerPrefix = "\xE2\x80\xA6 caveman: ";  // "… caveman: "

// The line that opened the current run. Short lines are held inline; a long line is held in
// a spool and identified by its length and digest.
class RunLine {
 public:
  void Begin() {
    inline_.clear();
    if (spilled_) spool_.Clear();
    spilled_ = false;
    size_ = 0;
    blank_ = true;
    ws_carry_.clear();
    prefix_.clear();
  }
  Status Append(std::string_view part) {
    // Lines are spilled purely by length, so two lines of equal length are either both
    // inline or both spilled. Only spilled lines are hashed (hashing every line would cost
    // more than the whole transform).
    if (size_ + part.size() <= kRepetitionMaxInlineLine && !spilled_) {
      inline_.append(part);
    } else {
      if (!spilled_) {
        spilled_ = true;
        hash_.Reset();
        hash_.Update(inline_);
        CAVEMAN_RETURN_IF_ERROR(spool_.Write(inline_));
        inline_.clear();
        inline_.shrink_to_fit();
      }
      hash_.Update(part);
      CAVEMAN_RETURN_IF_ERROR(spool_.Write(part));
    }
    if (prefix_.size() < kMarkerPrefix.size()) {
      prefix_.append(part.substr(0, kMarkerPrefix.size() - prefix_.size()));
    }
    size_ += part.size();
    if (blank_) blank_ = AllWhiteSpace(part);
    return Status::OK();
  }
  void Seal() {
    if (spilled_) digest_ = hash_.Final();
  }
  // Byte equality; spilled lines compare by length and SHA-256 (§5.15 allows the digest).
  bool Equals(const RunLine& o) const {
    if (size_ != o.size_) return false;
    if (!spilled() && !o.spilled()) return inline_ == o.inline_;
    return digest_ == o.digest_;
  }
  bool spilled() const { return spilled_; }
  std::string_view inline_bytes() const { return inline_; }
  uint64_t size() const { return size_; }
  const std::array<uint8_t, 32>& digest() const { return digest_; }
  bool blank() const { return blank_ && ws_carry_.empty(); }
  bool is_marker() const { return internal::StartsWith(prefix_, kMarkerPrefix); }
  Status WriteTo(ByteSink& out) const {
    if (!spilled()) return out.Write(inline_);
    return spool_.CopyTo(out);
  }

 private:
  // Tracks "TRIM(line) is empty" across parts; a multi-byte White_Space code point may be
  // split between parts, so incomplete trailing bytes are carried.
  bool AllWhiteSpace(std::string_view part) {
    std::string joined;
    std::string_view buf = part;
    if (!ws_carry_.empty()) {
      joined = ws_carry_ + std::string(part);
      buf = joined;
      ws_carry_.clear();
    }
    size_t i = 0;
    while (i < buf.size()) {
      unsigned char c = static_cast<unsigned char>(buf[i]);
      size_t need = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      if (i + need > buf.size() && c >= 0x80) {
        ws_carry_ = std::string(buf.substr(i));
        return true;
      }
      size_t j = i;
      uint32_t cp = internal::DecodeUtf8(buf, &j);
      if (!internal::IsWhiteSpace(cp)) return false;
      i = j;
    }
    return true;
  }

  std::string inline_;
  Spool spool_{SpoolOptions{.memory_limit = 1 << 20}};
  Sha256 hash_;
  std::array<uint8_t, 32> digest_{};
  uint64_t size_ = 0;
  bool spilled_ = false;
  bool blank_ = true;
  std::string prefix_;
  std::string ws_carry_;
};

// Walks lines as they complete: each line is collected into `cand_`; when it ends it either
// extends the current run (`run_`) or closes it and becomes the new run line.
class RepetitionState {
 public:
  explicit RepetitionState(ByteSink& out) : out_(out) {}

  // One part of a line; see LineSplitter::PushFragments.
  Status OnPart(std::string_view part, bool first, bool last) {
    if (first) cand_->Begin();
    CAVEMAN_RETURN_IF_ERROR(cand_->Append(part));
    if (!last) return Status::OK();
    cand_->Seal();
    if (started_ && cand_->Equals(*run_)) {
      ++run_len_;
      return Status::OK();
    }
    CAVEMAN_RETURN_IF_ERROR(CloseRun());
    std::swap(cand_, run_);
    if (started_) CAVEMAN_RETURN_IF_ERROR(Emit("\n"));
    started_ = true;
    run_len_ = 1;
    return EmitRunLine();
  }

  Status Finish() { return CloseRun(); }
  bool collapsed() const { return collapsed_; }
  uint64_t bytes_out() const { return bytes_out_; }

 private:
  Status Emit(std::string_view s) {
    bytes_out_ += s.size();
    return out_.Write(s);
  }
  Status EmitRunLine() {
    bytes_out_ += run_->size();
    return run_->WriteTo(out_);
  }

  Status CloseRun() {
    if (!started_ || run_len_ <= 1) return Status::OK();
    if (run_len_ >= kRepetitionMinRun && !run_->blank() && !run_->is_marker()) {
      collapsed_ = true;
      std::string marker = "\n";
      marker += kMarkerPrefix;
      marker += std::to_string(run_len_ - 1);
      marker += " identical lines elided \xE2\x80\xA6";
      CAVEMAN_RETURN_IF_ERROR(Emit(marker));
    } else {
      for (uint64_t k = 1; k < run_len_; ++k) {
        CAVEMAN_RETURN_IF_ERROR(Emit("\n"));
        CAVEMAN_RETURN_IF_ERROR(EmitRunLine());
      }
    }
    run_len_ = 1;
    return Status::OK();
  }

  ByteSink& out_;
  std::unique_ptr<RunLine> run_ = std::make_unique<RunLine>();
  std::unique_ptr<RunLine> cand_ = std::make_unique<RunLine>();
  bool started_ = false;  // at least one line written
  uint64_t run_len_ = 0;
  bool collapsed_ = false;
  uint64_t bytes_out_ = 0;
};

class RepetitionCompressor final : public Compressor {
 public:
  std::string_view content_type() const override { return "repetition"; }

  Result<TransformOutcome> Transform(const Body& body, std::string_view, ByteSink& out, TransformMeta*) const override {
    if (body.size() < kRepetitionMinBytes) return TransformOutcome::kDeclined;
    auto reader = body.NewReader();
    RepetitionState state(out);
    internal::Utf8Validator utf8;
    LineSplitter splitter;
    Status status;
    auto on_part = [&](std::string_view part, bool first, bool last, bool) {
      if (status.ok()) status = state.OnPart(part, first, last);
    };
    ChunkBuffer buf;
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(size_t n, reader->Read(buf.data(), buf.size()));
      if (n == 0) break;
      std::string_view chunk(buf.data(), n);
      utf8.Feed(chunk);
      if (!utf8.valid_so_far()) return TransformOutcome::kDeclined;
      splitter.PushFragments(chunk, kRepetitionMaxInlineLine, on_part);
      CAVEMAN_RETURN_IF_ERROR(status);
    }
    if (!utf8.Finish()) return TransformOutcome::kDeclined;
    splitter.FinishFragments(on_part);
    CAVEMAN_RETURN_IF_ERROR(status);
    CAVEMAN_RETURN_IF_ERROR(state.Finish());
    if (!state.collapsed() || state.bytes_out() >= body.size()) return TransformOutcome::kDeclined;
    return TransformOutcome::kAccepted;
  }
};

}  // namespace

std::unique_ptr<Compressor> NewRepetitionCompressor() { return std::make_unique<RepetitionCompressor>(); }

}  // namespace caveman
