#include "compressors/config.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <streambuf>
#include <istream>
#include <string>
#include <unordered_set>
#include <vector>

#include <re2/re2.h>

#include "compressors/internal/bm25.h"
#include "compressors/elision.h"
#include "compressors/internal/line_skeleton.h"
#include "compressors/lines.h"
#include "compressors/internal/stanza.h"
#include "compressors/internal/redundancy.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::Trim;

// RE2 `\s`: [\t\n\f\r ].
bool IsReSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
bool IsKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}
bool IsSectionChar(char c) { return IsKeyChar(c) || c == ':' || c == '"' || c == '\'' || c == ' '; }
size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsReSpace(s[i])) ++i;
  return i;
}

// The regexes of §5.10 are simple enough to match by hand; every quantified class is disjoint
// from what follows it, so maximal munch equals RE2's leftmost-first result (checked against
// RE2 in config_test).

// `^\s*\[[A-Za-z0-9_.:"' -]+\]\s*(?:[#;].*)?$`
bool MatchSection(std::string_view s) {
  size_t i = SkipSpace(s, 0);
  if (i >= s.size() || s[i] != '[') return false;
  ++i;
  size_t start = i;
  while (i < s.size() && IsSectionChar(s[i])) ++i;
  if (i == start || i >= s.size() || s[i] != ']') return false;
  i = SkipSpace(s, i + 1);
  if (i == s.size()) return true;
  if (s[i] != '#' && s[i] != ';') return false;
  return s.find('\n', i) == std::string_view::npos;
}

// `^\s*[A-Za-z0-9_.-]+\s*=\s*\S`
bool MatchAssignment(std::string_view s) {
  size_t i = SkipSpace(s, 0);
  size_t start = i;
  while (i < s.size() && IsKeyChar(s[i])) ++i;
  if (i == start) return false;
  i = SkipSpace(s, i);
  if (i >= s.size() || s[i] != '=') return false;
  i = SkipSpace(s, i + 1);
  return i < s.size();
}

// `^\s*(?:-\s*)?[A-Za-z0-9_.-]+\s*:\s*`
bool MatchYamlKey(std::string_view s) {
  auto key_then_colon = [&](size_t i) {
    size_t start = i;
    while (i < s.size() && IsKeyChar(s[i])) ++i;
    if (i == start) return false;
    i = SkipSpace(s, i);
    return i < s.size() && s[i] == ':';
  };
  size_t i = SkipSpace(s, 0);
  if (key_then_colon(i)) return true;
  if (i < s.size() && s[i] == '-') return key_then_colon(SkipSpace(s, i + 1));
  return false;
}

// Whether a line matching the YAML-key regex has a key of hexadecimal digits only, with at least
// one decimal digit (`2000:`, `4e0b:`, `00000010:`): an address, offset or line number, as in
// `objdump -d` (`    2000:\t48 83 ec 08 \tsub $0x8,%rsp`), not a configuration key. Project
// rule (docs/DECISIONS.md, "Listings with numeric keys are not YAML").
bool YamlKeyIsNumber(std::string_view s) {
  size_t i = SkipSpace(s, 0);
  if (i < s.size() && s[i] == '-') i = SkipSpace(s, i + 1);
  const size_t start = i;
  bool digit = false;
  while (i < s.size() && IsKeyChar(s[i])) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (!((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
    ++i;
  }
  return i > start && digit;
}

// `:\s*[|>][0-9+-]*\s*(?:#.*)?$` anywhere in the line.
bool MatchBlockScalar(std::string_view s) {
  if (s.find('\n') != std::string_view::npos) return false;  // never on a split line
  for (size_t colon = s.find(':'); colon != std::string_view::npos; colon = s.find(':', colon + 1)) {
    size_t i = SkipSpace(s, colon + 1);
    if (i >= s.size() || (s[i] != '|' && s[i] != '>')) continue;
    ++i;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '-')) ++i;
    i = SkipSpace(s, i);
    if (i == s.size() || s[i] == '#') return true;
  }
  return false;
}

enum class LineClass : uint8_t { kBlank, kComment, kSection, kAssignment, kYamlKey, kNeutral, kProse };

LineClass Classify(std::string_view line) {
  std::string_view t = Trim(line);
  if (t.empty()) return LineClass::kBlank;
  if (t.front() == '#' || t.front() == ';') return LineClass::kComment;
  if (MatchSection(t)) return LineClass::kSection;
  if (MatchAssignment(t)) return LineClass::kAssignment;
  if (MatchYamlKey(t)) return LineClass::kYamlKey;
  if (t.size() >= 2 && t[0] == '-' && t[1] == ' ') return LineClass::kNeutral;
  return LineClass::kProse;
}

