#include "compressors/a11y.h"

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <unicode/uchar.h>

#include "compressors/cj.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::JsonMember;
using internal::JsonValue;
using Kind = internal::JsonValue::Kind;

constexpr std::string_view kStateNames[] = {"disabled", "checked", "expanded", "selected", "focused", "editable"};
enum StateIndex { kDisabled, kChecked, kExpanded, kSelected, kFocused, kEditable, kNumStates };

struct Node {
  std::string node_id;
  bool ignored = false;
  std::string role, name, value;  // compact()
  std::optional<bool> states[kNumStates];
  bool focusable_or_clickable = false;
  std::vector<std::string> child_ids;
  int64_t backend_id = 0;
  std::string frame_id;
};

struct Record {
  int depth;
  std::string role, name, value;
  std::optional<bool> states[kNumStates];
  std::string uid;
  const Node* node;
};

std::string JoinFields(std::string_view s) {
  std::string out;
  for (std::string_view f : internal::Fields(s)) {
    if (!out.empty()) out += ' ';
    out += f;
  }
  return out;
}

std::optional<double> ParseDouble(std::string_view literal) {
  double d = 0;
  auto [p, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), d);
  if (ec != std::errc() || p != literal.data() + literal.size()) return std::nullopt;
  return d;
}

// compact(v) of §5.14.
std::string Compact(const JsonValue& v) {
  switch (v.kind) {
    case Kind::kNull: return "";
    case Kind::kString: return JoinFields(v.text);
    case Kind::kBool: return v.boolean ? "true" : "false";
    case Kind::kNumber: {
      std::optional<double> d = ParseDouble(v.text);
      if (!d) return v.text;
      char buf[512];
      auto [p, ec] = std::to_chars(buf, buf + sizeof buf, *d, std::chars_format::fixed);
      if (ec != std::errc()) return v.text;
      return std::string(buf, p);
    }
    default: return JoinFields(internal::Cj(v));
  }
}

// A member that is present and not null, or nullptr (JSON null reads as "not given").
const JsonValue* Present(const JsonValue& obj, std::string_view key) {
  const JsonValue* v = obj.Find(key);
  return (v == nullptr || v->kind == Kind::kNull) ? nullptr : v;
}

// {value: any} wrapper; false on wrong type.
bool WrappedValue(const JsonValue& obj, std::string_view key, std::string* out, const JsonValue** raw = nullptr) {
  out->clear();
  const JsonValue* w = Present(obj, key);
  if (w == nullptr) return true;
  if (w->kind != Kind::kObject) return false;
  const JsonValue* v = w->Find("value");
  if (raw) *raw = v;
  if (v != nullptr) *out = Compact(*v);
  return true;
}

bool ParseInteger(const JsonValue& v, int64_t* out) {
  if (v.kind != Kind::kNumber) return false;
  auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), *out);
  return ec == std::errc() && p == v.text.data() + v.text.size();
}

bool TruthyString(std::string_view s) {
  std::string l = internal::Lower(internal::Trim(s));
  return l == "true" || l == "1" || l == "yes";
}

bool Truthy(const JsonValue* v) {
  if (v == nullptr) return false;
  switch (v->kind) {
    case Kind::kBool: return v->boolean;
    case Kind::kString: return TruthyString(v->text);
    case Kind::kNumber: {
      std::optional<double> d = ParseDouble(v->text);
      return d && *d != 0;
    }
    default: return false;
  }
}

