// The batch Compress pipeline of §1.3 over chunked input (§1.4): Engine::RunPipeline calls the
// stages of engine/internal/stages.h in the order of docs/ARCHITECTURE.md — read, select,
// transform, stabilise, rewrap, gate — and Engine::Compress then commits and emits. The
// InputWorker (engine/internal/input_worker.h) overlaps the input's token count and the
// record's zstd frame with the transform; the report formats are in engine/report.cc.
#include "caveman/engine/engine.h"

#include <new>

#include <memory>
#include <optional>
#include <string>

#include "compressors/detect.h"
#include "compressors/narrow.h"
#include "compressors/online.h"
#include "compressors/pattern_databases.h"
#include "engine/internal/engine_impl.h"
#include "engine/internal/follow_session.h"
#include "engine/internal/marker_map.h"
#include "engine/internal/stages.h"
#include "stream/chunk_buffer.h"
#include "stream/interval_marks.h"
#include "stream/spool.h"
#include "caveman/stream/tokens.h"

extern "C" {
extern const char caveman_hs_databases_begin[];
extern const char caveman_hs_databases_end[];
}

namespace caveman {

// Everything one pipeline run produced; Compress and Simulate decide what to do with it.
struct Engine::Impl::Run {
  explicit Run(const SpoolOptions& so) : original(so), output(std::make_unique<Spool>(so)) {}
  Spool original;                 // exact input bytes
  std::unique_ptr<Spool> output;  // the emitted view if accepted
  internal::CommitStage record;   // pending store record
  std::string handle;
  CompressResult result;
  const Compressor* compressor = nullptr;  // the compressor of ct, if any
  TransformMeta meta;
  bool accepted = false;   // output wins the gate
  bool oversized = false;  // input over max_input_bytes: `original` holds its start
  // Issue 15: the input could not be held (memory and spill file both failed): `original`
  // holds its start, the first held_back_size bytes of held_back follow, then the rest of
  // the source. Compress streams it through (CompressOversized).
  bool unheld = false;
  std::optional<ChunkBuffer> held_back;
  size_t held_back_size = 0;
};

Mode ParseMode(std::string_view mode) { return mode == "compress" ? Mode::kCompress : Mode::kRecord; }

Engine::Impl::Impl(EngineOptions options)
    : options_(std::move(options)),
      counter_(options_.counter != nullptr ? options_.counter : &DefaultTokenCounter()),
      registry_(RegistryOptions{.toon_best_of = options_.json_best_of}) {}

namespace {

// The Hyperscan databases compiled at build time (engine/hs_databases.S, written by
// engine/internal/hs_db_gen.cc): registered before anything can compile a pattern set, so a
// process on the build machine's kind of CPU neither compiles nor reads the disk cache.
void RegisterBuildTimeDatabases() {
  static const bool registered = [] {
    RegisterEmbeddedPatternDatabases(std::string_view(
        caveman_hs_databases_begin, static_cast<size_t>(caveman_hs_databases_end - caveman_hs_databases_begin)));
    return true;
  }();
  (void)registered;
}

}  // namespace

Engine::Engine(EngineOptions options)
    : impl_((RegisterBuildTimeDatabases(), std::make_unique<const Impl>(std::move(options)))) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

const TokenCounter& Engine::counter() const { return *impl_->counter_; }

namespace {

// The follow path for a line type with an online stage (inputs over the size limit, or over
// a batch compressor's memory ceiling).
internal::FollowConfig OnlineConfig(const TokenCounter* counter, RecoveryStore* store, const std::string& type,
                                    const CompressOptions& o) {
  internal::FollowConfig config;
  config.counter = counter;
  config.store = store;
  config.type = type;
  config.query = o.query;
  config.command = o.command;
  return config;
}

}  // namespace

Result<std::unique_ptr<Engine::Impl::Run>> Engine::Impl::RunPipeline(ByteSource& in, const CompressOptions& o,
                                                                     bool simulate) const {
  const bool forced = !o.type.empty() && o.type != "auto";
  const internal::StageConfig config{
      .counter = *counter_,
      .registry = registry_,
      .spool = {.memory_limit = options_.spool_memory_limit, .temp_dir = options_.temp_dir},
      .forced_type = forced ? std::string_view(o.type) : std::string_view(),
      .query = o.query,
      .compress_mode = o.mode == Mode::kCompress || simulate,
      .may_emit_lossy = simulate || options_.store != nullptr || o.external_recovery,
      .never_types = o.never_types,
      .min_savings = o.min_savings,
  };
  auto run = std::make_unique<Run>(config.spool);
  CompressResult& r = run->result;
  r.token_count_basis = std::string(counter_->name());
  if (!simulate && config.compress_mode && !o.external_recovery) run->record.Begin(options_.store);

  // Read also warms up detection on the worker when detection will run.
  internal::ReadStage read(*counter_, &run->record, /*warm_detection=*/!forced);
  auto after_read = [&]() -> Result<PassThroughReason> {
    CAVEMAN_MARK("read");
    internal::Selection selection;
    CAVEMAN_ASSIGN_OR_RETURN(PassThroughReason why, internal::Select(read, config, &selection));
    CAVEMAN_MARK("select");
    r.content_type = selection.content_type;
    run->compressor = selection.compressor;
    if (why != PassThroughReason::kNone) return why;
    std::unique_ptr<Spool> view;
    CAVEMAN_ASSIGN_OR_RETURN(why, internal::Transform(selection, config, &view, &run->meta));
    if (why != PassThroughReason::kNone) return why;
    CAVEMAN_MARK("transform");
    const Spool* first_view = view.get();
    CAVEMAN_ASSIGN_OR_RETURN(why, internal::Stabilise(selection, config, &view, &run->meta));
    if (why != PassThroughReason::kNone) return why;
    // The compressor's spans describe its own output over the whole input only.
    if (view.get() != first_view || selection.layered) run->meta.elided.clear();
    CAVEMAN_MARK("stabilise");
    CAVEMAN_RETURN_IF_ERROR(internal::Rewrap(selection, std::move(view), &run->output));
    CAVEMAN_ASSIGN_OR_RETURN(why, internal::Gate(*run->output, read, *counter_, config.min_savings, &r.tokens_after));
    return why;
  };
  auto stages = [&]() -> Result<PassThroughReason> {
    CAVEMAN_RETURN_IF_ERROR(read.Run(in, o.max_input_bytes, config.compress_mode, &run->original));
    r.bytes_in = read.bytes();
    // Issue 15: running out of memory anywhere after the read (detection, a compressor, the
    // guard, the gate) passes the original through from its spool instead of aborting.
    try {
      return after_read();
    } catch (const std::bad_alloc&) {
      if (r.content_type.empty()) r.content_type = "text";
      return PassThroughReason::kOutOfMemory;
    }
  };
  Result<PassThroughReason> why = stages();
  if (!why.ok()) {
    read.Cancel();
    run->record.Abandon();
    if (read.oversized() && !simulate) {
      run->oversized = true;  // Compress streams it (CompressOversized)
      r.bytes_in = read.bytes();
      return run;
    }
    if (read.unheld() && !simulate) {
      run->unheld = true;  // as oversized, with the chunk the original could not take
      run->held_back.emplace(read.TakeHeldBack(&run->held_back_size));
      return run;
    }
    return why.status();
  }
  CAVEMAN_MARK("gate");
  r.tokens_before = read.Finish();
  run->handle = read.handle();
  r.pass_through_reason = *why;
  if (read.out_of_memory()) {  // the count is short: pass through, counts unknown (0)
    r.pass_through_reason = PassThroughReason::kOutOfMemory;
    r.tokens_before = 0;
    if (r.content_type.empty()) r.content_type = "text";
  }
  run->accepted = r.pass_through_reason == PassThroughReason::kNone;
  if (!run->accepted) {
    r.tokens_after = r.tokens_before;
    return run;
  }
  // Method and losslessness defaults.
  r.method = run->meta.method.empty() ? std::string(run->compressor->content_type()) : run->meta.method;
  r.lossless_to_model = run->meta.lossless_to_model.value_or(false);
  r.ratio = static_cast<double>(r.tokens_before - r.tokens_after) / static_cast<double>(r.tokens_before);
  return run;
}

// Input beyond max_input_bytes (issue 13: no size cliff). Nothing has been written. The type
// is detected on the part read (or forced); a line type with an online stage continues on the
// follow path over that part and the rest of `in` (the view streams, the record is finalised
// at the end); any other type streams the original through unchanged with error
// cave_input_too_large.
Result<CompressResult> Engine::Impl::CompressOversized(Run& run, ByteSource& in, const CompressOptions& o,
                                                       ByteSink& out) const {
  CompressResult r;
  r.token_count_basis = std::string(counter_->name());
  std::string type = o.type;
  if (run.unheld && (type.empty() || type == "auto")) {
    type = "text";  // no detection on a part whose length depends on the memory left
  } else if (type.empty() || type == "auto") {
    // A sample that cannot be read for detection still passes through below (never an empty
    // stdout): the type is then simply not a streamable one.
    Result<std::string_view> ct = DetectLarge(Body::FromSpool(run.original));
    type = ct.ok() ? std::string(*ct) : "text";
  }
  auto head = run.original.NewReader();
  RecoveryStore* store = o.external_recovery ? nullptr : options_.store;
  if (!run.unheld && o.mode == Mode::kCompress && store != nullptr && IsOnlineContentType(type)) {
    return internal::FollowFromSource(OnlineConfig(counter_, store, type, o), *head, in, out);
  }
  r.content_type = type;
  if (run.unheld) {
    r.pass_through_reason = PassThroughReason::kOutOfMemory;
  } else {
    r.error = "cave_input_too_large";
    r.pass_through_reason = PassThroughReason::kInputTooLarge;
  }
  // Counting is best effort here: if even the counter runs out of memory the bytes still go
  // through, and both counts are reported as 0.
  std::optional<StreamingTokenCount> tokens(std::in_place, *counter_);
  auto pass = [&](std::string_view chunk) -> Status {
    if (tokens) {
      try {
        tokens->Feed(chunk);
      } catch (const std::bad_alloc&) {
        tokens.reset();
      }
    }
    r.bytes_in += chunk.size();
    return out.Write(chunk);
  };
  ChunkBuffer buf;
  for (ByteSource* source : {head.get(), static_cast<ByteSource*>(nullptr), &in}) {
    if (source == nullptr) {  // between the held start and the rest: the chunk not held
      if (run.unheld && run.held_back_size > 0) {
        CAVEMAN_RETURN_IF_ERROR(pass(std::string_view(run.held_back->data(), run.held_back_size)));
      }
      continue;
    }
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(size_t n, source->Read(buf.data(), buf.size()));
      if (n == 0) break;
      CAVEMAN_RETURN_IF_ERROR(pass(std::string_view(buf.data(), n)));
    }
  }
  CAVEMAN_RETURN_IF_ERROR(out.Flush());
  r.bytes_out = r.bytes_in;
  r.tokens_before = r.tokens_after = 0;
  if (tokens) {
    try {
      r.tokens_before = r.tokens_after = tokens->Finish();
    } catch (const std::bad_alloc&) {
    }
  }
  return r;
}