enum class ConfigKind : uint8_t { kNone, kIni, kYaml, kStanzas };

// --- YAML validity (§5.10): every document parses, ≥ 1 document, no duplicate mapping key.

class ViewStreamBuf : public std::streambuf {
 public:
  explicit ViewStreamBuf(std::string_view v) {
    char* p = const_cast<char*>(v.data());
    setg(p, p, p + v.size());
  }
};

struct DuplicateKey {};

// Walks the event stream (aliases are never expanded, so this is linear) and rejects a
// mapping that repeats a key. Scalar keys compare by value; complex keys by a serialization
// of their events.
class DuplicateKeyChecker : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {
    Record("~");
    Completed("\x01null");
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    std::string a = "*" + std::to_string(anchor);
    Record(a);
    Completed(a);
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string& value) override {
    if (!recs_.empty()) Record("S" + std::to_string(value.size()) + ":" + value);
    Completed(value);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Begin(false);
  }
  void OnSequenceEnd() override { End("]"); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Begin(true);
  }
  void OnMapEnd() override { End("}"); }

 private:
  struct Frame {
    bool is_map = false;
    bool expect_key = true;
    std::unordered_set<std::string> keys;
  };
  struct Rec {
    size_t parent_depth;  // stack size when the recorded key container started
    std::string buf;
  };
  void Record(std::string_view token) {
    for (Rec& r : recs_) r.buf.append(token);
  }
  void Begin(bool is_map) {
    const char* open = is_map ? "{" : "[";
    Record(open);
    if (!stack_.empty() && stack_.back().is_map && stack_.back().expect_key) {
      recs_.push_back(Rec{stack_.size(), open});
    }
    stack_.push_back(Frame{is_map, true, {}});
  }
  void End(const char* close) {
    Record(close);
    stack_.pop_back();
    if (!recs_.empty() && recs_.back().parent_depth == stack_.size()) {
      std::string key = std::move(recs_.back().buf);
      recs_.pop_back();
      Completed(key);
      return;
    }
    Completed("");
  }
  void Completed(const std::string& key) {
    if (stack_.empty() || !stack_.back().is_map) return;
    Frame& f = stack_.back();
    if (f.expect_key) {
      if (!f.keys.insert(key).second) throw DuplicateKey{};
      f.expect_key = false;
    } else {
      f.expect_key = true;
    }
  }

  std::vector<Frame> stack_;
  std::vector<Rec> recs_;
};

bool IsValidYaml(std::string_view text) {
  // yaml-cpp reports errors by exception; they stop here (no exceptions across the API).
  try {
    ViewStreamBuf buf(text);
    std::istream in(&buf);
    YAML::Parser parser(in);
    DuplicateKeyChecker checker;
    size_t documents = 0;
    // yaml-cpp 0.7 can report empty documents forever without consuming input (found by
    // fuzz_parsers). Every document after the first needs a `---` or `...` marker, so a real
    // stream has at most size/3 + 1 of them; past that the text is not YAML.
    const size_t max_documents = text.size() / 3 + 1;
    while (parser.HandleNextDocument(checker)) {
      if (++documents > max_documents) return false;
    }
    return documents > 0;
  } catch (const DuplicateKey&) {
    return false;
  } catch (const std::exception&) {
    return false;
  }
}

struct LineCounts {
  size_t sections = 0, assignments = 0, keys = 0, number_keys = 0, prose = 0;
  bool block_scalar = false;
};

