#include "compressors/json.h"

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "compressors/elision.h"
#include "compressors/cj.h"
#include "compressors/internal/invariants.h"
#include "compressors/internal/json_select.h"
#include "compressors/internal/json_skeleton.h"
#include "compressors/internal/json_tree.h"
#include "compressors/internal/json_validity.h"
#include "compressors/toon.h"
#include "caveman/stream/tokens.h"
#include "stream/json_writer.h"

namespace caveman {
namespace {

using internal::JsonKind;
using internal::JsonTree;
using internal::JsonValueBound;

using internal::kJsonElidedKey;
// len(summary) + this = the marker size charged in worthEliding (§5.1 step 4).
constexpr uint64_t kMarkerOverhead = 56;

// One step of a collapsed array's output: an element (transformed) or a marker.
struct Step {
  uint32_t index = 0;  // element index, or the run length for a marker
  bool marker = false;
  uint64_t elided_bytes = 0;
  std::string summary;
};

// What one elision shares across the trees it walks: the output, the query, and whether a
// marker was written yet (the note goes on the first marker of the document only).
struct ElideOutput {
  std::string_view query;
  std::string* out = nullptr;
  bool collapsed = false;
};

// The steps of a collapsed array: kept elements, and each maximal run of the others as a
// marker when WorthEliding says so (else its elements). False when an element could not be
// produced.
bool PlanRuns(const internal::ArraySelection& sel, internal::JsonElements& elements, std::vector<Step>* plan) {
  const uint32_t n = elements.size();
  internal::InvariantAccumulator acc;
  internal::FieldList fields;
  uint32_t run_start = 0;
  uint64_t run_bytes = 0;
  auto flush = [&](uint32_t end) {
    const uint32_t count = end - run_start;
    if (count == 0) return;
    std::string summary = acc.Render(static_cast<int64_t>(run_bytes));
    if (internal::WorthEliding(count, summary.size() + kMarkerOverhead, run_bytes, summary)) {
      Step s;
      s.index = count;
      s.marker = true;
      s.elided_bytes = run_bytes;
      s.summary = std::move(summary);
      plan->push_back(std::move(s));
    } else {
      for (uint32_t e = run_start; e < end; ++e) plan->push_back({e, false, 0, {}});
    }
    acc.Reset();
    run_bytes = 0;
  };
  for (uint32_t e = 0; e < n; ++e) {
    if (sel.keep[e]) {
      flush(e);
      plan->push_back({e, false, 0, {}});
      run_start = e + 1;
      continue;
    }
    if (!elements.Fields(e, &fields)) return false;
    acc.Add(fields);
    run_bytes += sel.doc_len[e] + 1ull;
  }
  flush(n);
  return true;
}

void EmitMarker(const Step& s, ElideOutput& o) {
  // Markers are few (one per elided run), so the writer's own buffer costs nothing.
  JsonWriter w;
  w.BeginObject().Key(kJsonElidedKey).Uint(s.index);
  if (!s.summary.empty()) w.Key("__caveman_invariants__").String(s.summary);
  if (!o.collapsed && s.elided_bytes >= internal::kNoteMinElidedBytes) {
    w.Key("__caveman_note__").String(internal::ContractNote("elements"));
  }
  w.EndObject();
  o.out->append(w.str());
  o.collapsed = true;
}

// Walks a tree depth-first in sorted key order and writes CJ with markers. Iterative, so
// 10,000 levels of nesting cost no stack. One Elider may write several trees in turn.
class Elider {
 public:
  explicit Elider(ElideOutput& o) : o_(o), out_(*o.out) {}

  // Writes the subtree at `n` of `tree`.
  void Write(const JsonTree& tree, JsonTree::NodeId n) {
    tree_ = &tree;
    Process(n);
    while (!stack_.empty()) Advance();
  }

 private:
  enum class FrameType : uint8_t { kObject, kArray, kPlan };
  struct Frame {
    JsonTree::NodeId node;
    FrameType type;
    uint32_t next = 0;
    std::vector<Step> plan;
  };

  bool HoldsMarker(JsonTree::NodeId array) const {
    for (uint32_t i = 0; i < tree_->size(array); ++i) {
      JsonTree::NodeId e = tree_->item(array, i);
      if (tree_->kind(e) == JsonKind::kObject && tree_->Find(e, kJsonElidedKey) >= 0) return true;
    }
    return false;
  }

