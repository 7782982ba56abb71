#include "compressors/test_report.h"

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <pugixml.hpp>
#include <simdjson.h>

#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::Contains;
using internal::StartsWith;
using internal::Trim;

struct Failure {
  bool is_error = false;  // ERROR: rather than FAILED:
  std::string name;
  std::string message;
  std::vector<std::string> stack;
};

// Skip reasons (project decision, issue 16): every skipped test's reason, grouped by its
// normalised text in first-appearance order; the rendering orders groups by count.
struct SkipReason {
  std::string reason;  // "" = none given
  uint64_t count = 0;
};

struct Report {
  uint64_t passed = 0, failed = 0, errors = 0, skipped = 0;
  double duration = 0;
  std::vector<Failure> failures;
  std::vector<SkipReason> skip_reasons;
  std::unordered_map<std::string, size_t> skip_index;
  uint64_t total() const { return passed + failed + errors + skipped; }
  void AddSkip(std::string reason) {
    auto [it, inserted] = skip_index.emplace(reason, skip_reasons.size());
    if (inserted) skip_reasons.push_back(SkipReason{std::move(reason), 0});
    ++skip_reasons[it->second].count;
  }
};

std::vector<std::string_view> SplitLf(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
}

// trimStack of §5.3.
std::vector<std::string> TrimStack(const std::vector<std::string_view>& lines) {
  static constexpr std::string_view kExts[] = {".py:", ".java:", ".js:", ".ts:", ".go:", ".rb:"};
  std::vector<std::string> kept;
  for (std::string_view raw : lines) {
    std::string_view l = Trim(raw);
    if (l.empty()) continue;
    bool keep = StartsWith(l, "at ");
    for (std::string_view e : kExts) keep = keep || Contains(l, e);
    if (keep) kept.emplace_back(l);
  }
  if (kept.size() < 8) return kept;
  std::vector<std::string> out(kept.begin(), kept.begin() + 3);
  out.push_back("... (" + std::to_string(kept.size() - 5) + " frames omitted)");
  out.push_back(kept[kept.size() - 2]);
  out.push_back(kept[kept.size() - 1]);
  return out;
}

// A skip reason as shown: a first line that is only a source location (GoogleTest writes
// `file.cc:21` before the message) is dropped, the remaining lines are TRIMmed and joined by
// one space, whitespace runs collapse, and the text is cut to kMaxSkipReasonBytes (at a code
// point boundary, with "…").
constexpr size_t kMaxSkipReasonBytes = 120;

bool IsSourceLocationLine(std::string_view l) {
  size_t colon = l.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= l.size()) return false;
  for (size_t i = colon + 1; i < l.size(); ++i) {
    if (l[i] < '0' || l[i] > '9') return false;
  }
  for (size_t i = 0; i < colon; ++i) {
    if (l[i] == ' ' || l[i] == '\t') return false;
  }
  return true;
}

std::string NormalizeSkipReason(std::string_view message) {
  std::vector<std::string_view> lines = SplitLf(message);
  size_t first = 0;
  while (first < lines.size() && Trim(lines[first]).empty()) ++first;
  if (first < lines.size() && IsSourceLocationLine(Trim(lines[first]))) ++first;
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    std::string_view l = Trim(lines[i]);
    for (char c : l) {
      bool space = c == ' ' || c == '\t' || c == '\r';
      if (space) {
        if (!out.empty() && out.back() != ' ') out.push_back(' ');
      } else {
        out.push_back(c);
      }
    }
    if (!out.empty() && out.back() != ' ') out.push_back(' ');
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > kMaxSkipReasonBytes) {
    size_t cut = kMaxSkipReasonBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "\xE2\x80\xA6";
  }
  return out;
}

// pytest-json-report stores a skip as the repr of a (path, line, "Skipped: reason") tuple.
std::string PytestSkipReason(std::string_view longrepr) {
  std::string_view t = Trim(longrepr);
  if (t.size() >= 2 && t.front() == '(' && t.back() == ')') {
    std::string_view inner = Trim(t.substr(1, t.size() - 2));
    if (!inner.empty() && (inner.back() == '\'' || inner.back() == '"')) {
      char q = inner.back();
      size_t open = inner.rfind(q, inner.size() - 2);
      if (open != std::string_view::npos) t = inner.substr(open + 1, inner.size() - open - 2);
    }
  }
  if (StartsWith(t, "Skipped: ")) t.remove_prefix(9);
  return NormalizeSkipReason(t);
}

// ---------------------------------------------------------------------------------------
// JUnit XML