Result<CompressResult> Engine::Compress(ByteSource& in, const CompressOptions& o, ByteSink& out) const {
  CAVEMAN_ASSIGN_OR_RETURN(std::unique_ptr<Impl::Run> run, impl_->RunPipeline(in, o, /*simulate=*/false));
  if (run->oversized || run->unheld) return impl_->CompressOversized(*run, in, o, out);
  CompressResult& r = run->result;
  // Issue 15: a line type whose batch compressor would break the memory ceiling (terminal
  // on a huge number of lines) streams through its online stage, whose memory is flat, as
  // an input over the size limit does; the whole input is in `original`, `in` is at its end.
  if (r.pass_through_reason == PassThroughReason::kOverMemoryCeiling && o.mode == Mode::kCompress &&
      !o.external_recovery && impl_->options_.store != nullptr && IsOnlineContentType(r.content_type)) {
    run->record.Abandon();
    auto whole = run->original.NewReader();
    return internal::FollowFromSource(OnlineConfig(impl_->counter_, impl_->options_.store, r.content_type, o), *whole,
                                      in, out);
  }
  auto pass_through = [&]() -> Result<CompressResult> {
    run->record.Abandon();
    r.tokens_after = r.tokens_before;
    r.ratio = 0;
    r.method.clear();
    r.lossless_to_model.reset();
    r.recovery_handle.clear();
    CAVEMAN_RETURN_IF_ERROR(internal::Emit(run->original, out, &r.bytes_out));
    return r;
  };
  if (!run->accepted) return pass_through();

  // Commit the full original before anything transformed escapes.
  if (!o.external_recovery) {
    RecordInfo info{r.content_type, std::string(run->compressor->content_type()), r.tokens_before, r.tokens_after,
                    run->meta.recovery_metadata};
    // A lossless view (TOON, minified JSON) replaces nothing: its map is empty.
    info.marker_map = r.lossless_to_model.value_or(false)
                          ? internal::SerializeMarkerMap(internal::MarkerMap{true, {}, {}})
                          : internal::MarkerMapBlob(run->original, *run->output, run->meta.elided);
    CAVEMAN_MARK("marker-map");
    Status s = run->record.Commit(run->handle, info);
    CAVEMAN_MARK("commit");
    if (!s.ok()) {
      r.error = internal::StoreError(s);
      r.pass_through_reason = PassThroughReason::kStoreFailed;
      return pass_through();
    }
    r.recovery_handle = run->handle;
  }

  // The caller's report goes out before the view; no report, no view (issue 15).
  if (o.before_view) {
    r.bytes_out = run->output->size();
    if (!o.before_view(r)) {
      r.pass_through_reason = PassThroughReason::kReportFailed;
      return pass_through();
    }
  }
  // Emit the view.
  CAVEMAN_RETURN_IF_ERROR(internal::Emit(*run->output, out, &r.bytes_out));
  return r;
}