  void Process(JsonTree::NodeId n) {
    switch (tree_->kind(n)) {
      case JsonKind::kObject:
        out_.push_back('{');
        stack_.push_back({n, FrameType::kObject, 0, {}});
        return;
      case JsonKind::kArray:
        if (HoldsMarker(n)) {
          internal::AppendCanonicalJson(*tree_, n, &out_);
        } else if (tree_->size(n) <= internal::kJsonArrayThreshold) {
          out_.push_back('[');
          stack_.push_back({n, FrameType::kArray, 0, {}});
        } else {
          internal::TreeElements elements(*tree_, n);
          internal::ArraySelection sel;
          std::vector<Step> plan;
          // A tree always hands out its elements, so neither call fails here.
          internal::SelectArrayElements(elements, o_.query, &sel);
          PlanRuns(sel, elements, &plan);
          out_.push_back('[');
          stack_.push_back({n, FrameType::kPlan, 0, std::move(plan)});
        }
        return;
      default: internal::AppendCanonicalJson(*tree_, n, &out_);
    }
  }

  void Advance() {
    Frame& f = stack_.back();
    const JsonTree::NodeId node = f.node;
    const uint32_t i = f.next;
    switch (f.type) {
      case FrameType::kObject: {
        if (i == tree_->size(node)) {
          out_.push_back('}');
          stack_.pop_back();
          return;
        }
        ++f.next;
        if (i > 0) out_.push_back(',');
        std::string_view key = tree_->key(node, i);
        AppendJsonString(key, &out_);
        out_.push_back(':');
        JsonTree::NodeId v = tree_->member_value(node, i);
        if (internal::IsPreservedKey(key)) {
          internal::AppendCanonicalJson(*tree_, v, &out_);
        } else {
          Process(v);  // may invalidate f
        }
        return;
      }
      case FrameType::kArray: {
        if (i == tree_->size(node)) {
          out_.push_back(']');
          stack_.pop_back();
          return;
        }
        ++f.next;
        if (i > 0) out_.push_back(',');
        Process(tree_->item(node, i));
        return;
      }
      case FrameType::kPlan: {
        if (i == f.plan.size()) {
          out_.push_back(']');
          stack_.pop_back();
          return;
        }
        ++f.next;
        if (i > 0) out_.push_back(',');
        if (f.plan[i].marker) {
          EmitMarker(f.plan[i], o_);
        } else {
          Process(tree_->item(node, f.plan[i].index));
        }
        return;
      }
    }
  }

  ElideOutput& o_;
  std::string& out_;
  const JsonTree* tree_ = nullptr;
  std::vector<Frame> stack_;
};

// Texts from internal::kJsonPiecewiseMinBytes on are elided a piece at a time; containers of
// ≥ kJsonSkeletonNodeBytes down to kJsonSkeletonDepth are walked from the skeleton, everything
// else is parsed as a piece of its own (internal/json_skeleton.h).
//
// Elements of a long array are parsed in groups of up to this many bytes of text (each group
// one bracketed array; under JsonTree's per-thread parser limit of 1 MiB).
constexpr size_t kGroupBytes = size_t{128} << 10;

struct PiecewiseLimits {
  size_t node_bytes = internal::kJsonSkeletonNodeBytes;
  int depth = internal::kJsonSkeletonDepth;
  size_t group_bytes = kGroupBytes;
  size_t bytes_per_record = internal::kJsonSkeletonBytesPerRecord;
};

// Whether a working set of `per_value` bytes per value fits beside the text within the memory
// ceiling of issue 15 (peak RSS ≤ 3× the input + 64 MiB): ≤ 2× the text + 64 MiB.
bool FitsCeiling(size_t values, size_t per_value, size_t text_bytes) {
  return values <= (2 * text_bytes + (size_t{64} << 20)) / per_value;
}
// The whole tree, simdjson's index and the selection's per-element series take ≈ 85 bytes per
// value (a 7 MiB array of 1.5 M numbers: 128 MB); TOON's JsonValue tree ≈ 100 bytes per value
// and up to 220 while its vectors grow (the same array: 327 MB).
constexpr size_t kTreeBytesPerValue = 100;
constexpr size_t kToonTreeBytesPerValue = 220;

// Parses one piece or group of a text of `text_bytes` into *tree, unless it holds more values
// than a tree may within the ceiling of the whole text (one huge element of short numbers):
// then false, the piecewise path gives up, and the whole-tree path applies the same bound.
bool ParsePiece(JsonTree* tree, std::string_view piece, size_t padding, size_t text_bytes) {
  return FitsCeiling(JsonValueBound(piece), kTreeBytesPerValue, text_bytes) && tree->Parse(piece, padding);
}

// The elements of a skeleton array, parsed a group at a time: consecutive elements wrapped
// in brackets and parsed as one array, so small elements do not each pay for a parse.
class GroupedElements final : public internal::JsonElements {
 public:
  GroupedElements(std::string_view text, std::span<const internal::JsonSkeleton::Child> items, size_t group_bytes,
                  JsonTree* scratch, std::string* buffer)
      : text_(text), items_(items), group_bytes_(group_bytes), tree_(*scratch), buf_(*buffer) {}

