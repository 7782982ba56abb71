// A compact, read-only JSON tree built from simdjson's On-Demand front end (§0.3 "is JSON"):
// exactly one RFC 8259 value with optional JSON whitespace around it, valid UTF-8 strings
// (escaped lone surrogates are rejected, since they cannot be decoded to UTF-8), nesting depth
// ≤ 10,000. The walk keeps its own stack of On-Demand iterators (no recursion) and counts the
// depth itself, so 100,000 levels decline cleanly.
//
// Numbers keep their literal text; strings are decoded. Object members are stored sorted by
// key bytes with duplicates removed (the last occurrence wins), which is the order CJ needs.
//
// Memory: 8 bytes per value plus 12 per object member / 4 per array item; strings without
// escapes and number literals point into the input instead of being copied. While Parse runs,
// simdjson's structural index (4 bytes per token) is alive too; it is freed before returning.
// simdjson reads up to 64 bytes past the end of the text: pass `readable_padding` ≥
// kJsonParsePadding when the caller's buffer has them (Body::view_padding()), otherwise Parse
// may copy the text once into a padded buffer owned by the tree.
//
// IMPORTANT: Buffer lifetime. The tree points into the parsed text; the text must outlive it.
// Thread-safety: immutable after Parse; const methods may be used from several threads.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_JSON_TREE_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_JSON_TREE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stream/json_writer.h"

namespace caveman::internal {

inline constexpr size_t kJsonTreeMaxDepth = 10000;
// Readable bytes past the end of the text that let Parse skip its padded copy.
inline constexpr size_t kJsonParsePadding = 64;

enum class JsonKind : uint8_t { kNull, kFalse, kTrue, kNumber, kString, kArray, kObject };

class JsonTree {
 public:
  using NodeId = uint32_t;

  // Parses `text`; false if it is not JSON (§0.3). Texts of 512 MiB or more are rejected.
  bool Parse(std::string_view text) { return Parse(text, 0); }
  // Same, where `readable_padding` bytes after text.end() may be read (never written; their
  // values do not matter). With ≥ kJsonParsePadding no copy of the text is made.
  bool Parse(std::string_view text, size_t readable_padding);

  NodeId root() const { return 0; }
  JsonKind kind(NodeId n) const { return nodes_[n].kind; }
  // Number literal or decoded string.
  std::string_view text(NodeId n) const { return Text(nodes_[n].off, nodes_[n].len); }
  // Number of members (object) or items (array); 0 for scalars.
  uint32_t size(NodeId n) const { return nodes_[n].kind >= JsonKind::kArray ? nodes_[n].len : 0; }
  // i-th member of an object in ascending key order.
  std::string_view key(NodeId n, uint32_t i) const {
    const Member& m = members_[nodes_[n].off + i];
    return Text(m.key_off, m.key_len);
  }
  NodeId member_value(NodeId n, uint32_t i) const { return members_[nodes_[n].off + i].value; }
  NodeId item(NodeId n, uint32_t i) const { return items_[nodes_[n].off + i]; }
  // Object member by key, or -1.
  int64_t Find(NodeId obj, std::string_view key) const;

  // Whether some object of the text had a key twice (and so lost a member to the last one):
  // then the tree holds fewer members than the text spells.
  bool dropped_duplicate_key() const { return dropped_duplicate_key_; }

  size_t node_count() const { return nodes_.size(); }
  // Bytes of tree data in use (nodes, members, items, decoded strings, padded copy).
  size_t MemoryBytes() const;

 private:
  // 8 bytes: the kind shares a word with the length (inputs are < 512 MiB).
  struct Node {
    JsonKind kind : 3;
    uint32_t len : 29;  // text length, or child count for containers
    uint32_t off;       // text offset (bit 31: arena), or first child in members_/items_
  };
  struct Member {
    uint32_t key_off;
    uint32_t key_len;
    NodeId value;
  };
  static constexpr uint32_t kArenaBit = 0x80000000u;
  static constexpr size_t kMaxInput = size_t{1} << 29;
  static Node MakeNode(JsonKind kind, uint32_t len, uint32_t off) {
    Node n;
    n.kind = kind;
    n.len = len & ((1u << 29) - 1);
    n.off = off;
    return n;
  }

  std::string_view Text(uint32_t off, uint32_t len) const {
    return (off & kArenaBit) ? std::string_view(arena_.data() + (off & ~kArenaBit), len) : input_.substr(off, len);
  }
  // The On-Demand walk (json_tree.cc); a friend so the header needs no simdjson types.
  struct Builder;
  friend struct Builder;

  std::string_view input_;
  bool dropped_duplicate_key_ = false;
  std::string padded_;  // padded copy of the input, when the caller's buffer had no padding
  std::string arena_;
  std::vector<Node> nodes_;
  std::vector<Member> members_;
  std::vector<NodeId> items_;
};

// One member of an object element of an array, for ArrayElementMembers.
struct JsonTopMember {
  uint32_t element;        // index of the element in the array
  std::string_view key;    // decoded
  JsonKind kind;           // the value's kind
  std::string_view value;  // decoded string or number literal; empty for other kinds
};
// The members of every object element of the JSON array `text`, in text order, without
// building a tree (nested containers are skipped by the parser, not walked): what the
// §4.4 field rule needs of each element. `text` must be valid JSON (this does not check
// all of it) with ≥ kJsonParsePadding readable bytes after it. *count = number of elements.
// The views point into `text` or into this thread's parser and stay valid until the next
// call on this thread. False when `text` is not an array or cannot be walked.
bool ArrayElementMembers(std::string_view text, size_t readable_padding, std::vector<JsonTopMember>* out,
                         uint32_t* count);

// CJ (§0.3) of the subtree at `n`, appended to `out`. Iterative (no recursion).
void AppendCanonicalJson(const JsonTree& tree, JsonTree::NodeId n, std::string* out);
// CJI (§0.3, two-space indented canonical JSON) of the subtree at `n`, appended to `out`:
// `{`/`[` then LF, one member or element per line indented two spaces per depth
// (`"key": value`), commas at line ends, the closing bracket on its own line at the parent
// depth; empty containers are `{}` / `[]`. Iterative. Used by RetrieveQuery narrowing (§2.6)
// to render group elements.
void AppendCanonicalJsonIndented(const JsonTree& tree, JsonTree::NodeId n, std::string* out);
// Strings are written with AppendJsonString of stream/json_writer.h (the CJ escaping).

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_JSON_TREE_H_