Result<CompressResult> Engine::Compress(std::string_view input, const CompressOptions& o, std::string* out) const {
  auto src = NewStringSource(input);
  StringSink sink;
  auto r = Compress(*src, o, sink);
  if (r.ok()) *out = std::move(sink.data());
  return r;
}

Result<SimResult> Engine::Simulate(ByteSource& in, const CompressOptions& o) const {
  CAVEMAN_ASSIGN_OR_RETURN(std::unique_ptr<Impl::Run> run, impl_->RunPipeline(in, o, /*simulate=*/true));
  const CompressResult& r = run->result;
  SimResult s;
  s.content_type = r.content_type;
  s.tokens_before = r.tokens_before;
  s.tokens_after = r.tokens_before;
  s.token_count_basis = r.token_count_basis;
  if (run->accepted) {
    s.compressor = std::string(run->compressor->content_type());
    s.safety_class = "S4";
    s.tokens_after = r.tokens_after;
    s.ratio = r.ratio;
    s.requires_ccr = true;
    s.recoverable = impl_->options_.store != nullptr || o.external_recovery;
    s.method = r.method;
    s.lossless_to_model = r.lossless_to_model;
    CAVEMAN_ASSIGN_OR_RETURN(s.output, run->output->ReadAllToString());
  } else {
    CAVEMAN_ASSIGN_OR_RETURN(s.output, run->original.ReadAllToString());
  }
  return s;
}