  uint32_t size() const override { return static_cast<uint32_t>(items_.size()); }
  bool Get(uint32_t e, const JsonTree** tree, JsonTree::NodeId* node) override {
    if (loaded_ != Loaded::kTree || e < first_ || e >= end_) {
      if (!Load(e)) return false;
    }
    *tree = &tree_;
    *node = tree_.item(tree_.root(), e - first_);
    return true;
  }

  // The fields come from the members of each element, read without building a tree; from a
  // tree when the members cannot be read that way (an element over the reader's 1 MiB).
  bool Fields(uint32_t e, internal::FieldList* out) override {
    if (loaded_ != Loaded::kMembers || e < first_ || e >= end_) {
      if (!LoadMembers(e)) return JsonElements::Fields(e, out);
    }
    // The members of e in key order, the last of equal keys kept (as JsonTree stores them),
    // then the field rule of JsonElementFields.
    sorted_.assign(members_.begin() + member_start_[e - first_], members_.begin() + member_start_[e - first_ + 1]);
    std::stable_sort(sorted_.begin(), sorted_.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    out->clear();
    std::string_view value;
    for (size_t i = 0; i < sorted_.size() && out->size() < internal::kMaxUnitFields; ++i) {
      if (i + 1 < sorted_.size() && sorted_[i].key == sorted_[i + 1].key) continue;
      if (internal::JsonFieldValue(sorted_[i].kind, sorted_[i].value, &value)) out->push_back({sorted_[i].key, value});
    }
    return true;
  }

  std::string_view Source(uint32_t e) const override {
    if (loaded_ != Loaded::kTree || e < first_ || e >= end_ || tree_.dropped_duplicate_key()) return {};
    return text_.substr(items_[e].begin, items_[e].end - items_[e].begin);
  }

 private:
  enum class Loaded : uint8_t { kNothing, kTree, kMembers };

  // Copies elements e.. (up to group_bytes_ of text) into buf_ as one bracketed array.
  uint32_t Fill(uint32_t e) {
    loaded_ = Loaded::kNothing;
    uint32_t end = e + 1;
    while (end < items_.size() && items_[end].end - items_[e].begin <= group_bytes_) ++end;
    const std::string_view span = text_.substr(items_[e].begin, items_[end - 1].end - items_[e].begin);
    buf_.clear();
    buf_.reserve(span.size() + 2 + internal::kJsonParsePadding);
    buf_.push_back('[');
    buf_.append(span);
    buf_.push_back(']');
    first_ = e;
    end_ = end;
    return end - e;
  }

  bool Load(uint32_t e) {
    const uint32_t n = Fill(e);
    if (!ParsePiece(&tree_, buf_, buf_.capacity() - buf_.size(), text_.size())) return false;
    if (tree_.kind(tree_.root()) != JsonKind::kArray || tree_.size(tree_.root()) != n) return false;
    loaded_ = Loaded::kTree;
    return true;
  }

  bool LoadMembers(uint32_t e) {
    const uint32_t n = Fill(e);
    uint32_t count = 0;
    if (!internal::ArrayElementMembers(buf_, buf_.capacity() - buf_.size(), &members_, &count) || count != n) {
      return false;
    }
    member_start_.assign(n + 1, 0);
    for (const internal::JsonTopMember& m : members_) ++member_start_[m.element + 1];
    for (uint32_t i = 0; i < n; ++i) member_start_[i + 1] += member_start_[i];
    loaded_ = Loaded::kMembers;
    return true;
  }

  std::string_view text_;
  std::span<const internal::JsonSkeleton::Child> items_;
  size_t group_bytes_;
  JsonTree& tree_;
  std::string& buf_;
  Loaded loaded_ = Loaded::kNothing;
  uint32_t first_ = 0;
  uint32_t end_ = 0;
  std::vector<internal::JsonTopMember> members_;  // of the loaded group, in element order
  std::vector<uint32_t> member_start_;            // members of element first_ + i start here
  std::vector<internal::JsonTopMember> sorted_;
};

// The elision of a large text from its skeleton: nodes are walked here, pieces and groups
// of array elements are parsed one at a time and written by an Elider. The output is the
// whole-tree Elider's, byte for byte (tests/compressors/json_test.cc compares the two).
class PiecewiseElider {
 public:
  PiecewiseElider(std::string_view text, size_t padding, const internal::JsonSkeleton& skeleton, size_t group_bytes,
                  ElideOutput& o)
      : text_(text), padding_(padding), sk_(skeleton), group_bytes_(group_bytes), o_(o), out_(*o.out), elider_(o) {}

