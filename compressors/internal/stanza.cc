#include "compressors/internal/stanza.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "compressors/elision.h"
#include "compressors/lines.h"
#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

constexpr size_t kMinFieldLines = 8;
constexpr size_t kMinStanzas = 2;
constexpr size_t kMaxOtherPerTwenty = 1;   // ≤ 1 line in 20 neither field, continuation nor comment
constexpr size_t kMaxNoteFields = 24;      // constant fields listed in the note
constexpr size_t kMaxNoteValueBytes = 80;  // a listed value is cut here

enum class Kind : uint8_t { kBlank, kComment, kStatus, kField, kContinuation, kOther };

struct Line {
  Kind kind = Kind::kOther;
  size_t stanza = 0;       // index of the stanza the line belongs to
  std::string_view name;   // field name (kField)
  std::string_view value;  // TRIMmed value of the field's first line (kField)
};

std::string_view StripCr(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// `Name: value` or `Name:` (deb822 field names: no space, no colon; ours also start alphanumeric).
bool ParseField(std::string_view s, std::string_view* name, std::string_view* value) {
  size_t i = 0;
  while (i < s.size() && IsNameChar(s[i])) ++i;
  if (i == 0 || i >= s.size() || s[i] != ':' || !IsNameChar(s[0]) || s[0] == '-' || s[0] == '.') {
    return false;
  }
  if (i + 1 < s.size() && s[i + 1] != ' ' && s[i + 1] != '\t') return false;  // "http://x"
  *name = s.substr(0, i);
  *value = Trim(s.substr(i + 1));
  return true;
}

// "HTTP/1.1 200 OK", "HTTP/2 301".
bool IsHttpStatus(std::string_view s) {
  if (!StartsWith(s, "HTTP/")) return false;
  size_t sp = s.find(' ');
  return sp != std::string_view::npos && sp + 4 <= s.size() && std::isdigit(static_cast<unsigned char>(s[sp + 1])) &&
         std::isdigit(static_cast<unsigned char>(s[sp + 2])) && std::isdigit(static_cast<unsigned char>(s[sp + 3]));
}

std::vector<Line> Classify(const std::vector<std::string_view>& lines) {
  std::vector<Line> out(lines.size());
  size_t stanza = 0;
  bool in_stanza = false;    // a non-blank line since the last blank one
  bool after_field = false;  // a continuation may follow
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view s = StripCr(lines[i]);
    Line& l = out[i];
    if (Trim(s).empty()) {
      l.kind = Kind::kBlank;
      if (in_stanza) ++stanza;
      in_stanza = after_field = false;
      l.stanza = stanza;
      continue;
    }
    l.stanza = stanza;
    if (s[0] == ' ' || s[0] == '\t') {
      l.kind = after_field ? Kind::kContinuation : Kind::kOther;
    } else if (s[0] == '#') {
      l.kind = Kind::kComment;
    } else if (!in_stanza && IsHttpStatus(s)) {
      l.kind = Kind::kStatus;
    } else if (ParseField(s, &l.name, &l.value)) {
      l.kind = Kind::kField;
      after_field = true;
    } else {
      l.kind = Kind::kOther;
      after_field = false;
    }
    in_stanza = true;
  }
  return out;
}

std::string AsciiLowerCopy(std::string_view s) {
  std::string r(s);
  for (char& c : r) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return r;
}

bool IsSizeField(const std::string& lower) { return lower == "size" || lower == "installed-size"; }

bool IsHashField(const std::string& lower) {
  for (std::string_view h : {"md5", "sha1", "sha256", "sha512", "checksum", "hash"}) {
    if (lower.find(h) != std::string::npos) return true;
  }
  return false;
}

