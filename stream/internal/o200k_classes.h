// Code point classes used by the o200k_base pre-tokenizer (§7.2), built once from ICU's
// Unicode 15 data into a two-level table.
//
// Thread-safety: Get() initialises on first use (function-local static); the table is
// immutable afterwards.
#ifndef CAVEMAN_STREAM_INTERNAL_O200K_CLASSES_H_
#define CAVEMAN_STREAM_INTERNAL_O200K_CLASSES_H_

#include <cstdint>
#include <vector>

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
  static const CodePointClasses& Get();

  // REQUIRES: cp <= 0x10FFFF.
  uint8_t Of(uint32_t cp) const {
    return leaves_[(static_cast<uint32_t>(index_[cp >> kLeafBits]) << kLeafBits) |
                   (cp & kLeafMask)];
  }
  const uint8_t* ascii() const { return leaves_.data(); }  // classes of U+0000..U+007F

 private:
  static constexpr uint32_t kLeafBits = 8;
  static constexpr uint32_t kLeafMask = (1u << kLeafBits) - 1;
  CodePointClasses();

  std::vector<uint16_t> index_;  // block number → leaf number
  std::vector<uint8_t> leaves_;  // deduplicated 256-entry leaves; leaf 0 is block 0
};

}  // namespace caveman::internal

#endif  // CAVEMAN_STREAM_INTERNAL_O200K_CLASSES_H_
