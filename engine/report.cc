// Report formatting: the §8.1 report line (CompressResult::ReportJson), the §8.2 simulation
// JSON (SimResult::ToJson), their number and string formats, and the pass-through reasons.
#include "caveman/engine/engine.h"

#include <charconv>
#include <cmath>
#include <string>

namespace caveman {
namespace {

void AppendJsonNumber(std::string* out, uint64_t v) { *out += std::to_string(v); }

}  // namespace

const char* PassThroughReasonText(PassThroughReason reason) {
  switch (reason) {
    case PassThroughReason::kNone: return "a view was emitted";
    case PassThroughReason::kRecordMode: return "record mode: compression was not requested";
    case PassThroughReason::kEmptyInput: return "empty input";
    case PassThroughReason::kNoCompressor: return "no compressor is registered for this content type";
    case PassThroughReason::kNoStore: return "no recovery store, so no lossy view may be emitted";
    case PassThroughReason::kDeclined: return "the compressor found nothing to compress in this input";
    case PassThroughReason::kNoChange: return "compression left the input unchanged";
    case PassThroughReason::kUnstable: return "the view kept changing when compressed again";
    case PassThroughReason::kNotSmaller: return "the view would not count fewer tokens";
    case PassThroughReason::kStoreFailed: return "the original could not be stored";
    case PassThroughReason::kInputTooLarge: return "the input exceeds the size limit and its type cannot be streamed";
    case PassThroughReason::kReportFailed: return "the report could not be written";
    case PassThroughReason::kOutOfMemory: return "memory ran out while compressing";
    case PassThroughReason::kOverMemoryCeiling: return "the compressor would exceed its memory ceiling";
    case PassThroughReason::kNeverCompress: return "the content type is configured never to be compressed";
    case PassThroughReason::kBelowMinSavings: return "the view would save less than the configured minimum";
  }
  return "unknown";
}

std::string FormatRatio(double r) {
  if (r == 0 || !std::isfinite(r)) return "0";
  char buf[64];
  std::to_chars_result res;
  if (std::fabs(r) < 1e-6) {
    res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::scientific);
  } else {
    res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::fixed);
  }
  std::string s(buf, res.ptr);
  // Exponent form without '+' or leading zeros: 1e-07 → 1e-7.
  size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

std::string JsonQuote(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case 0x08: out += "\\b"; break;
      case 0x0C: out += "\\f"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
          out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += "\"";
  return out;
}

std::string CompressResult::ReportJson() const {
  std::string j = "{\"content_type\":" + JsonQuote(content_type);
  j += ",\"tokens_before\":";
  AppendJsonNumber(&j, tokens_before);
  j += ",\"tokens_after\":";
  AppendJsonNumber(&j, tokens_after);
  j += ",\"token_count_basis\":" + JsonQuote(token_count_basis);
  j += ",\"ratio\":" + FormatRatio(ratio);
  j += ",\"basis\":\"inferred\"";
  if (!recovery_handle.empty()) j += ",\"recovery_handle\":" + JsonQuote(recovery_handle);
  if (!method.empty()) j += ",\"method\":" + JsonQuote(method);
  if (!method.empty() && lossless_to_model.has_value()) {
    j += std::string(",\"lossless_to_model\":") + (*lossless_to_model ? "true" : "false");
  }
  if (!partial_record.empty()) j += ",\"partial_record\":" + JsonQuote(partial_record);
  if (!error.empty()) j += ",\"error\":" + JsonQuote(error);
  j += "}";
  return j;
}

std::string SimResult::ToJson() const {
  std::string j = "{\"content_type\":" + JsonQuote(content_type);
  if (!compressor.empty()) j += ",\"compressor\":" + JsonQuote(compressor);
  if (!safety_class.empty()) j += ",\"safety_class\":" + JsonQuote(safety_class);
  j += ",\"tokens_before\":" + std::to_string(tokens_before);
  j += ",\"tokens_after\":" + std::to_string(tokens_after);
  j += ",\"tokens_saved\":" + std::to_string(tokens_before - tokens_after);
  j += ",\"token_count_basis\":" + JsonQuote(token_count_basis);
  j += ",\"ratio\":" + FormatRatio(ratio);
  j += std::string(",\"lossy\":") + (lossy() ? "true" : "false");
  j += std::string(",\"requires_ccr\":") + (requires_ccr ? "true" : "false");
  j += std::string(",\"recoverable\":") + (recoverable ? "true" : "false");
  if (!method.empty()) j += ",\"method\":" + JsonQuote(method);
  if (lossless_to_model.has_value()) j += std::string(",\"lossless_to_model\":") + (*lossless_to_model ? "true" : "false");
  j += ",\"basis\":\"inferred\"}";
  return j;
}

}  // namespace caveman