  // False when a piece could not be parsed (the caller falls back to the whole tree).
  bool Run() {
    internal::JsonSkeleton::Child root;
    root.begin = 0;
    root.end = static_cast<uint32_t>(text_.size());
    root.node = sk_.root();
    return Write(root, /*canonical=*/false);
  }

 private:
  using Child = internal::JsonSkeleton::Child;

  // Writes one value: CJ with markers, or with `canonical` plain CJ (preserved subtrees and
  // arrays that already hold a marker).
  bool Write(const Child& c, bool canonical) {
    if (c.node < 0) {
      const std::string_view piece = text_.substr(c.begin, c.end - c.begin);
      if (!ParsePiece(&piece_, piece, text_.size() - c.end + padding_, text_.size())) return false;
      if (canonical) {
        internal::AppendCanonicalJson(piece_, piece_.root(), &out_);
      } else {
        elider_.Write(piece_, piece_.root());
      }
      return true;
    }
    const std::span<const Child> kids = sk_.children(c.node);
    if (!sk_.node(c.node).is_array) return WriteObject(kids, canonical);
    if (kids.size() > internal::kJsonArrayThreshold) return WriteLongArray(kids, canonical);
    if (!canonical) {
      bool holds = false;
      if (!HoldsMarker(kids, &holds)) return false;
      canonical = holds;
    }
    out_.push_back('[');
    for (size_t i = 0; i < kids.size(); ++i) {
      if (i > 0) out_.push_back(',');
      if (!Write(kids[i], canonical)) return false;
    }
    out_.push_back(']');
    return true;
  }

  bool WriteObject(std::span<const Child> kids, bool canonical) {
    std::vector<std::pair<std::string, uint32_t>> members;  // decoded key, child
    members.reserve(kids.size());
    for (uint32_t i = 0; i < kids.size(); ++i) {
      std::optional<std::string> key = KeyOf(kids[i]);
      if (!key) return false;
      members.emplace_back(std::move(*key), i);
    }
    std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out_.push_back('{');
    bool first = true;
    for (size_t m = 0; m < members.size(); ++m) {
      // Duplicate keys: the last occurrence (last in the stable order) wins.
      if (m + 1 < members.size() && members[m].first == members[m + 1].first) continue;
      if (!first) out_.push_back(',');
      first = false;
      AppendJsonString(members[m].first, &out_);
      out_.push_back(':');
      if (!Write(kids[members[m].second], canonical || internal::IsPreservedKey(members[m].first))) return false;
    }
    out_.push_back('}');
    return true;
  }

  bool WriteLongArray(std::span<const Child> kids, bool canonical) {
    GroupedElements elements(text_, kids, group_bytes_, &group_, &group_buf_);
    const JsonTree* tree = nullptr;
    JsonTree::NodeId node = 0;
    std::vector<Step> plan;
    if (!canonical) {
      internal::ArraySelection sel;
      if (!internal::SelectArrayElements(elements, o_.query, &sel)) return false;
      canonical = sel.holds_marker;
      if (!canonical && !PlanRuns(sel, elements, &plan)) return false;
    }
    out_.push_back('[');
    if (canonical) {
      for (uint32_t e = 0; e < elements.size(); ++e) {
        if (e > 0) out_.push_back(',');
        if (!elements.Get(e, &tree, &node)) return false;
        internal::AppendCanonicalJson(*tree, node, &out_);
      }
    } else {
      for (size_t i = 0; i < plan.size(); ++i) {
        if (i > 0) out_.push_back(',');
        if (plan[i].marker) {
          EmitMarker(plan[i], o_);
          continue;
        }
        if (!elements.Get(plan[i].index, &tree, &node)) return false;
        elider_.Write(*tree, node);
      }
    }
    out_.push_back(']');
    return true;
  }

