#include "compressors/json.h"

#include <vector>

#include "compressors/internal/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/internal/json_select.h"
#include "compressors/internal/json_tree.h"

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
  Elider(const JsonTree& tree, std::string_view query, std::string* out)
      : tree_(tree), query_(query), out_(*out) {}

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
      default:
        internal::AppendCanonicalJson(tree_, n, &out_);
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
        internal::AppendJsonString(key, &out_);
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
    out_.append("{\"__caveman_elided__\":");
    out_.append(std::to_string(s.index));
    if (!s.summary.empty()) {
      out_.append(",\"__caveman_invariants__\":");
      internal::AppendJsonString(s.summary, &out_);
    }
    if (!collapsed_ && s.elided_bytes >= internal::kNoteMinElidedBytes) {
      out_.append(",\"__caveman_note__\":");
      internal::AppendJsonString(internal::ContractNote("elements"), &out_);
    }
    out_.push_back('}');
    collapsed_ = true;
  }

  const JsonTree& tree_;
  std::string_view query_;
  std::string& out_;
  std::vector<Frame> stack_;
  bool collapsed_ = false;
};

// Not an InMemoryCompressor: it needs the Body itself to learn whether the loaded view has
// the spare bytes simdjson may read past the end (saves a copy of the whole input).
class JsonCompressor final : public Compressor {
 public:
  std::string_view content_type() const override { return "json"; }
  bool query_aware() const override { return true; }
  bool metadata_aware() const override { return true; }

  Result<TransformOutcome> Transform(const Body& body, std::string_view query, ByteSink& sink,
                                     TransformMeta* meta) const override {
    CAVEMAN_ASSIGN_OR_RETURN(std::string_view text, body.View());
    std::optional<std::string> out = ElideJson(text, query, body.view_padding());
    if (!out) return TransformOutcome::kDeclined;
    if (meta != nullptr) {
      meta->method = "elision";
      meta->lossless_to_model = false;
    }
    CAVEMAN_RETURN_IF_ERROR(sink.Write(*out));
    return TransformOutcome::kAccepted;
  }
};

}  // namespace

std::optional<std::string> ElideJson(std::string_view body, std::string_view query) {
  return ElideJson(body, query, 0);
}

std::optional<std::string> ElideJson(std::string_view body, std::string_view query,
                                     size_t readable_padding) {
  JsonTree tree;
  if (!tree.Parse(body, readable_padding)) return std::nullopt;
  std::string out;
  Elider elider(tree, query, &out);
  if (!elider.Run()) return std::nullopt;
  return out;
}

std::unique_ptr<Compressor> NewJsonCompressor() { return std::make_unique<JsonCompressor>(); }

}  // namespace caveman
