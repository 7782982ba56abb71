#include "compressors/compressor.h"

#include "compressors/internal/large_stack.h"

namespace caveman {

Result<TransformOutcome> InMemoryCompressor::Transform(const Body& body, std::string_view query,
                                                       ByteSink& out, TransformMeta* meta) const {
  CAVEMAN_ASSIGN_OR_RETURN(std::string_view text, body.View());
  // In-memory compressors parse whole documents, some with recursive third-party code: give
  // them a stack sized for the input rather than whatever the calling thread has.
  std::optional<std::string> result;
  internal::RunWithStack(internal::StackBytesForInput(text.size()),
                            [&] { result = TransformText(text, query, meta); });
  if (!result) return TransformOutcome::kDeclined;
  CAVEMAN_RETURN_IF_ERROR(out.Write(*result));
  return TransformOutcome::kAccepted;
}

std::optional<std::string> RunOnString(const Compressor& c, std::string_view body,
                                       std::string_view query, TransformMeta* meta) {
  TransformMeta local;
  StringSink sink;
  Result<TransformOutcome> r = c.Transform(Body::FromView(body), query, sink, meta ? meta : &local);
  if (!r.ok() || r.value() != TransformOutcome::kAccepted) return std::nullopt;
  return std::move(sink.data());
}

}  // namespace caveman