  // Whether an element of a short array is an object with a marker key.
  bool HoldsMarker(std::span<const Child> kids, bool* holds) {
    for (const Child& k : kids) {
      if (k.node >= 0) {
        if (sk_.node(k.node).is_array) continue;
        for (const Child& m : sk_.children(k.node)) {
          std::optional<std::string> key = KeyOf(m);
          if (!key) return false;
          if (*key == kJsonElidedKey) *holds = true;
        }
        continue;
      }
      if (text_[k.begin] != '{') continue;
      const std::string_view piece = text_.substr(k.begin, k.end - k.begin);
      if (!ParsePiece(&piece_, piece, text_.size() - k.end + padding_, text_.size())) return false;
      if (piece_.Find(piece_.root(), kJsonElidedKey) >= 0) *holds = true;
    }
    return true;
  }

  // The decoded key of an object member.
  std::optional<std::string> KeyOf(const Child& c) const {
    size_t i = c.key + 1;
    while (i < text_.size() && text_[i] != '"') i += text_[i] == '\\' ? 2 : 1;
    if (i >= text_.size()) return std::nullopt;
    return internal::DecodeJsonString(text_.substr(c.key, i + 1 - c.key));
  }

  std::string_view text_;
  size_t padding_;
  const internal::JsonSkeleton& sk_;
  size_t group_bytes_;
  ElideOutput& o_;
  std::string& out_;
  Elider elider_;
  JsonTree piece_;
  JsonTree group_;
  std::string group_buf_;
};

enum class Elision : uint8_t { kNotJson, kNothingCollapsed, kCollapsed, kNoPieces };

// The piecewise elision, or kNoPieces when the text has no skeleton or a piece fails to
// parse (then *out is empty and the whole-tree path decides). `known` is a skeleton of the
// text built with `limits` (detection's), or null.
Elision ElidePiecewise(std::string_view text, size_t padding, std::string_view query, const PiecewiseLimits& limits,
                       const internal::JsonSkeleton* known, std::string* out) {
  internal::JsonSkeleton built;
  if (known == nullptr) {
    if (!built.Build(text, limits.node_bytes, limits.depth, nullptr, limits.bytes_per_record)) {
      return Elision::kNoPieces;
    }
    known = &built;
  }
  const internal::JsonSkeleton& skeleton = *known;
  if (skeleton.root() < 0) return Elision::kNoPieces;
  ElideOutput o{query, out};
  if (!PiecewiseElider(text, padding, skeleton, limits.group_bytes, o).Run()) {
    out->clear();
    return Elision::kNoPieces;
  }
  return o.collapsed ? Elision::kCollapsed : Elision::kNothingCollapsed;
}

// The elision over one tree of the whole text, with no memory bound.
Elision ElideWholeTree(std::string_view text, size_t padding, std::string_view query, std::string* out) {
  JsonTree tree;
  if (!tree.Parse(text, padding)) return Elision::kNotJson;
  ElideOutput o{query, out};
  Elider(o).Write(tree, tree.root());
  return o.collapsed ? Elision::kCollapsed : Elision::kNothingCollapsed;
}

// JsonValueBound of one text, counted at most once (the tree path and TOON both ask).
class LazyValueBound {
 public:
  explicit LazyValueBound(std::string_view text) : text_(text) {}
  size_t get() {
    if (!values_) values_ = JsonValueBound(text_);
    return *values_;
  }