std::optional<uint64_t> ParseUint(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

bool LooksLikeStanzas(std::string_view body) {
  if (!IsValidUtf8(body)) return false;
  const std::vector<Line> cls = Classify(SplitLines(body).lines);
  size_t fields = 0, other = 0, nonblank = 0;
  std::map<std::string, std::set<size_t>> stanzas_of;  // field name → stanzas
  std::set<size_t> stanzas;
  for (const Line& l : cls) {
    if (l.kind == Kind::kBlank) continue;
    ++nonblank;
    if (l.kind == Kind::kOther) ++other;
    if (l.kind != Kind::kField) continue;
    ++fields;
    stanzas.insert(l.stanza);
    stanzas_of[AsciiLowerCopy(l.name)].insert(l.stanza);
  }
  if (fields < kMinFieldLines || stanzas.size() < kMinStanzas) return false;
  if (other * 20 > nonblank * kMaxOtherPerTwenty) return false;
  for (const auto& [name, in] : stanzas_of) {
    if (in.size() >= 2) return true;
  }
  return false;
}

StanzaPlan PlanStanzas(const std::vector<std::string_view>& lines) {
  const std::vector<Line> cls = Classify(lines);
  StanzaPlan plan;
  plan.keep.assign(lines.size(), false);
  // Per field name (case-insensitive, deb822): the stanzas it appears in, its distinct
  // first-line values, whether any occurrence continues on further lines.
  struct FieldStats {
    std::string display;  // first spelling seen
    std::set<size_t> stanzas;
    std::set<std::string_view> values;
    bool multi_line = false;
    uint64_t min = std::numeric_limits<uint64_t>::max(), max = 0;
    bool numeric = true;
  };
  std::map<std::string, FieldStats> stats;
  std::vector<std::string> lower(lines.size());
  std::set<size_t> all_stanzas;
  size_t last_field = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = cls[i];
    if (l.kind == Kind::kContinuation && last_field < lines.size()) {
      stats[lower[last_field]].multi_line = true;
      continue;
    }
    if (l.kind != Kind::kField) continue;
    last_field = i;
    lower[i] = AsciiLowerCopy(l.name);
    FieldStats& f = stats[lower[i]];
    if (f.display.empty()) f.display = std::string(l.name);
    f.stanzas.insert(l.stanza);
    f.values.insert(l.value);
    all_stanzas.insert(l.stanza);
    if (auto v = ParseUint(l.value)) {
      f.min = std::min(f.min, *v);
      f.max = std::max(f.max, *v);
    } else {
      f.numeric = false;
    }
  }
  plan.stanzas = all_stanzas.size();
  auto constant = [&](const FieldStats& f) { return f.stanzas.size() >= 2 && f.values.size() == 1 && !f.multi_line; };
  size_t current = lines.size();  // stanza whose first field has been seen
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = cls[i];
    switch (l.kind) {
      case Kind::kBlank:
      case Kind::kComment:
      case Kind::kStatus:
      case Kind::kOther: plan.keep[i] = true; break;
      case Kind::kContinuation: break;
      case Kind::kField: {
        const bool identity = l.stanza != current;
        current = l.stanza;
        const FieldStats& f = stats[lower[i]];
        plan.keep[i] = identity || (!IsHashField(lower[i]) && !IsSizeField(lower[i]) && !constant(f));
        break;
      }
    }
  }
  // The note: constant values once, then what was elided wholesale.
  std::string same, elided;
  size_t listed = 0;
  for (const auto& [name, f] : stats) {
    if (IsHashField(name)) continue;
    if (IsSizeField(name)) {
      if (f.numeric && f.min <= f.max && f.stanzas.size() >= 2) {
        if (!elided.empty()) elided += ", ";
        elided += f.display + " " + std::to_string(f.min) + ".." + std::to_string(f.max);
      }
      continue;
    }
    if (!constant(f) || listed >= kMaxNoteFields) continue;
    ++listed;
    std::string v(*f.values.begin());
    if (v.size() > kMaxNoteValueBytes) {
      size_t cut = kMaxNoteValueBytes;
      while (cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80) --cut;  // code point boundary
      v = v.substr(0, cut) + "\xE2\x80\xA6";
    }
    if (!same.empty()) same += "; ";
    same += f.display + ": " + v;
    if (f.stanzas.size() < plan.stanzas) {
      same += " (" + std::to_string(f.stanzas.size()) + " of " + std::to_string(plan.stanzas) + ")";
    }
  }
  if (!same.empty() || !elided.empty()) {
    plan.note = std::string(kStanzaNotePrefix) + std::to_string(plan.stanzas) + std::string(kStanzaNoteUnits);
    if (!same.empty()) plan.note += "; same in each: " + same;
    if (!elided.empty()) plan.note += "; ranges: " + elided;
  }
  return plan;
}

}  // namespace caveman::internal
