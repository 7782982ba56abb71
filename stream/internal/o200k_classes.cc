#include "stream/internal/o200k_classes.h"

#include <unicode/uchar.h>

#include <map>
#include <string>

namespace caveman::internal {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

uint8_t ClassOf(uint32_t cp) {
  uint8_t cls = 0;
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_UPPERCASE_LETTER:
    case U_TITLECASE_LETTER:
      cls = kClsUpperGroup | kClsLetter;
      break;
    case U_LOWERCASE_LETTER:
      cls = kClsLowerGroup | kClsLetter;
      break;
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      cls = kClsUpperGroup | kClsLowerGroup | kClsLetter;
      break;
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
      cls = kClsUpperGroup | kClsLowerGroup;
      break;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      cls = kClsNumber;
      break;
    default:
      break;
  }
  if (u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_WHITE_SPACE)) cls |= kClsSpace;
  if (cp == '\r' || cp == '\n') cls |= kClsCrLf;
  if (cp == '/') cls |= kClsSlash;
  return cls;
}

}  // namespace

const CodePointClasses& CodePointClasses::Get() {
  static const CodePointClasses* const classes = new CodePointClasses();  // never destroyed
  return *classes;
}

CodePointClasses::CodePointClasses() {
  constexpr uint32_t kBlockSize = 1u << kLeafBits;
  constexpr uint32_t kBlocks = (kMaxCodePoint + 1) >> kLeafBits;
  index_.resize(kBlocks);
  // Most of the 4,352 blocks are unassigned or uniform; deduplicating keeps the table small
  // enough to stay in cache (a few hundred leaves).
  std::map<std::string, uint16_t> seen;
  std::string leaf(kBlockSize, '\0');
  for (uint32_t block = 0; block < kBlocks; ++block) {
    for (uint32_t k = 0; k < kBlockSize; ++k) {
      leaf[k] = static_cast<char>(ClassOf((block << kLeafBits) | k));
    }
    auto [it, inserted] = seen.emplace(leaf, static_cast<uint16_t>(seen.size()));
    if (inserted) leaves_.insert(leaves_.end(), leaf.begin(), leaf.end());
    index_[block] = it->second;
  }
}

}  // namespace caveman::internal