 private:
  std::string_view text_;
  std::optional<size_t> values_;
};

// The §5.1 elision of `text` into *out: piece by piece when the text is large and has a
// skeleton, else over one tree of the whole text when that fits the memory ceiling.
Elision Elide(std::string_view text, size_t padding, std::string_view query, const internal::JsonSkeleton* known,
              LazyValueBound& values, std::string* out) {
  if (text.size() >= internal::kJsonPiecewiseMinBytes) {
    const Elision e = ElidePiecewise(text, padding, query, PiecewiseLimits(), known, out);
    if (e != Elision::kNoPieces) return e;
  }
  // Beyond the ceiling (arrays of millions of short values) the elision is not tried; the
  // text is only validated, without allocating, so that its lossless forms may be. Texts of
  // 512 MiB or more stay declined whatever their density, as JsonTree declines them.
  if (!FitsCeiling(values.get(), kTreeBytesPerValue, text.size())) {
    constexpr size_t kMaxJsonBytes = size_t{1} << 29;
    if (text.size() >= kMaxJsonBytes) return Elision::kNotJson;
    return internal::ValidateJsonBytes(text).valid ? Elision::kNothingCollapsed : Elision::kNotJson;
  }
  return ElideWholeTree(text, padding, query, out);
}

// A lossless candidate is only counted when its bytes are at most this many times the lossy
// view's: beyond it, it cannot plausibly count fewer tokens, and counting it would cost as much
// as the elision itself on large dumps (docs/DECISIONS.md, "JSON, lossless first").
constexpr size_t kLosslessByteSlack = 2;
// TOON is tried only up to this nesting depth: its encoder recurses per level (this
// compressor runs on the caller's stack), and deeper documents do not tabulate anyway.
constexpr int kMaxToonDepth = 64;

// The skeleton detection left on the body when it validated `text` (the body's view, perhaps
// with JSON whitespace after the validated part), or null.
const internal::JsonSkeleton* DetectedSkeleton(const Body& body, std::string_view text) {
  const std::shared_ptr<const void> d = body.Derived(&internal::kDerivedJsonSkeletonTag);
  if (d == nullptr) return nullptr;
  const auto* derived = static_cast<const internal::DerivedJsonSkeleton*>(d.get());
  if (derived->data != text.data() || derived->size > text.size()) return nullptr;
  for (char c : text.substr(derived->size)) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return nullptr;
  }
  // The Body keeps the value alive as long as the compressor uses it.
  return &derived->skeleton;
}

// Not an InMemoryCompressor: it needs the Body itself to learn whether the loaded view has
// the spare bytes simdjson may read past the end (saves a copy of the whole input).
//
// Issue 16, lossless first: besides the §5.1 elision view it considers two lossless forms,
// minified JSON and TOON, and emits the one with the fewest tokens among those that count
// fewer tokens than the input, preferring a lossless form on ties with the lossy view
// (method `minify` or `toon`, lossless_to_model true).
class JsonCompressor final : public Compressor {
 public:
  std::string_view content_type() const override { return "json"; }
  bool query_aware() const override { return true; }
  bool metadata_aware() const override { return true; }