bool IsXmlChar(uint32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

// pugixml leaves unknown entity references as literal text and accepts control characters;
// §5.3 allows only the five predefined entities and character references, so this pass
// rejects everything else before pugixml sees the document. Markup that cannot hold
// references (comments, CDATA, PIs, the DOCTYPE with its internal subset) is skipped.
bool ReferencesAndCharsOk(std::string_view x) {
  size_t i = 0;
  const size_t n = x.size();
  auto skip_to = [&](std::string_view end) {
    size_t p = x.find(end, i);
    if (p == std::string_view::npos) return false;
    i = p + end.size();
    return true;
  };
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(x[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
    if (c == '<') {
      std::string_view rest = x.substr(i);
      if (StartsWith(rest, "<!--")) {
        i += 4;
        if (!skip_to("-->")) return false;
        continue;
      }
      if (StartsWith(rest, "<![CDATA[")) {
        i += 9;
        if (!skip_to("]]>")) return false;
        continue;
      }
      if (StartsWith(rest, "<?")) {
        i += 2;
        if (!skip_to("?>")) return false;
        continue;
      }
      if (StartsWith(rest, "<!DOCTYPE")) {
        // Skip to the matching '>' outside an internal subset and quoted literals.
        int bracket = 0;
        char quote = 0;
        for (i += 9; i < n; ++i) {
          char d = x[i];
          if (quote) {
            if (d == quote) quote = 0;
          } else if (d == '"' || d == '\'') {
            quote = d;
          } else if (d == '[') {
            ++bracket;
          } else if (d == ']') {
            --bracket;
          } else if (d == '>' && bracket <= 0) {
            break;
          }
        }
        if (i >= n) return false;
        ++i;
        continue;
      }
      ++i;
      continue;
    }
    if (c == '&') {
      size_t semi = x.find(';', i);
      if (semi == std::string_view::npos) return false;
      std::string_view ref = x.substr(i + 1, semi - i - 1);
      if (ref == "lt" || ref == "gt" || ref == "amp" || ref == "apos" || ref == "quot") {
        i = semi + 1;
        continue;
      }
      if (ref.size() < 2 || ref[0] != '#') return false;
      bool hex = ref[1] == 'x';
      std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 8) return false;
      uint32_t v = 0;
      for (char d : digits) {
        int dv;
        if (d >= '0' && d <= '9') {
          dv = d - '0';
        } else if (hex && d >= 'a' && d <= 'f') {
          dv = d - 'a' + 10;
        } else if (hex && d >= 'A' && d <= 'F') {
          dv = d - 'A' + 10;
        } else {
          return false;
        }
        v = v * (hex ? 16 : 10) + static_cast<uint32_t>(dv);
      }
      if (!IsXmlChar(v)) return false;
      i = semi + 1;
      continue;
    }
    ++i;
  }
  return true;
}

// "Leading decimal float": the longest prefix of the trimmed value that is a decimal number.
double LeadingFloat(std::string_view s) {
  s = Trim(s);
  size_t i = 0;
  const size_t n = s.size();
  auto digits = [&] {
    size_t st = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    return i - st;
  };
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_digits = digits();
  size_t frac_digits = 0;
  if (i < n && s[i] == '.') {
    size_t save = i;
    ++i;
    frac_digits = digits();
    if (int_digits == 0 && frac_digits == 0) i = save;
  }
  if (int_digits == 0 && frac_digits == 0) return 0;
  size_t end = i;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() > 0) end = i;
  }
  std::optional<double> v = internal::ParseNumber(s.substr(0, end));
  return v ? *v : 0;
}

// Character data of an element: its text and CDATA children, concatenated.
std::string CharData(const pugi::xml_node& n) {
  std::string out;
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) out += c.value();
  }
  return out;
}

