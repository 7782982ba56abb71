// Engine's private state (pimpl, issue 17): what engine.h must not show — the compressor
// registry (compressors/registry.h is not installed) and the pipeline's helpers. Shared by
// engine.cc, follow.cc and retrieve_slice.cc. Immutable after construction, like the Engine.
#ifndef CAVEMAN_ENGINE_INTERNAL_ENGINE_IMPL_H_
#define CAVEMAN_ENGINE_INTERNAL_ENGINE_IMPL_H_

#include <memory>

#include "caveman/engine/engine.h"
#include "compressors/registry.h"

namespace caveman {

// Hidden: a nested class of the exported Engine would otherwise be exported with it.
struct [[gnu::visibility("hidden")]] Engine::Impl {
  explicit Impl(EngineOptions options);

  // Everything one pipeline run produced (engine.cc); Compress and Simulate decide what to
  // do with it.
  struct Run;
  Result<std::unique_ptr<Run>> RunPipeline(ByteSource & in, const CompressOptions& options, bool simulate) const;
  Result<CompressResult> CompressOversized(Run & run, ByteSource & in, const CompressOptions& options, ByteSink& out)
      const;

  const EngineOptions options_;
  const TokenCounter* const counter_;
  const Registry registry_;
};

}  // namespace caveman

#endif  // CAVEMAN_ENGINE_INTERNAL_ENGINE_IMPL_H_
