#include "compressors/compressor.h"

#include "compressors/large_stack.h"

#include <cstring>

namespace caveman {

namespace {

uint64_t CountLf(std::string_view text) {
  uint64_t n = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const void* hit = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (hit == nullptr) break;
    ++n;
    p = static_cast<const char*>(hit) + 1;
  }
  return n;
}

}  // namespace

bool WithinMemoryCeiling(const MemoryModel& model, uint64_t bytes, uint64_t lines) {
  const double need = model.per_byte * static_cast<double>(bytes) + model.per_line * static_cast<double>(lines);
  const double allowance = kWorkingSetPerInputByte * static_cast<double>(bytes) + static_cast<double>(kWorkingSetFloor);
  return need <= allowance;
}

Result<TransformOutcome> InMemoryCompressor::Transform(const Body& body, std::string_view query, ByteSink& out,
                                                       TransformMeta* meta) const {
  CAVEMAN_ASSIGN_OR_RETURN(std::string_view text, body.View());
  const MemoryModel model = memory_model();
  if ((model.per_byte > 0 || model.per_line > 0) &&
      !WithinMemoryCeiling(model, text.size(), model.per_line > 0 ? CountLf(text) : 0)) {
    meta->over_memory_ceiling = true;
    return TransformOutcome::kDeclined;
  }
  // In-memory compressors parse whole documents, some with recursive third-party code: give
  // them a stack sized for the input rather than whatever the calling thread has.
  std::optional<std::string> result;
  internal::RunWithStack(internal::StackBytesForInput(text.size()), [&] { result = TransformText(text, query, meta); });
  if (!result) return TransformOutcome::kDeclined;
  CAVEMAN_RETURN_IF_ERROR(out.Write(*result));
  return TransformOutcome::kAccepted;
}

std::optional<std::string> RunOnString(const Compressor& c, std::string_view body, std::string_view query,
                                       TransformMeta* meta) {
  TransformMeta local;
  StringSink sink;
  Result<TransformOutcome> r = c.Transform(Body::FromView(body), query, sink, meta ? meta : &local);
  if (!r.ok() || r.value() != TransformOutcome::kAccepted) return std::nullopt;
  return std::move(sink.data());
}

}  // namespace caveman