std::optional<Node> ParseNode(const JsonValue& j) {
  if (j.kind != Kind::kObject) return std::nullopt;
  Node n;
  const JsonValue* id = Present(j, "nodeId");
  if (id == nullptr || id->kind != Kind::kString || id->text.empty()) return std::nullopt;
  n.node_id = id->text;
  if (const JsonValue* ig = Present(j, "ignored")) {
    if (ig->kind != Kind::kBool) return std::nullopt;
    n.ignored = ig->boolean;
  }
  if (!WrappedValue(j, "role", &n.role) || !WrappedValue(j, "name", &n.name) || !WrappedValue(j, "value", &n.value)) {
    return std::nullopt;
  }
  if (const JsonValue* props = Present(j, "properties")) {
    if (props->kind != Kind::kArray) return std::nullopt;
    for (const JsonValue& p : props->items) {
      if (p.kind == Kind::kNull) continue;
      if (p.kind != Kind::kObject) return std::nullopt;
      std::string name;
      if (const JsonValue* pn = Present(p, "name")) {
        if (pn->kind != Kind::kString) return std::nullopt;
        name = pn->text;
      }
      const JsonValue* pv = nullptr;
      if (const JsonValue* w = Present(p, "value")) {
        if (w->kind != Kind::kObject) return std::nullopt;
        pv = w->Find("value");
      }
      if (name == "focusable" || name == "clickable") {
        n.focusable_or_clickable = n.focusable_or_clickable || Truthy(pv);
        continue;
      }
      int idx = -1;
      for (int k = 0; k < kNumStates; ++k) {
        if (name == kStateNames[k]) idx = k;
      }
      if (idx < 0 || pv == nullptr) continue;
      std::optional<bool> st;
      if (pv->kind == Kind::kBool) {
        st = pv->boolean;
      } else if (pv->kind == Kind::kString) {
        std::string l = internal::Lower(internal::Trim(pv->text));
        if (l == "true" || l == "1" || l == "yes") {
          st = true;
        } else if (l == "false" || l == "0" || l == "no" || l.empty()) {
          st = false;
        } else if (l == "mixed" && idx == kChecked) {
          st = true;
        } else if ((l == "plaintext" || l == "richtext") && idx == kEditable) {
          st = true;
        }
      } else if (pv->kind == Kind::kNumber && idx != kEditable) {
        std::optional<double> d = ParseDouble(pv->text);
        st = d && *d != 0;
      }
      if (st) n.states[idx] = st;
    }
  }
  if (const JsonValue* kids = Present(j, "childIds")) {
    if (kids->kind != Kind::kArray) return std::nullopt;
    for (const JsonValue& k : kids->items) {
      if (k.kind != Kind::kString) return std::nullopt;
      n.child_ids.push_back(k.text);
    }
  }
  for (std::string_view key : {"backendDOMNodeId", "backendDOMNodeID"}) {
    if (n.backend_id != 0) break;
    if (const JsonValue* b = Present(j, key)) {
      if (!ParseInteger(*b, &n.backend_id)) return std::nullopt;
    }
  }
  for (std::string_view key : {"frameId", "frameID"}) {
    if (!n.frame_id.empty()) break;
    if (const JsonValue* f = Present(j, key)) {
      if (f->kind != Kind::kString) return std::nullopt;
      n.frame_id = f->text;
    }
  }
  return n;
}

bool RoleIn(std::string_view lower_role, std::initializer_list<std::string_view> set) {
  for (std::string_view s : set) {
    if (lower_role == s) return true;
  }
  return false;
}

std::string Base36(int64_t v) {
  std::string out;
  uint64_t u = static_cast<uint64_t>(v);
  do {
    out.insert(out.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[u % 36]);
    u /= 36;
  } while (u > 0);
  return out;
}

class Curator {
 public:
  explicit Curator(const std::vector<Node>& nodes) : nodes_(nodes) {
    for (size_t i = 0; i < nodes.size(); ++i) by_id_[nodes[i].node_id] = i;
  }

