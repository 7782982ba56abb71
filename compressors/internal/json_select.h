// Selection of §5.1 step 3 for one JSON array: which elements stay visible.
//
// Force-keeps (first 3 / last 2, error words, anomalies, both sides of change-point seams),
// then the query fill up to 50 kept elements, then the redundancy guard (§4.2) extended by the
// shape rule of docs/DECISIONS.md: a dropped object element whose key set and value kinds equal
// those of a kept element is represented by it.
//
// Thread-safety: pure functions over an immutable tree.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_JSON_SELECT_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_JSON_SELECT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compressors/internal/invariants.h"
#include "compressors/internal/json_tree.h"

namespace caveman::internal {

inline constexpr uint32_t kJsonArrayThreshold = 8;
inline constexpr uint32_t kJsonKeepFirst = 3;
inline constexpr uint32_t kJsonKeepLast = 2;
inline constexpr size_t kJsonMaxItems = 50;
inline constexpr double kJsonAnomalyZ = 2.0;
inline constexpr double kJsonRelevanceThreshold = 0.30;
inline constexpr size_t kJsonAnomalyMinCount = 4;
inline constexpr size_t kJsonMaxSplits = 8;
inline constexpr size_t kJsonMinSegment = 4;
// At most this many elements are kept for their length alone (`__len__` anomalies), the most
// extreme first (docs/DECISIONS.md).
inline constexpr size_t kJsonMaxLenAnomalies = 50;

// The key of a marker object: an array holding one is left as it is (a second pass returns
// the same bytes).
inline constexpr std::string_view kJsonElidedKey = "__caveman_elided__";

struct ArraySelection {
  std::vector<bool> keep;         // one per element
  std::vector<uint32_t> doc_len;  // len(CJ(element))
  bool holds_marker = false;      // some element is an object with a kJsonElidedKey member
};

// The elements of one array, handed out one at a time: from a whole tree (TreeElements) or
// parsed from the text a group at a time (json.cc). What Get returns stays valid until the
// next Get; the selection asks for elements in ascending order within each of its passes.
class JsonElements {
 public:
  virtual ~JsonElements() = default;
  virtual uint32_t size() const = 0;
  // Element e; false when it cannot be produced (the caller gives up on this path).
  virtual bool Get(uint32_t e, const JsonTree** tree, JsonTree::NodeId* node) = 0;
  // JsonElementFields of element e (views valid until the next call); by default from Get.
  virtual bool Fields(uint32_t e, FieldList* out);
  // After Get(e): the exact bytes element e was parsed from, when the elements come from a
  // text and the tree Get returned kept every member that text spells (no duplicate key
  // dropped); empty otherwise (the default). Valid as long as Get's tree.
  virtual std::string_view Source(uint32_t) const { return {}; }
};

class TreeElements final : public JsonElements {
 public:
  TreeElements(const JsonTree& tree, JsonTree::NodeId array) : tree_(tree), array_(array) {}
  uint32_t size() const override { return tree_.size(array_); }
  bool Get(uint32_t e, const JsonTree** tree, JsonTree::NodeId* node) override {
    *tree = &tree_;
    *node = tree_.item(array_, e);
    return true;
  }

 private:
  const JsonTree& tree_;
  JsonTree::NodeId array_;
};

// Runs the whole selection over the elements (n > 8 expected, any n works); false when an
// element could not be produced.
bool SelectArrayElements(JsonElements& elements, std::string_view query, ArraySelection* sel);

// The error-word pattern of §5.1 (ASCII word boundaries, case-insensitive).
bool HasErrorWord(std::string_view doc);
// len(CJ(v)) of a JSON value v read from its source text `src` instead of written out, when
// src has no byte that CJ spells differently: no backslash (every string is then its own
// decoded bytes and every quote opens or closes one), none of `<` `>` `&` (CJ writes \u003c
// and so on) and no 0xE2 (U+2028/U+2029 are escaped); a JSON text has no raw control byte in
// a string. CJ is then src without the white space outside strings and with each object's
// members in key order, provided no duplicate key was dropped (the caller's part). For the
// same reason HasErrorWord(src) == HasErrorWord(CJ(v)): strings, numbers and literals are
// separated by punctuation or white space in both, neither of which is a word byte: with
// `want_error_word`, *error_word is set to that, found in the same pass over src.
// Returns false (and leaves both outputs) when src has such a byte.
bool CleanSourceFacts(std::string_view src, bool want_error_word, size_t* cj_len, bool* error_word);
// Keys whose subtree is preserved unchanged (§5.1 step 2).
bool IsPreservedKey(std::string_view key);

// Anomaly flags over one path's series (values with their element indices). `len_path`
// applies the `__len__` rarity rule.
void FlagAnomalies(const std::vector<double>& values, const std::vector<uint32_t>& index, bool len_path,
                   std::vector<bool>* keep);
// Elements kept on both sides of accepted change-point seams (binary segmentation, D1).
std::vector<uint32_t> ChangePointKeeps(const std::vector<double>& y);
// Median (even count: mean of the two middle values) and MAD. REQUIRES: non-empty.
double Median(std::vector<double> v);
double Mad(const std::vector<double>& v);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_JSON_SELECT_H_
