#include "compressors/config.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <streambuf>
#include <istream>
#include <string>
#include <unordered_set>
#include <vector>

#include "compressors/internal/text_util.h"

namespace caveman {
namespace {

using internal::Trim;

// RE2 `\s`: [\t\n\f\r ].
bool IsReSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
bool IsKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}
bool IsSectionChar(char c) {
  return IsKeyChar(c) || c == ':' || c == '"' || c == '\'' || c == ' ';
}
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

enum class ConfigKind : uint8_t { kNone, kIni, kYaml };

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
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    if (!recs_.empty()) Record("S" + std::to_string(value.size()) + ":" + value);
    Completed(value);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Begin(false);
  }
  void OnSequenceEnd() override { End("]"); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
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
    while (parser.HandleNextDocument(checker)) ++documents;
    return documents > 0;
  } catch (const DuplicateKey&) {
    return false;
  } catch (const std::exception&) {
    return false;
  }
}

struct LineCounts {
  size_t sections = 0, assignments = 0, keys = 0, prose = 0;
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
      case LineClass::kComment:
        return;
      case LineClass::kSection: ++c.sections; break;
      case LineClass::kAssignment: ++c.assignments; break;
      case LineClass::kYamlKey: ++c.keys; break;
      case LineClass::kNeutral: break;
      case LineClass::kProse: ++c.prose; break;
    }
    if (!c.block_scalar && MatchBlockScalar(Trim(line))) c.block_scalar = true;
  });
  const size_t significant = c.keys + c.assignments + c.sections + c.prose;
  if (significant == 0) return ConfigKind::kNone;
  constexpr size_t kMinSections = 2, kMinAssignments = 4, kMinYamlKeys = 6;
  if (c.sections >= kMinSections && c.assignments >= kMinAssignments && c.prose == 0 &&
      body.find("\"\"\"") == std::string_view::npos &&
      body.find("'''") == std::string_view::npos) {
    return ConfigKind::kIni;
  }
  if (c.keys >= kMinYamlKeys && c.keys * 2 >= significant && c.prose * 4 <= significant &&
      !c.block_scalar && IsValidYaml(body)) {
    return ConfigKind::kYaml;
  }
  return ConfigKind::kNone;
}

}  // namespace

bool IsConfig(std::string_view body) { return ClassifyConfig(body) != ConfigKind::kNone; }

}  // namespace caveman