  std::vector<Record> Run() {
    std::unordered_set<std::string_view> listed;
    for (const Node& n : nodes_) {
      for (const std::string& c : n.child_ids) listed.insert(c);
    }
    visited_.assign(nodes_.size(), false);
    bool any_root = false;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (listed.count(nodes_[i].node_id) == 0) {
        any_root = true;
        Walk(i, 0);
      }
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!any_root || !visited_[i]) Walk(i, 0);
    }
    RemoveDuplicateStaticText();
    return std::move(records_);
  }

 private:
  // Depth-first, pre-order, children in childIds order; iterative so that a long chain of
  // nodes cannot exhaust the stack. Marking on pop gives exactly the recursive visit order.
  void Walk(size_t root, int root_depth) {
    std::vector<std::pair<size_t, int>> stack = {{root, root_depth}};
    while (!stack.empty()) {
      auto [i, depth] = stack.back();
      stack.pop_back();
      if (visited_[i]) continue;
      visited_[i] = true;
      int child_depth = Visit(nodes_[i], depth);
      const std::vector<std::string>& kids = nodes_[i].child_ids;
      for (size_t k = kids.size(); k-- > 0;) {
        auto it = by_id_.find(kids[k]);
        if (it != by_id_.end() && !visited_[it->second]) {
          stack.push_back({it->second, child_depth});
        }
      }
    }
  }

  // Appends n's record unless it is ignored or dropped; returns its children's depth.
  int Visit(const Node& n, int depth) {
    if (n.ignored) return depth;
    std::string lr = internal::Lower(n.role);
    Record r{depth, n.role, n.name, n.value, {}, "", &n};
    for (int k = 0; k < kNumStates; ++k) r.states[k] = n.states[k];
    if (n.backend_id > 0 && lr != "rootwebarea" && lr != "webarea" &&
        (RoleIn(lr, {"button", "checkbox", "combobox", "link", "menuitem", "menuitemcheckbox", "menuitemradio",
                     "option", "radio", "searchbox", "slider", "spinbutton", "switch", "tab", "textbox", "treeitem"}) ||
         n.focusable_or_clickable ||
         !RoleIn(lr, {"main",           "navigation",    "region",      "group",      "generic",       "none",
                      "presentational", "heading",       "paragraph",   "statictext", "inlinetextbox", "labeltext",
                      "list",           "listitem",      "table",       "row",        "cell",          "rowheader",
                      "columnheader",   "grid",          "tree",        "directory",  "separator",     "toolbar",
                      "banner",         "complementary", "contentinfo", "article",    "figure",        "img",
                      "image",          "form",          "status",      "alert",      "log",           "timer",
                      "tooltip",        "document"}))) {
      std::string base = "u" + Base36(n.backend_id);
      int uses = ++uid_uses_[base];
      r.uid = uses == 1 ? base : base + "_" + std::to_string(uses);
    }
    int present = 0;
    for (int k = 0; k < kNumStates; ++k) present += r.states[k].has_value();
    bool only_editable_true = present == 1 && r.states[kEditable] == std::optional<bool>(true);
    bool drop = lr == "inlinetextbox" || (lr == "labeltext" && n.name.empty() && n.value.empty() && present == 0) ||
                (RoleIn(lr, {"generic", "presentational", "none"}) && n.name.empty() && n.value.empty() &&
                 (present == 0 || only_editable_true) && !n.focusable_or_clickable);
    if (drop) return depth;
    records_.push_back(std::move(r));
    return depth + 1;
  }

  void RemoveDuplicateStaticText() {
    std::unordered_set<std::string> texts;
    for (const Record& r : records_) {
      std::string lr = internal::Lower(r.role);
      if (lr == "statictext" || lr == "inlinetextbox") continue;
      for (const std::string* s : {&r.name, &r.value}) {
        std::string t = internal::Lower(internal::Trim(*s));
        if (!t.empty()) texts.insert(std::move(t));
      }
    }
    std::vector<Record> kept;
    for (Record& r : records_) {
      if (internal::Lower(r.role) == "statictext") {
        std::string t = internal::Lower(internal::Trim(r.name));
        if (!t.empty() && texts.count(t)) continue;
        for (auto& s : r.states) s.reset();
      }
      kept.push_back(std::move(r));
    }
    records_ = std::move(kept);
  }

  const std::vector<Node>& nodes_;
  std::unordered_map<std::string_view, size_t> by_id_;
  std::vector<bool> visited_;
  std::vector<Record> records_;
  std::map<std::string, int> uid_uses_;
};

std::vector<std::string> StateLabels(const Record& r) {
  std::vector<std::string> l;
  if (r.states[kDisabled] == std::optional<bool>(true)) l.push_back("disabled");
  if (r.states[kChecked]) l.push_back(*r.states[kChecked] ? "checked" : "unchecked");
  if (r.states[kExpanded]) l.push_back(*r.states[kExpanded] ? "expanded" : "collapsed");
  if (r.states[kSelected] == std::optional<bool>(true)) l.push_back("selected");
  if (r.states[kFocused] == std::optional<bool>(true)) l.push_back("focused");
  if (r.states[kEditable] == std::optional<bool>(true)) l.push_back("editable");
  return l;
}