Result<SimResult> Engine::Simulate(std::string_view input, const CompressOptions& o) const {
  auto src = NewStringSource(input);
  return Simulate(*src, o);
}

Result<CompressResult> Engine::Compress(std::istream& in, const CompressOptions& o, std::ostream& out) const {
  auto src = NewIstreamSource(in);
  auto sink = NewOstreamSink(out);
  return Compress(*src, o, *sink);
}

Result<CompressResult> Engine::CompressFd(int in_fd, const CompressOptions& o, int out_fd) const {
  auto src = NewFdSource(in_fd);
  auto sink = NewFdSink(out_fd);
  return Compress(*src, o, *sink);
}

Status Engine::Retrieve(std::string_view handle, std::ostream& out) const {
  auto sink = NewOstreamSink(out);
  CAVEMAN_RETURN_IF_ERROR(Retrieve(handle, *sink));
  return sink->Flush();
}

const char* LibraryVersion() { return CAVEMAN_VERSION_STRING; }

Result<std::unique_ptr<RecoveryStore>> OpenDefaultStore() {
  CAVEMAN_ASSIGN_OR_RETURN(StoreOptions options, StoreOptions::FromEnv());
  return OpenRecoveryStore(options);
}

std::string Engine::Detect(std::string_view input) const { return std::string(caveman::Detect(input)); }

Status Engine::Retrieve(std::string_view handle, ByteSink& out) const {
  if (impl_->options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  return impl_->options_.store->Get(handle, out);
}

Status Engine::RetrieveQuery(std::string_view handle, std::string_view query, ByteSink& out) const {
  if (impl_->options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  StringSink original;
  CAVEMAN_RETURN_IF_ERROR(impl_->options_.store->Get(handle, original));
  return out.Write(NarrowForQuery(original.data(), query));
}

Result<std::string> Engine::RetrieveMetadata(std::string_view handle) const {
  if (impl_->options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  return impl_->options_.store->GetMetadata(handle);
}

Result<std::vector<MarkerEntry>> Engine::RetrieveMarkerMap(std::string_view handle) const {
  if (impl_->options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  CAVEMAN_ASSIGN_OR_RETURN(std::optional<std::string> blob, impl_->options_.store->GetMarkerMap(handle));
  if (!blob.has_value()) {
    return Status::NotSupported("ccr: no marker map: the record was stored before marker maps");
  }
  CAVEMAN_ASSIGN_OR_RETURN(internal::MarkerMap map, internal::ParseMarkerMap(*blob));
  if (!map.mapped) return Status::NotSupported("ccr: no marker map: " + map.reason);
  return std::move(map.markers);
}

Status Engine::RetrieveMarker(std::string_view handle, uint64_t k, ByteSink& out) const {
  CAVEMAN_ASSIGN_OR_RETURN(std::vector<MarkerEntry> markers, RetrieveMarkerMap(handle));
  if (k == 0 || k > markers.size()) {
    return Status::InvalidArgument("marker " + std::to_string(k) + " out of range: the record has " +
                                   std::to_string(markers.size()) + " marker" + (markers.size() == 1 ? "" : "s"));
  }
  const MarkerEntry& e = markers[k - 1];
  return impl_->options_.store->GetRange(handle, e.byte_begin, e.byte_end - e.byte_begin, out);
}

Result<StoreStats> Engine::Stats() const {
  if (impl_->options_.store == nullptr) return StoreStats{};
  return impl_->options_.store->Stats();
}

}  // namespace caveman
