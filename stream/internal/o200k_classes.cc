#include "stream/internal/o200k_classes.h"

#include <unicode/uchar.h>
#include <unicode/uset.h>

#include <algorithm>
#include <map>
#include <string>

namespace caveman::internal {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

uint8_t ClassOfCategory(UCharCategory category) {
  switch (category) {
    case U_UPPERCASE_LETTER:
    case U_TITLECASE_LETTER: return kClsUpperGroup | kClsLetter;
    case U_LOWERCASE_LETTER: return kClsLowerGroup | kClsLetter;
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER: return kClsUpperGroup | kClsLowerGroup | kClsLetter;
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK: return kClsUpperGroup | kClsLowerGroup;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER: return kClsNumber;
    default: return 0;
  }
}

// u_enumCharTypes callback: fills [start, limit) of the flat table.
UBool FillRange(const void* context, UChar32 start, UChar32 limit, UCharCategory type) {
  auto* flat = static_cast<std::vector<uint8_t>*>(const_cast<void*>(context));
  std::fill(flat->begin() + start, flat->begin() + limit, ClassOfCategory(type));
  return true;
}

}  // namespace

CodePointClasses::CodePointClasses(const uint16_t* index, const uint8_t* leaves, size_t leaf_bytes)
    : index_(index), leaves_(leaves), leaf_bytes_(leaf_bytes) {}

CodePointClasses CodePointClasses::Build() {
  CodePointClasses out;
  constexpr uint32_t kBlockSize = 1u << kLeafBits;
  static_assert(kBlocks == (kMaxCodePoint + 1) >> kLeafBits);
  out.owned_index_.resize(kBlocks);
  // Enumerating category ranges is far faster than asking ICU per code point.
  std::vector<uint8_t> flat(kMaxCodePoint + 1, 0);
  u_enumCharTypes(&FillRange, &flat);
  UErrorCode status = U_ZERO_ERROR;
  const USet* white_space = u_getBinaryPropertySet(UCHAR_WHITE_SPACE, &status);
  if (U_SUCCESS(status)) {
    for (int32_t item = 0; item < uset_getItemCount(white_space); ++item) {
      UChar32 start = 0;
      UChar32 end = 0;
      if (uset_getItem(white_space, item, &start, &end, nullptr, 0, &status) != 0) continue;
      for (UChar32 cp = start; cp <= end; ++cp) flat[cp] |= kClsSpace;
    }
  } else {
    for (UChar32 cp = 0; cp <= static_cast<UChar32>(kMaxCodePoint); ++cp) {
      if (u_isUWhiteSpace(cp)) flat[cp] |= kClsSpace;
    }
  }
  flat['\r'] |= kClsCrLf;
  flat['\n'] |= kClsCrLf;
  flat['/'] |= kClsSlash;
  // Most of the 4,352 blocks are unassigned or uniform; deduplicating keeps the table small
  // enough to stay in cache (a few hundred leaves).
  std::map<std::string, uint16_t> seen;
  for (uint32_t block = 0; block < kBlocks; ++block) {
    std::string leaf(reinterpret_cast<const char*>(flat.data()) + (block << kLeafBits), kBlockSize);
    auto [it, inserted] = seen.emplace(leaf, static_cast<uint16_t>(seen.size()));
    if (inserted) out.owned_leaves_.insert(out.owned_leaves_.end(), leaf.begin(), leaf.end());
    out.owned_index_[block] = it->second;
  }
  out.index_ = out.owned_index_.data();
  out.leaves_ = out.owned_leaves_.data();
  out.leaf_bytes_ = out.owned_leaves_.size();
  return out;
}

}  // namespace caveman::internal