// Index of the nearest earlier record enclosing records[i] at depth records[i].depth - k.
std::vector<size_t> Ancestors(const std::vector<Record>& recs, size_t i) {
  std::vector<size_t> out;
  int want = recs[i].depth - 1;
  for (size_t j = i; j-- > 0 && want >= 0;) {
    if (recs[j].depth == want) {
      out.push_back(j);
      --want;
    }
  }
  return out;
}

std::vector<Record> FocusOnQuery(std::vector<Record> recs, std::string_view query) {
  std::vector<std::string> terms;
  {
    std::string q = internal::Lower(query);
    std::string cur;
    size_t i = 0;
    while (i < q.size()) {
      size_t st = i;
      uint32_t cp = internal::DecodeUtf8(q, &i);
      if (internal::IsLetter(cp) || internal::IsNumberChar(cp)) {
        cur.append(q, st, i - st);
      } else if (!cur.empty()) {
        terms.push_back(std::move(cur));
        cur.clear();
      }
    }
    if (!cur.empty()) terms.push_back(std::move(cur));
  }
  if (terms.empty()) return recs;
  std::vector<int> score(recs.size(), 0);
  int max = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    std::string hay = recs[i].role + " " + recs[i].name + " " + recs[i].value + " ";
    std::vector<std::string> labels = StateLabels(recs[i]);
    for (size_t k = 0; k < labels.size(); ++k) hay += (k ? " " : "") + labels[k];
    hay = internal::Lower(hay);
    for (const std::string& t : terms) score[i] += hay.find(t) != std::string::npos;
    max = std::max(max, score[i]);
  }
  if (max == 0) {
    Record note{1, "note", "no accessible match", "", {}, "", nullptr};
    std::vector<Record> out;
    out.push_back(std::move(recs[0]));
    out.push_back(std::move(note));
    return out;
  }
  std::vector<bool> kept(recs.size(), false);
  int min_score = max == static_cast<int>(terms.size()) ? max : 1;
  int matches = 0;
  for (int wanted = max; wanted >= min_score; --wanted) {
    for (size_t i = 0; i < recs.size() && matches < 12; ++i) {
      if (score[i] != wanted) continue;
      kept[i] = true;
      ++matches;
      for (size_t a : Ancestors(recs, i)) kept[a] = true;
    }
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    if (!kept[i]) continue;
    std::optional<size_t> group;
    if (recs[i].role == "row" || recs[i].role == "listitem") {
      group = i;
    } else {
      for (size_t a : Ancestors(recs, i)) {
        if (recs[a].role == "row" || recs[a].role == "listitem") {
          group = a;
          break;
        }
      }
    }
    if (!group) continue;
    kept[*group] = true;
    for (size_t j = *group + 1; j < recs.size() && recs[j].depth > recs[*group].depth; ++j) {
      kept[j] = true;
    }
  }
  std::vector<Record> out;
  std::vector<int> open;  // original depths of kept records still enclosing the next one
  for (size_t i = 0; i < recs.size(); ++i) {
    if (!kept[i]) continue;
    while (!open.empty() && open.back() >= recs[i].depth) open.pop_back();
    int new_depth = static_cast<int>(open.size());
    open.push_back(recs[i].depth);
    recs[i].depth = new_depth;
    out.push_back(std::move(recs[i]));
  }
  return out;
}

std::string Render(const std::vector<Record>& recs) {
  std::string out;
  for (size_t i = 0; i < recs.size(); ++i) {
    const Record& r = recs[i];
    if (i) out += '\n';
    out.append(static_cast<size_t>(r.depth) * 2, ' ');
    if (!r.uid.empty()) out += "[" + r.uid + "] ";
    std::string role = internal::Lower(r.role);
    if (role == "rootwebarea" || role == "webarea") {
      role = "page";
    } else if (role == "statictext") {
      role = "text";
    } else if (role == "labeltext") {
      role = "label";
    }
    out += role;
    if (!r.name.empty()) out += " " + A11yQuote(r.name);
    if (!r.value.empty() && r.value != r.name) out += " = " + A11yQuote(r.value);
    std::vector<std::string> labels = StateLabels(r);
    if (!labels.empty()) {
      out += " {";
      for (size_t k = 0; k < labels.size(); ++k) out += (k ? "," : "") + labels[k];
      out += "}";
    }
  }
  return out;
}

