// The upper levels of a large JSON text, found by one pass of the byte validator
// (json_validity.h), so that the json compressor can parse the text a piece at a time
// instead of building one tree for all of it (issue 19: the 64 MiB dump's structural index
// and tree were alive together beside the input).
//
// A node is a container at depth ≤ max_depth whose text spans ≥ min_node_bytes; its children
// are recorded in order with their byte spans (and, in objects, where their key starts). A
// child that is not a node — a scalar, a small container, anything deeper — is a *piece*: a
// complete JSON value the caller parses on its own. Every other container is forgotten when
// it closes, so memory follows the number of children of the large containers only.
//
// HowTo:
//   JsonSkeleton sk;
//   if (!sk.Build(text, 1 << 20, 4)) ...;      // not JSON (§0.3), or too many children
//   if (sk.root() < 0) ...;                    // the top value is small or a scalar
//   for (const JsonSkeleton::Child& c : sk.children(sk.root())) ...
//
// Thread-safety: immutable after Build.
//
// DerivedJsonSkeleton is what detection leaves on a Body (Body::SetDerived with the tag
// &kDerivedJsonSkeletonTag): the skeleton of the `size` bytes at `data`.

#ifndef CAVEMAN_COMPRESSORS_INTERNAL_JSON_SKELETON_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_JSON_SKELETON_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace caveman::internal {

struct JsonShape;  // json_validity.h

// The json compressor walks texts from this size on a piece at a time (below, one tree of
// the whole text is cheap), from a skeleton of containers of ≥ kJsonSkeletonNodeBytes down to
// depth kJsonSkeletonDepth. Detection builds that skeleton while it validates such a text.
inline constexpr size_t kJsonPiecewiseMinBytes = size_t{4} << 20;
inline constexpr size_t kJsonSkeletonNodeBytes = size_t{1} << 20;
inline constexpr int kJsonSkeletonDepth = 4;
inline constexpr size_t kJsonSkeletonBytesPerRecord = 64;

class JsonSkeleton {
 public:
  struct Child {
    uint32_t key = 0;    // offset of the member key's opening quote (objects only)
    uint32_t begin = 0;  // the value's first byte
    uint32_t end = 0;    // one past its last byte
    int32_t node = -1;   // its node, or -1 for a piece
  };
  struct Node {
    bool is_array = false;
    uint32_t first = 0;  // children_[first, first + count)
    uint32_t count = 0;
  };

  // Validates `text` as ValidateJsonBytes does and records its upper levels. False when the
  // text is not JSON, is 512 MiB or more, or would need more than one child record per
  // `bytes_per_record` bytes of text (arrays of short values: the whole-tree path is as lean
  // there, and the records, 16 bytes each, stay under a quarter of the text). With `shape`,
  // also the validator's verdict and top-level shape (valid even when Build fails for too
  // many children).
  bool Build(std::string_view text, size_t min_node_bytes, int max_depth, JsonShape* shape = nullptr,
             size_t bytes_per_record = kJsonSkeletonBytesPerRecord);

  int32_t root() const { return root_; }
  const Node& node(int32_t i) const { return nodes_[static_cast<size_t>(i)]; }
  std::span<const Child> children(int32_t i) const {
    const Node& n = node(i);
    return {children_.data() + n.first, n.count};
  }
  // ---- Observer calls of the byte validator (json_validity.cc); not for other callers.
  void OnValue(size_t begin) {
    if (depth_ == 0 || depth_ > max_depth_) return;
    if (pend_.size() == max_records_) {
      max_depth_ = -1;  // too many records: every call is a no-op from here; Build fails
      return;
    }
    const Open& parent = open_.back();
    pend_.push_back({parent.is_array ? 0 : key_, static_cast<uint32_t>(begin), 0, -1});
  }
  void OnKey(size_t quote) { key_ = static_cast<uint32_t>(quote); }
  void OnOpen(size_t begin, bool is_array) {
    if (++depth_ <= max_depth_) open_.push_back({static_cast<uint32_t>(begin), is_array, pend_.size()});
  }
  void OnClose(size_t end) {
    if (depth_-- > max_depth_) return;
    const Open o = open_.back();
    open_.pop_back();
    int32_t id = -1;
    if (end - o.begin >= min_node_bytes_) id = Keep(o);
    pend_.resize(o.base);
    if (depth_ == 0) {
      root_ = id;
    } else {
      pend_.back().node = id;
    }
  }
  void OnEnd(size_t end) {
    if (depth_ == 0 || depth_ > max_depth_) return;
    pend_.back().end = static_cast<uint32_t>(end);
  }

 private:
  struct Open {
    uint32_t begin;
    bool is_array;
    size_t base;  // its first child in pend_
  };
  int32_t Keep(const Open& o);

  size_t min_node_bytes_ = 0;
  size_t max_records_ = 0;  // bound on the records in pend_, and on those in children_
  int max_depth_ = 0;
  int depth_ = 0;
  uint32_t key_ = 0;
  int32_t root_ = -1;
  std::vector<Open> open_;
  std::vector<Child> pend_;  // children of the open containers at depth ≤ max_depth_
  std::vector<Node> nodes_;
  std::vector<Child> children_;
};

struct DerivedJsonSkeleton {
  JsonSkeleton skeleton;
  const char* data = nullptr;
  size_t size = 0;
};
inline constexpr char kDerivedJsonSkeletonTag = 0;

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_JSON_SKELETON_H_