// §4.1 split, calling fn(line) per line.
template <class Fn>
void ForEachLine(std::string_view body, Fn&& fn) {
  std::string_view text = body;
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  size_t pos = 0;
  while (true) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      fn(text.substr(pos));
      return;
    }
    fn(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

ConfigKind ClassifyConfig(std::string_view body) {
  if (Trim(body).empty() || !internal::IsValidUtf8(body)) return ConfigKind::kNone;
  LineCounts c;
  ForEachLine(body, [&](std::string_view line) {
    LineClass k = Classify(line);
    switch (k) {
      case LineClass::kBlank:
      case LineClass::kComment: return;
      case LineClass::kSection: ++c.sections; break;
      case LineClass::kAssignment: ++c.assignments; break;
      case LineClass::kYamlKey:
        ++c.keys;
        if (YamlKeyIsNumber(Trim(line))) ++c.number_keys;
        break;
      case LineClass::kNeutral: break;
      case LineClass::kProse: ++c.prose; break;
    }
    if (!c.block_scalar && MatchBlockScalar(Trim(line))) c.block_scalar = true;
  });
  const size_t significant = c.keys + c.assignments + c.sections + c.prose;
  if (significant == 0) return ConfigKind::kNone;
  constexpr size_t kMinSections = 2, kMinAssignments = 4, kMinYamlKeys = 6;
  if (c.sections >= kMinSections && c.assignments >= kMinAssignments && c.prose == 0 &&
      body.find("\"\"\"") == std::string_view::npos && body.find("'''") == std::string_view::npos) {
    return ConfigKind::kIni;
  }
  // A listing whose keys are mostly numbers (addresses, offsets) is not a configuration.
  const bool numbered_listing = c.number_keys * 2 > c.keys;
  if (c.keys >= kMinYamlKeys && c.keys * 2 >= significant && c.prose * 4 <= significant && !c.block_scalar &&
      !numbered_listing && IsValidYaml(body)) {
    return ConfigKind::kYaml;
  }
  return ConfigKind::kNone;
}

// INI dialects with bare boolean keys (`quick`, `skip-external-locking`) and `!include`
// directives (MySQL .cnf): §5.10 counts those lines as prose and rejects the file. The same
// project rule as detection (docs/DECISIONS.md, "INI dialects with bare keys"): classify a copy
// in which, after the first section header, bare keys read `key = true` and `!include…` lines
// are comments; only a TOML/INI verdict is taken. The compressor still works on the original.
std::optional<std::string> NormalizeIniBareKeys(std::string_view body) {
  std::string out;
  bool changed = false;
  size_t sections = 0;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t nl = body.find('\n', start);
    const size_t end = nl == std::string_view::npos ? body.size() : nl;
    std::string_view line = body.substr(start, end - start);
    const bool cr = !line.empty() && line.back() == '\r';
    std::string_view t = Trim(line);
    const bool bare = !t.empty() && std::all_of(t.begin(), t.end(), IsKeyChar);
    if (t.size() > 2 && t.front() == '[' && t.back() == ']') ++sections;
    if (bare && sections > 0) {
      out.append(line.substr(0, line.size() - (cr ? 1 : 0)));
      out.append(" = true");
      if (cr) out.push_back('\r');
      changed = true;
    } else if (internal::StartsWith(t, "!include")) {
      out.append("# ").append(line);
      changed = true;
    } else {
      out.append(line);
    }
    if (nl == std::string_view::npos) break;
    out.push_back('\n');
    start = nl + 1;
  }
  if (!changed || sections < 2) return std::nullopt;
  return out;
}

ConfigKind ClassifyConfigOrIniDialect(std::string_view body) {
  ConfigKind kind = ClassifyConfig(body);
  if (kind != ConfigKind::kNone) return kind;
  // deb822 / RFC 822 stanzas repeat their keys, so they are never valid YAML (issue 16).
  if (internal::LooksLikeStanzas(body)) return ConfigKind::kStanzas;
  std::optional<std::string> ini = NormalizeIniBareKeys(body);
  if (ini && ClassifyConfig(*ini) == ConfigKind::kIni) return ConfigKind::kIni;
  return ConfigKind::kNone;
}

}  // namespace

bool IsConfig(std::string_view body) { return ClassifyConfigOrIniDialect(body) != ConfigKind::kNone; }

