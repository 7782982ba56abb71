// Code point classes used by the o200k_base pre-tokenizer (§7.2): a two-level table built
// from ICU's Unicode data at build time (o200k_tables_gen) and embedded in the library.
//
// Thread-safety: Get() initialises on first use (function-local static); the table is
// immutable afterwards.
#ifndef CAVEMAN_STREAM_INTERNAL_O200K_CLASSES_H_
#define CAVEMAN_STREAM_INTERNAL_O200K_CLASSES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stream/check.h"

namespace caveman::internal {

// Bits of a class byte. The two letter groups are the pattern's character classes
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}].
inline constexpr uint8_t kClsUpperGroup = 1 << 0;  // Lu Lt Lm Lo M
inline constexpr uint8_t kClsLowerGroup = 1 << 1;  // Ll Lm Lo M
inline constexpr uint8_t kClsLetter = 1 << 2;      // \p{L}
inline constexpr uint8_t kClsNumber = 1 << 3;      // \p{N}
inline constexpr uint8_t kClsSpace = 1 << 4;       // \s = White_Space
inline constexpr uint8_t kClsCrLf = 1 << 5;        // CR or LF
inline constexpr uint8_t kClsSlash = 1 << 6;       // '/'

class CodePointClasses {
 public:
  // The process's tables: the ones embedded at build time (stream/o200k_embedded.cc; the
  // table generator defines its own, built with Build()).
  static const CodePointClasses& Get();
  // Builds the tables from ICU's Unicode data (build time, and tests comparing with Get()).
  static CodePointClasses Build();
  // Tables in place: index has kBlocks entries, each < leaf_bytes / 256; both must outlive
  // this object.
  CodePointClasses(const uint16_t* index, const uint8_t* leaves, size_t leaf_bytes);

  static constexpr size_t kBlocks = 0x110000 >> 8;

  // REQUIRES: cp <= 0x10FFFF.
  __attribute__((always_inline)) uint8_t Of(uint32_t cp) const {
    CAVEMAN_DCHECK(cp <= 0x10FFFF);
    return leaves_[(static_cast<uint32_t>(index_[cp >> kLeafBits]) << kLeafBits) | (cp & kLeafMask)];
  }
  const uint8_t* ascii() const { return leaves_; }  // classes of U+0000..U+007F

  const uint16_t* index() const { return index_; }
  const uint8_t* leaves() const { return leaves_; }
  size_t leaf_bytes() const { return leaf_bytes_; }

  CodePointClasses(CodePointClasses&& other) noexcept = default;
  CodePointClasses& operator=(CodePointClasses&&) = delete;
  CodePointClasses(const CodePointClasses&) = delete;
  CodePointClasses& operator=(const CodePointClasses&) = delete;

 private:
  static constexpr uint32_t kLeafBits = 8;
  static constexpr uint32_t kLeafMask = (1u << kLeafBits) - 1;
  CodePointClasses() = default;

  std::vector<uint16_t> owned_index_;  // Build() only
  std::vector<uint8_t> owned_leaves_;
  const uint16_t* index_ = nullptr;  // block number → leaf number (kBlocks entries)
  const uint8_t* leaves_ = nullptr;  // deduplicated 256-entry leaves; leaf 0 is block 0
  size_t leaf_bytes_ = 0;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_STREAM_INTERNAL_O200K_CLASSES_H_
