#include "compressors/json.h"

#include <algorithm>
#include <vector>

#include "compressors/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/internal/json_select.h"
#include "compressors/internal/json_tree.h"
#include "compressors/toon.h"
#include "caveman/stream/tokens.h"
#include "stream/json_writer.h"

namespace caveman {
namespace {

using internal::JsonKind;
using internal::JsonTree;

constexpr std::string_view kElidedKey = "__caveman_elided__";
// len(summary) + this = the marker size charged in worthEliding (§5.1 step 4).
constexpr uint64_t kMarkerOverhead = 56;

// One step of a collapsed array's output: an element (transformed) or a marker.
struct Step {
  uint32_t index = 0;  // element index, or the run length for a marker
  bool marker = false;
  uint64_t elided_bytes = 0;
  std::string summary;
};

// Walks the tree depth-first in sorted key order and writes CJ with markers. Iterative, so
// 10,000 levels of nesting cost no stack.
class Elider {
 public:
  Elider(const JsonTree& tree, std::string_view query, std::string* out) : tree_(tree), query_(query), out_(*out) {}

  // False when no array was collapsed.
  bool Run() {
    Process(tree_.root());
    while (!stack_.empty()) Advance();
    return collapsed_;
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
    for (uint32_t i = 0; i < tree_.size(array); ++i) {
      JsonTree::NodeId e = tree_.item(array, i);
      if (tree_.kind(e) == JsonKind::kObject && tree_.Find(e, kElidedKey) >= 0) return true;
    }
    return false;
  }

  void Process(JsonTree::NodeId n) {
    switch (tree_.kind(n)) {
      case JsonKind::kObject:
        out_.push_back('{');
        stack_.push_back({n, FrameType::kObject, 0, {}});
        return;
      case JsonKind::kArray:
        if (HoldsMarker(n)) {
          internal::AppendCanonicalJson(tree_, n, &out_);
        } else if (tree_.size(n) <= internal::kJsonArrayThreshold) {
          out_.push_back('[');
          stack_.push_back({n, FrameType::kArray, 0, {}});
        } else {
          std::vector<Step> plan = Plan(n);
          out_.push_back('[');
          stack_.push_back({n, FrameType::kPlan, 0, std::move(plan)});
        }
        return;
      default: internal::AppendCanonicalJson(tree_, n, &out_);
    }
  }

  void Advance() {
    Frame& f = stack_.back();
    const JsonTree::NodeId node = f.node;
    const uint32_t i = f.next;
    switch (f.type) {
      case FrameType::kObject: {
        if (i == tree_.size(node)) {
          out_.push_back('}');
          stack_.pop_back();
          return;
        }
        ++f.next;
        if (i > 0) out_.push_back(',');
        std::string_view key = tree_.key(node, i);
        AppendJsonString(key, &out_);
        out_.push_back(':');
        JsonTree::NodeId v = tree_.member_value(node, i);
        if (internal::IsPreservedKey(key)) {
          internal::AppendCanonicalJson(tree_, v, &out_);
        } else {
          Process(v);  // may invalidate f
        }
        return;
      }
      case FrameType::kArray: {
        if (i == tree_.size(node)) {
          out_.push_back(']');
          stack_.pop_back();
          return;
        }
        ++f.next;
        if (i > 0) out_.push_back(',');
        Process(tree_.item(node, i));
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
          EmitMarker(f.plan[i]);
        } else {
          Process(tree_.item(node, f.plan[i].index));
        }
        return;
      }
    }
  }

  std::vector<Step> Plan(JsonTree::NodeId array) {
    internal::ArraySelection sel = internal::SelectArrayElements(tree_, array, query_);
    const uint32_t n = tree_.size(array);
    std::vector<Step> plan;
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
        plan.push_back(std::move(s));
      } else {
        for (uint32_t e = run_start; e < end; ++e) plan.push_back({e, false, 0, {}});
      }
      acc.Reset();
      run_bytes = 0;
    };
    for (uint32_t e = 0; e < n; ++e) {
      if (sel.keep[e]) {
        flush(e);
        plan.push_back({e, false, 0, {}});
        run_start = e + 1;
        continue;
      }
      internal::JsonElementFields(tree_, tree_.item(array, e), &fields);
      acc.Add(fields);
      run_bytes += sel.doc_len[e] + 1ull;
    }
    flush(n);
    return plan;
  }

  void EmitMarker(const Step& s) {
    // Markers are few (one per elided run), so the writer's own buffer costs nothing.
    JsonWriter w;
    w.BeginObject().Key(kElidedKey).Uint(s.index);
    if (!s.summary.empty()) w.Key("__caveman_invariants__").String(s.summary);
    if (!collapsed_ && s.elided_bytes >= internal::kNoteMinElidedBytes) {
      w.Key("__caveman_note__").String(internal::ContractNote("elements"));
    }
    w.EndObject();
    out_.append(w.str());
    collapsed_ = true;
  }

  const JsonTree& tree_;
  std::string_view query_;
  std::string& out_;
  std::vector<Frame> stack_;
  bool collapsed_ = false;
};

// A lossless candidate is only counted when its bytes are at most this many times the lossy
// view's: beyond it, it cannot plausibly count fewer tokens, and counting it would cost as much
// as the elision itself on large dumps (docs/DECISIONS.md, "JSON, lossless first").
constexpr size_t kLosslessByteSlack = 2;
// TOON is tried only up to this nesting depth: its encoder recurses per level (this
// compressor runs on the caller's stack), and deeper documents do not tabulate anyway.
constexpr int kMaxToonDepth = 64;

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
    JsonTree tree;
    if (!tree.Parse(text, body.view_padding())) return TransformOutcome::kDeclined;
    std::optional<std::string> elided;
    {
      std::string out;
      Elider elider(tree, query, &out);
      if (elider.Run()) elided = std::move(out);
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
    if (depth <= kMaxToonDepth && toon_possible) {
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
  JsonTree tree;
  if (!tree.Parse(body, readable_padding)) return std::nullopt;
  std::string out;
  Elider elider(tree, query, &out);
  if (!elider.Run()) return std::nullopt;
  return out;
}

std::unique_ptr<Compressor> NewJsonCompressor() { return std::make_unique<JsonCompressor>(); }

}  // namespace caveman