std::string RecoveryMetadata(const std::vector<Record>& recs) {
  JsonValue uids = internal::JsonObject();
  for (const Record& r : recs) {
    if (r.uid.empty() || r.node == nullptr) continue;
    JsonValue entry = internal::JsonObject();
    JsonValue backend;
    backend.kind = Kind::kNumber;
    backend.text = std::to_string(r.node->backend_id);
    entry.members.push_back({"backendDOMNodeId", std::move(backend), 0});
    if (!r.node->frame_id.empty()) {
      entry.members.push_back({"frameId", internal::JsonString(r.node->frame_id), 0});
    }
    if (!r.node->node_id.empty()) {
      entry.members.push_back({"nodeId", internal::JsonString(r.node->node_id), 0});
    }
    uids.members.push_back({r.uid, std::move(entry), 0});
  }
  JsonValue root = internal::JsonObject();
  root.members.push_back({"uids", std::move(uids), 0});
  return internal::Cj(root);
}

class A11yCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "a11y"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): a JSON/YAML tree of the snapshot: ~4.5 B per pretty-printed byte, doubled for minified input.
  MemoryModel memory_model() const override { return {.per_byte = 9, .per_line = 0}; }
  bool metadata_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta* meta) const override {
    std::optional<JsonValue> doc = internal::ParseJson(body);
    if (!doc) return std::nullopt;
    const JsonValue* list = &*doc;
    if (doc->kind == Kind::kObject) list = doc->Find("nodes");
    if (list == nullptr || list->kind != Kind::kArray || list->items.empty()) return std::nullopt;
    std::vector<Node> nodes;
    std::unordered_set<std::string_view> ids;
    bool any_visible = false;
    nodes.reserve(list->items.size());
    for (const JsonValue& j : list->items) {
      std::optional<Node> n = ParseNode(j);
      if (!n) return std::nullopt;
      if (!n->ignored) {
        if (n->role.empty()) return std::nullopt;
        any_visible = true;
      }
      nodes.push_back(std::move(*n));
    }
    for (const Node& n : nodes) {
      if (!ids.insert(n.node_id).second) return std::nullopt;
    }
    if (!any_visible) return std::nullopt;
    std::vector<Record> recs = Curator(nodes).Run();
    if (recs.empty()) return std::nullopt;
    if (!query.empty()) recs = FocusOnQuery(std::move(recs), query);
    // Indentation grows with depth, so a pathologically deep tree could render to far more
    // than the input; such an output could never pass the size gate, so decline early.
    uint64_t indent_bytes = 0;
    for (const Record& r : recs) indent_bytes += 2 * static_cast<uint64_t>(r.depth);
    if (indent_bytes > 4 * static_cast<uint64_t>(body.size())) return std::nullopt;
    meta->method = "a11y";
    meta->recovery_metadata = RecoveryMetadata(recs);
    return Render(recs);
  }
};

bool IsPrintable(uint32_t cp) {
  if (cp == 0x20) return true;
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
    case U_CONNECTOR_PUNCTUATION:
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_MATH_SYMBOL:
    case U_CURRENCY_SYMBOL:
    case U_MODIFIER_SYMBOL:
    case U_OTHER_SYMBOL: return true;
    default: return false;
  }
}

}  // namespace

std::string A11yQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    uint32_t cp = internal::DecodeUtf8(s, &i);
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case 0x07: out += "\\a"; continue;
      case 0x08: out += "\\b"; continue;
      case 0x0C: out += "\\f"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case 0x0B: out += "\\v"; continue;
      default: break;
    }
    if (cp < 0x20 || cp == 0x7F) {
      out += "\\x";
      out += kHex[cp >> 4];
      out += kHex[cp & 0xF];
    } else if (IsPrintable(cp)) {
      out.append(s, start, i - start);
    } else {
      int digits = cp < 0x10000 ? 4 : 8;
      out += cp < 0x10000 ? "\\u" : "\\U";
      for (int d = digits - 1; d >= 0; --d) out += kHex[(cp >> (4 * d)) & 0xF];
    }
  }
  out += '"';
  return out;
}

std::unique_ptr<Compressor> NewA11yCompressor() { return std::make_unique<A11yCompressor>(); }

}  // namespace caveman
