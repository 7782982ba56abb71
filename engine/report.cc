// Report formatting: the §8.1 report line (CompressResult::ReportJson), the §8.2 simulation
// JSON (SimResult::ToJson), both written with stream/json_writer.h, and the pass-through
// reasons.
#include "caveman/engine/engine.h"

#include <string>

#include "stream/json_writer.h"

namespace caveman {

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

std::string CompressResult::ReportJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("content_type").String(content_type);
  w.Key("tokens_before").Uint(tokens_before);
  w.Key("tokens_after").Uint(tokens_after);
  w.Key("token_count_basis").String(token_count_basis);
  w.Key("ratio").Ratio(ratio);
  w.Key("basis").String("inferred");
  if (!recovery_handle.empty()) w.Key("recovery_handle").String(recovery_handle);
  if (!method.empty()) w.Key("method").String(method);
  if (!method.empty() && lossless_to_model.has_value()) w.Key("lossless_to_model").Bool(*lossless_to_model);
  if (!partial_record.empty()) w.Key("partial_record").String(partial_record);
  if (!error.empty()) w.Key("error").String(error);
  w.EndObject();
  return w.Take();
}

std::string SimResult::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("content_type").String(content_type);
  if (!compressor.empty()) w.Key("compressor").String(compressor);
  if (!safety_class.empty()) w.Key("safety_class").String(safety_class);
  w.Key("tokens_before").Uint(tokens_before);
  w.Key("tokens_after").Uint(tokens_after);
  w.Key("tokens_saved").Uint(tokens_before - tokens_after);
  w.Key("token_count_basis").String(token_count_basis);
  w.Key("ratio").Ratio(ratio);
  w.Key("lossy").Bool(lossy());
  w.Key("requires_ccr").Bool(requires_ccr);
  w.Key("recoverable").Bool(recoverable);
  if (!method.empty()) w.Key("method").String(method);
  if (lossless_to_model.has_value()) w.Key("lossless_to_model").Bool(*lossless_to_model);
  w.Key("basis").String("inferred");
  w.EndObject();
  return w.Take();
}

}  // namespace caveman