  Result<TransformOutcome> Transform(const Body& body, std::string_view query, ByteSink& sink,
                                     TransformMeta* meta) const override {
    CAVEMAN_ASSIGN_OR_RETURN(std::string_view text, body.View());
    std::optional<std::string> elided;
    LazyValueBound values(text);
    {
      std::string out;
      const Elision e = Elide(text, body.view_padding(), query, DetectedSkeleton(body, text), values, &out);
      // Used once: its memory is not kept for the rest of the run.
      body.SetDerived(nullptr, nullptr);
      if (e == Elision::kNotJson) return TransformOutcome::kDeclined;
      if (e == Elision::kCollapsed) elided = std::move(out);
    }
    const TokenCounter& counter = DefaultTokenCounter();
    std::string best;
    std::string_view method;
    uint64_t best_tokens = 0;
    bool have = false;
    auto consider = [&](std::string candidate, std::string_view how, bool count_always) {
      if (!count_always && elided && candidate.size() > kLosslessByteSlack * elided->size()) return;
      const uint64_t t = counter.Count(candidate);
      if (!have || t < best_tokens) {
        best = std::move(candidate);
        best_tokens = t;
        method = how;
        have = true;
      }
    };
    // Order matters on ties: minify, then TOON, then the lossy view (strictly fewer tokens).
    // The minified size is known before the bytes are written: a candidate `consider` would
    // drop unread is never built (a 64 MiB dump's minified copy was 17 % of its run).
    // Considered even when it is the input itself (already minified): then a re-run of the
    // stability guard over a minified view keeps it instead of switching forms.
    // When TOON cannot be tried (below) the depth is not needed, and the size only has to be
    // compared with the bound: the scan stops as soon as it is passed (a 64 MiB dump with a
    // small view scanned all of it, 7 % of its run).
    int depth = 0;
    const bool toon_possible = !elided || text.size() <= kLosslessByteSlack * 4 * elided->size();
    if (!elided) {
      consider(MinifyJson(text, &depth), "minify", true);
    } else if (toon_possible ? MinifiedJsonSize(text, &depth) <= kLosslessByteSlack * elided->size()
                             : MinifiedJsonSizeAtMost(text, kLosslessByteSlack * elided->size())) {
      consider(MinifyJson(text), "minify", false);
    }
    // TOON is rarely under an eighth of the input, so beyond that it cannot beat the view.
    if (depth <= kMaxToonDepth && toon_possible && FitsCeiling(values.get(), kToonTreeBytesPerValue, text.size())) {
      if (Result<std::string> toon = EncodeToon(text, kMaxTokenBytes * text.size()); toon.ok()) {
        consider(std::move(toon).value(), "toon", !elided);
      }
    }
    if (elided) {
      const uint64_t t = counter.Count(*elided);
      if (!have || t < best_tokens) {
        best = std::move(*elided);
        best_tokens = t;
        method = "elision";
        have = true;
      }
    }
    if (!have) return TransformOutcome::kDeclined;
    // A form that does not count fewer tokens than the input is refused by the size gate.
    if (meta != nullptr) {
      meta->method = std::string(method);
      meta->lossless_to_model = method != "elision";
    }
    CAVEMAN_RETURN_IF_ERROR(sink.Write(best));
    return TransformOutcome::kAccepted;
  }
};

}  // namespace

// Calls keep(c) for every byte MinifyJson keeps, in order, until keep returns false; returns
// the deepest nesting seen.
template <class Keep>
static int ForEachMinifiedByte(std::string_view json, Keep&& keep) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (!keep(c)) break;
      if (c == '\\' && i + 1 < json.size()) {
        if (!keep(json[++i])) break;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if (c == ']' || c == '}') --depth;
    if (!keep(c)) break;
  }
  return deepest;
}

size_t MinifiedJsonSize(std::string_view json, int* max_depth) {
  size_t size = 0;
  const int deepest = ForEachMinifiedByte(json, [&size](char) {
    ++size;
    return true;
  });
  if (max_depth != nullptr) *max_depth = deepest;
  return size;
}

bool MinifiedJsonSizeAtMost(std::string_view json, size_t limit) {
  size_t size = 0;
  ForEachMinifiedByte(json, [&size, limit](char) { return ++size <= limit; });
  return size <= limit;
}

std::string MinifyJson(std::string_view json, int* max_depth) {
  std::string out;
  out.reserve(json.size());
  const int deepest = ForEachMinifiedByte(json, [&out](char c) {
    out.push_back(c);
    return true;
  });
  if (max_depth != nullptr) *max_depth = deepest;
  return out;
}

std::optional<std::string> ElideJson(std::string_view body, std::string_view query) {
  return ElideJson(body, query, 0);
}

std::optional<std::string> ElideJson(std::string_view body, std::string_view query, size_t readable_padding) {
  std::string out;
  LazyValueBound values(body);
  if (Elide(body, readable_padding, query, nullptr, values, &out) != Elision::kCollapsed) return std::nullopt;
  return out;
}

bool ElideJsonPiecewiseForTest(std::string_view body, std::string_view query, size_t node_bytes, int depth,
                               size_t group_bytes, std::optional<std::string>* out, size_t bytes_per_record) {
  std::string view;
  const Elision e = ElidePiecewise(body, 0, query, {node_bytes, depth, group_bytes, bytes_per_record}, nullptr, &view);
  if (e == Elision::kNoPieces) return false;
  *out = std::nullopt;
  if (e == Elision::kCollapsed) *out = std::move(view);
  return true;
}

std::optional<std::string> ElideJsonWholeTreeForTest(std::string_view body, std::string_view query) {
  std::string out;
  if (ElideWholeTree(body, 0, query, &out) != Elision::kCollapsed) return std::nullopt;
  return out;
}

std::unique_ptr<Compressor> NewJsonCompressor() { return std::make_unique<JsonCompressor>(); }

}  // namespace caveman