std::optional<Report> ParseJUnit(std::string_view body) {
  if (!ReferencesAndCharsOk(body)) return std::nullopt;
  pugi::xml_document doc;
  pugi::xml_parse_result pr = doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!pr) return std::nullopt;
  pugi::xml_node root;
  for (pugi::xml_node c : doc.children()) {
    if (c.type() == pugi::node_element) {
      if (root) return std::nullopt;  // a second document element is not well-formed
      root = c;
    } else if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      if (!Trim(c.value()).empty()) return std::nullopt;
    }
  }
  if (!root) return std::nullopt;
  std::vector<pugi::xml_node> suites;
  if (std::string_view(root.name()) == "testsuites") {
    for (pugi::xml_node s : root.children("testsuite")) suites.push_back(s);
  }
  if (suites.empty()) {
    if (std::string_view(root.name()) != "testsuite") return std::nullopt;
    suites.push_back(root);
  }
  Report r;
  for (const pugi::xml_node& suite : suites) {
    r.duration += LeadingFloat(suite.attribute("time").value());
    for (pugi::xml_node tc : suite.children("testcase")) {
      pugi::xml_node bad = tc.child("failure");
      bool is_error = false;
      if (!bad) {
        bad = tc.child("error");
        is_error = static_cast<bool>(bad);
      }
      if (!bad) {
        if (pugi::xml_node sk = tc.child("skipped")) {
          ++r.skipped;
          std::string reason = sk.attribute("message").value();
          if (reason.empty()) reason = CharData(sk);
          r.AddSkip(NormalizeSkipReason(reason));
        } else {
          ++r.passed;
        }
        continue;
      }
      if (is_error) {
        ++r.errors;
      } else {
        ++r.failed;
      }
      Failure f;
      f.is_error = is_error;
      std::string_view cls = tc.attribute("classname").value();
      std::string_view name = tc.attribute("name").value();
      f.name = (!cls.empty() && cls != name) ? std::string(cls) + "::" + std::string(name) : std::string(name);
      std::string data = CharData(bad);
      f.message = bad.attribute("message").value();
      if (f.message.empty()) f.message = data;
      f.stack = TrimStack(SplitLf(data));
      r.failures.push_back(std::move(f));
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------
// pytest-json-report and Jest (simdjson DOM: it validates the whole document, so a report
// with a broken tail is a parse failure, as §5.3 requires).

using simdjson::dom::element;
using simdjson::dom::element_type;

bool IsNull(const element& e) { return e.type() == element_type::NULL_VALUE; }

// REQUIRES: e.type() == ARRAY (checked by every caller).
simdjson::dom::array ArrayOf(const element& e) {
  simdjson::dom::array a{};
  if (e.get_array().get(a) != simdjson::SUCCESS) return {};
  return a;
}

// Last occurrence wins for duplicate keys (as CJ decoding does, §0.3). nullopt = absent or
// null (JSON null decodes as "not given").
std::optional<element> Member(const element& obj, std::string_view key) {
  std::optional<element> found;
  simdjson::dom::object o;
  if (obj.get_object().get(o) != simdjson::SUCCESS) return std::nullopt;
  for (auto field : o) {
    if (field.key == key) found = field.value;
  }
  if (found && IsNull(*found)) return std::nullopt;
  return found;
}

// Optional string member: false on wrong type.
bool GetString(const element& obj, std::string_view key, std::string* out) {
  out->clear();
  std::optional<element> m = Member(obj, key);
  if (!m) return true;
  std::string_view v;
  if (m->get_string().get(v) != simdjson::SUCCESS) return false;
  out->assign(v);
  return true;
}

bool GetCount(const element& obj, std::string_view key, uint64_t* out) {
  *out = 0;
  std::optional<element> m = Member(obj, key);
  if (!m) return true;
  if (m->type() == element_type::UINT64) return m->get_uint64().get(*out) == simdjson::SUCCESS;
  int64_t v;
  if (m->type() != element_type::INT64 || m->get_int64().get(v) != simdjson::SUCCESS || v < 0) {
    return false;
  }
  *out = static_cast<uint64_t>(v);
  return true;
}

std::optional<element> ParseJsonDoc(simdjson::dom::parser& parser, std::string_view body) {
  if (parser.allocate(body.size(), 10000) != simdjson::SUCCESS) return std::nullopt;
  element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) return std::nullopt;
  if (root.type() != element_type::OBJECT) return std::nullopt;
  return root;
}

std::vector<std::string_view> TrimmedNonEmptyLines(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view l : SplitLf(s)) {
    l = Trim(l);
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

std::optional<Report> ParsePytest(const element& root) {
  std::optional<element> tests = Member(root, "tests");
  if (!tests || tests->type() != element_type::ARRAY) return std::nullopt;
  Report r;
  if (std::optional<element> ec = Member(root, "exitcode")) {
    if (ec->type() != element_type::INT64 && ec->type() != element_type::UINT64) {
      return std::nullopt;
    }
  }
  if (std::optional<element> d = Member(root, "duration")) {
    if (d->get_double().get(r.duration) != simdjson::SUCCESS) return std::nullopt;
  }
  for (element t : ArrayOf(*tests)) {
    if (IsNull(t)) continue;  // a null element decodes as an empty test: not counted
    if (t.type() != element_type::OBJECT) return std::nullopt;
    std::string nodeid, outcome, longrepr;
    if (!GetString(t, "nodeid", &nodeid) || !GetString(t, "outcome", &outcome)) {
      return std::nullopt;
    }
    if (std::optional<element> call = Member(t, "call")) {
      if (call->type() != element_type::OBJECT) return std::nullopt;
      if (!GetString(*call, "longrepr", &longrepr)) return std::nullopt;
    }
    if (outcome == "passed") {
      ++r.passed;
    } else if (outcome == "skipped") {
      ++r.skipped;
      // The reason sits in the phase that skipped (usually setup); read leniently, as
      // §5.3 defines no `setup` member.
      std::string reason = longrepr;
      if (reason.empty()) {
        if (std::optional<element> setup = Member(t, "setup"); setup && setup->type() == element_type::OBJECT) {
          if (std::optional<element> lr = Member(*setup, "longrepr")) {
            std::string_view v;
            if (lr->get_string().get(v) == simdjson::SUCCESS) reason.assign(v);
          }
        }
      }
      r.AddSkip(PytestSkipReason(reason));
    } else if (outcome == "failed" || outcome == "error") {
      Failure f;
      f.is_error = outcome == "error";
      f.name = nodeid;
      std::vector<std::string_view> lines = TrimmedNonEmptyLines(longrepr);
      std::vector<std::string_view> stack;
      bool have_message = false;
      for (std::string_view l : lines) {
        bool py = Contains(l, ".py:");
        if (!f.is_error) {
          if (!have_message && StartsWith(l, "E ")) {
            f.message = std::string(l.substr(2));
            have_message = true;
          }
          if (py || StartsWith(l, "at ")) stack.push_back(l);
        } else {
          if (!have_message && !py) {
            f.message = std::string(l);
            have_message = true;
          }
          if (py) stack.push_back(l);
        }
      }
      f.stack = TrimStack(stack);
      if (f.is_error) {
        ++r.errors;
      } else {
        ++r.failed;
      }
      r.failures.push_back(std::move(f));
    }
  }
  return r;
}

std::optional<Report> ParseJest(const element& root) {
  std::optional<element> results = Member(root, "testResults");
  if (!results || results->type() != element_type::ARRAY) return std::nullopt;
  Report r;
  if (!GetCount(root, "numPassedTests", &r.passed) || !GetCount(root, "numFailedTests", &r.failed) ||
      !GetCount(root, "numPendingTests", &r.skipped)) {
    return std::nullopt;
  }
  for (element tr : ArrayOf(*results)) {
    if (IsNull(tr)) continue;
    if (tr.type() != element_type::OBJECT) return std::nullopt;
    std::optional<element> ars = Member(tr, "assertionResults");
    if (!ars) continue;
    if (ars->type() != element_type::ARRAY) return std::nullopt;
    for (element ar : ArrayOf(*ars)) {
      if (IsNull(ar)) continue;
      if (ar.type() != element_type::OBJECT) return std::nullopt;
      std::string status, full_name, title;
      if (!GetString(ar, "status", &status) || !GetString(ar, "fullName", &full_name) ||
          !GetString(ar, "title", &title)) {
        return std::nullopt;
      }
      std::vector<std::string> ancestors;
      if (std::optional<element> anc = Member(ar, "ancestorTitles")) {
        if (anc->type() != element_type::ARRAY) return std::nullopt;
        for (element a : ArrayOf(*anc)) {
          std::string_view s;
          if (IsNull(a)) {
            ancestors.emplace_back();
          } else if (a.get_string().get(s) == simdjson::SUCCESS) {
            ancestors.emplace_back(s);
          } else {
            return std::nullopt;
          }
        }
      }
      std::string first_message;
      bool has_message = false;
      if (std::optional<element> fm = Member(ar, "failureMessages")) {
        if (fm->type() != element_type::ARRAY) return std::nullopt;
        for (element m : ArrayOf(*fm)) {
          std::string_view s;
          if (IsNull(m)) {
            s = "";
          } else if (m.get_string().get(s) != simdjson::SUCCESS) {
            return std::nullopt;
          }
          if (!has_message) {
            first_message.assign(s);
            has_message = true;
          }
        }
      }
      if (status != "failed") continue;
      Failure f;
      if (!full_name.empty()) {
        f.name = full_name;
      } else {
        // ancestorTitles + title joined with " › ".
        for (size_t i = 0; i < ancestors.size(); ++i) {
          f.name += ancestors[i];
          f.name += " \xE2\x80\xBA ";
        }
        f.name += title;
      }
      std::vector<std::string_view> stack;
      bool have_message = false;
      for (std::string_view l : TrimmedNonEmptyLines(first_message)) {
        if (StartsWith(l, "at ") || Contains(l, ".test.") || Contains(l, ".spec.")) {
          stack.push_back(l);
        } else if (!have_message) {
          f.message = std::string(l);
          have_message = true;
        }
      }
      f.stack = TrimStack(stack);
      r.failures.push_back(std::move(f));
    }
  }
  return r;
}

std::optional<Report> ParseReport(std::string_view body) {
  if (!internal::IsValidUtf8(body)) return std::nullopt;
  std::string_view t = Trim(body);
  if (t.empty()) return std::nullopt;
  std::optional<Report> r;
  if (t[0] == '<') {
    r = ParseJUnit(body);
  } else if (t[0] == '{' || t[0] == '[') {
    simdjson::dom::parser parser;
    std::optional<element> root = ParseJsonDoc(parser, body);
    if (!root) return std::nullopt;
    r = ParsePytest(*root);
    // A document that is not a usable pytest report may still be a Jest report.
    if (!r || r->total() == 0) r = ParseJest(*root);
  }
  if (!r || r->total() == 0) return std::nullopt;
  return r;
}

std::string Render(const Report& r) {
  std::string out = "TEST SUMMARY: ";
  std::vector<std::string> parts;
  if (r.passed) parts.push_back(std::to_string(r.passed) + " passed");
  if (r.failed) parts.push_back(std::to_string(r.failed) + " failed");
  if (r.errors) parts.push_back(std::to_string(r.errors) + " errors");
  if (r.skipped) parts.push_back(std::to_string(r.skipped) + " skipped");
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += ", ";
    out += parts[i];
  }
  if (r.duration > 0) {
    // glibc's %.1f rounds the exact binary value correctly.
    char buf[400];  // enough for any binary64 in %.1f
    std::snprintf(buf, sizeof buf, " (%.1fs)", r.duration);
    out += buf;
  }
  out += '\n';
  // Project decision (issue 16): skipped tests as one grouped line, `S skipped: K × reason, …`,
  // groups by count descending, ties in first-appearance order, at most kMaxSkipGroups groups
  // then `+M more (K skipped)`; only when some skip gave a reason.
  constexpr size_t kMaxSkipGroups = 10;
  bool any_reason =
      std::any_of(r.skip_reasons.begin(), r.skip_reasons.end(), [](const SkipReason& s) { return !s.reason.empty(); });
  if (any_reason) {
    std::vector<SkipReason> groups = r.skip_reasons;
    std::stable_sort(groups.begin(), groups.end(),
                     [](const SkipReason& a, const SkipReason& b) { return a.count > b.count; });
    uint64_t listed = 0;
    for (const SkipReason& g : groups) listed += g.count;
    out += '\n';
    out += std::to_string(std::max(listed, r.skipped)) + " skipped: ";
    for (size_t i = 0; i < groups.size() && i < kMaxSkipGroups; ++i) {
      if (i) out += ", ";
      out += std::to_string(groups[i].count) + " \xC3\x97 ";
      out += groups[i].reason.empty() ? "(no reason)" : groups[i].reason;
    }
    if (groups.size() > kMaxSkipGroups) {
      uint64_t rest = 0;
      for (size_t i = kMaxSkipGroups; i < groups.size(); ++i) rest += groups[i].count;
      out += ", +" + std::to_string(groups.size() - kMaxSkipGroups) + " more (" + std::to_string(rest) + " skipped)";
    }
    out += '\n';
  }
  for (const Failure& f : r.failures) {
    out += '\n';
    out += f.is_error ? "ERROR: " : "FAILED: ";
    out += f.name;
    out += '\n';
    std::string_view msg = Trim(f.message);
    if (!msg.empty()) {
      for (std::string_view l : SplitLf(msg)) {
        out += "  ";
        out += l;
        out += '\n';
      }
    }
    for (const std::string& s : f.stack) {
      out += "  ";
      out += s;
      out += '\n';
    }
  }
  return out;
}

class TestReportCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "test-report"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): pugixml DOM or per-line records.
  MemoryModel memory_model() const override { return {.per_byte = 2, .per_line = 55}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view, TransformMeta*) const override {
    std::optional<Report> r = ParseReport(body);
    if (!r) return std::nullopt;
    return Render(*r);
  }
};

}  // namespace

bool ParsesAsTestReport(std::string_view body) { return ParseReport(body).has_value(); }

std::unique_ptr<Compressor> NewTestReportCompressor() { return std::make_unique<TestReportCompressor>(); }

}  // namespace caveman