namespace {

constexpr size_t kMinLines = 14;
constexpr size_t kHead = 3;
constexpr size_t kTail = 2;
constexpr int64_t kQueryLimit = 16;
constexpr double kQueryThreshold = 0.30;
constexpr size_t kContextFollow = 8;
constexpr std::string_view kMarkerText = "config lines elided (caveman)";

const RE2& AlarmPattern() {
  static const RE2* re = new RE2(
      R"((?i)\b(ERROR|FAIL|FAILED|FATAL|PANIC|EXCEPTION|WARNING|SECURITY|SECRET|TOKEN|PASSWORD|DENIED|REJECTED|ROLLBACK)\b)");
  return *re;
}

// SPACE counts 1, TAB counts 2, up to the first other byte.
size_t Indentation(std::string_view line) {
  size_t indent = 0;
  for (char c : line) {
    if (c == ' ') {
      indent += 1;
    } else if (c == '\t') {
      indent += 2;
    } else {
      break;
    }
  }
  return indent;
}

bool IsBlank(std::string_view line) { return Trim(line).empty(); }

// YAML parent: a key line whose TRIM ends with ':' or starts with "- ".
bool IsYamlParent(std::string_view line) {
  if (!MatchYamlKey(line)) return false;
  std::string_view t = Trim(line);
  return (!t.empty() && t.back() == ':') || internal::StartsWith(t, "- ");
}

bool IsSectionLine(std::string_view line) { return Classify(line) == LineClass::kSection; }

void ExpandYaml(const std::vector<std::string_view>& lines, std::vector<bool>* keep) {
  const size_t n = lines.size();
  const std::vector<bool> before = *keep;
  // Walk up: the nearest parent above with smaller indentation, repeatedly. A stack of parents
  // with strictly increasing indentation answers this for every line in one forward pass: a
  // parent shadows every earlier one that is at least as indented.
  std::vector<std::pair<size_t, size_t>> stack;  // (indentation, line)
  for (size_t i = 0; i < n; ++i) {
    const size_t indent = Indentation(lines[i]);
    if (before[i]) {
      for (const auto& [pi, pl] : stack) {
        if (pi < indent) (*keep)[pl] = true;
      }
    }
    if (IsYamlParent(lines[i])) {
      while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
      stack.emplace_back(indent, i);
    }
  }
  // Then every kept parent keeps up to 8 following non-blank lines of its block.
  for (size_t i = 0; i < n; ++i) {
    if (!(*keep)[i] || !IsYamlParent(lines[i])) continue;
    const size_t indent = Indentation(lines[i]);
    size_t taken = 0;
    for (size_t j = i + 1; j < n && taken < kContextFollow; ++j) {
      if (IsBlank(lines[j])) continue;
      if (Indentation(lines[j]) <= indent) break;
      (*keep)[j] = true;
      ++taken;
    }
  }
}

void ExpandIni(const std::vector<std::string_view>& lines, std::vector<bool>* keep) {
  const size_t n = lines.size();
  const std::vector<bool> before = *keep;
  size_t section = n;  // nearest section line at or above, n if none
  for (size_t i = 0; i < n; ++i) {
    if (IsSectionLine(lines[i])) section = i;
    if (before[i] && section < n) (*keep)[section] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!(*keep)[i] || !IsSectionLine(lines[i])) continue;
    for (size_t j = i + 1; j < n && j <= i + kContextFollow; ++j) {
      if (IsSectionLine(lines[j])) break;
      (*keep)[j] = true;
    }
  }
}

class ConfigCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "config"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): per-line entries and the line skeleton.
  MemoryModel memory_model() const override { return {.per_byte = 0.5, .per_line = 62}; }
  bool query_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta*) const override {
    if (internal::Contains(body, kMarkerText)) return std::nullopt;
    const ConfigKind kind = ClassifyConfigOrIniDialect(body);
    if (kind == ConfigKind::kNone) return std::nullopt;
    internal::SplitResult split = internal::SplitLines(body);
    const std::vector<std::string_view>& lines = split.lines;
    const size_t n = lines.size();
    if (n < kMinLines) return std::nullopt;
    const bool crlf = internal::IsMajorityCrlf(body);
    internal::LinePolicy policy;
    policy.alarm = [](std::string_view line) { return RE2::PartialMatch(line, AlarmPattern()); };
    // The marker is a comment, so the output stays a valid config file.
    policy.marker_text = kMarkerText;
    policy.marker_prefix = "# ";
    policy.query_fill = true;
    policy.query_limit = kQueryLimit;
    policy.query_threshold = kQueryThreshold;
    policy.keep_runs_shorter_than_marker = true;
    internal::LinePasses passes;
    std::optional<std::string> result;
    if (kind == ConfigKind::kStanzas) {
      // docs/DECISIONS.md, "Stanzas": the stanza plan instead of head/tail and the guard; the
      // note goes first.
      internal::StanzaPlan plan = internal::PlanStanzas(lines);
      passes.before_query = [&plan](const std::vector<std::string_view>&, std::vector<bool>* keep) {
        for (size_t i = 0; i < keep->size(); ++i) (*keep)[i] = (*keep)[i] || plan.keep[i];
      };
      result = internal::ElideLines(lines, split.trailing, crlf, query, policy, passes);
      if (result && !plan.note.empty()) {
        result->insert(0, internal::SynthesizedLine(plan.note, crlf) + "\n");
      }
    } else {
      policy.head = kHead;
      policy.tail = kTail;
      policy.guard = internal::LineGuard::kProfiles;
      if (kind == ConfigKind::kYaml) {
        passes.before_query = [](const std::vector<std::string_view>& ls, std::vector<bool>* keep) {
          for (size_t i = 0; i < ls.size(); ++i) {
            if (Indentation(ls[i]) == 0 && MatchYamlKey(ls[i])) (*keep)[i] = true;
          }
        };
        passes.after_guard = ExpandYaml;
      } else {
        passes.after_guard = ExpandIni;
      }
      result = internal::ElideLines(lines, split.trailing, crlf, query, policy, passes);
    }
    if (!result || result->size() >= body.size()) return std::nullopt;
    if (kind == ConfigKind::kYaml && !IsValidYaml(*result)) return std::nullopt;
    return result;
  }
};

}  // namespace

std::unique_ptr<Compressor> NewConfigCompressor() { return std::make_unique<ConfigCompressor>(); }

}  // namespace caveman
