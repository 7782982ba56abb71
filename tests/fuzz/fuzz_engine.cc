// libFuzzer target for the whole pipeline: Engine::Compress with an in-memory store.
//
// Input layout: byte 0 picks the forced type (every registered type, plus "auto"); byte 1
// holds flags (bit 0 external recovery, bit 1 a query, bit 2 the best-of json slot, bit 3
// read the input through a randomly chunked source, bits 4-7 the chunking seed); the rest is
// the payload. Checked for every input:
//   - Compress succeeds (no Status error for in-memory input under the limit);
//   - size gate: either a pass-through with output == input and tokens_after ==
//     tokens_before, or tokens_after < tokens_before and output != input;
//   - valid UTF-8 in → valid UTF-8 out;
//   - an accepted json / toolschema / toolschema-annotations output parses as JSON, and an
//     accepted toon output decodes to the CJ of the input (when no presentation layer applies);
//   - idempotence (§1.5): compressing the output again with the same options passes through;
//   - a chunked read gives the same output and report as the span call;
//   - the stored original round-trips exactly (Retrieve(handle) == input).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "compressors/internal/json_tree.h"
#include "compressors/text_util.h"
#include "compressors/registry.h"
#include "compressors/toon.h"
#include "caveman/engine/engine.h"
#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "tests/fuzz/fuzz_util.h"

namespace caveman {
namespace {

// Queries chosen by the flags; words that occur in the seed corpus so query paths are hit.
constexpr std::string_view kQueries[] = {"error timeout", "customer-37 apac", "feature_17"};

struct State {
  State() {
    for (std::string_view t : plain_registry.content_types()) types.emplace_back(t);
    types.emplace_back("auto");
    ResetStore();
  }
  // The in-memory store grows with every accepted input; start over now and then so a long
  // run stays within libFuzzer's RSS limit.
  void ResetStore() {
    plain.reset();
    best_of.reset();
    auto s = OpenMemoryStore();
    FUZZ_CHECK(s.ok(), "%s", s.status().ToString().c_str());
    store = std::move(s).value();
    plain = std::make_unique<Engine>(EngineOptions{.store = store.get()});
    best_of = std::make_unique<Engine>(EngineOptions{.store = store.get(), .json_best_of = true});
    runs = 0;
  }

  Registry plain_registry;  // for its content types
  std::vector<std::string> types;
  std::unique_ptr<RecoveryStore> store;
  std::unique_ptr<Engine> plain;
  std::unique_ptr<Engine> best_of;
  size_t runs = 0;
};

State& GetState() {
  static State* state = new State();
  return *state;
}

bool StartsLikeJson(std::string_view s) {
  size_t i = s.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (s[i] == '{' || s[i] == '[');
}

std::string CanonicalJson(std::string_view json) {
  internal::JsonTree tree;
  if (!tree.Parse(json)) return {};
  std::string out;
  internal::AppendCanonicalJson(tree, tree.root(), &out);
  return out;
}

}  // namespace
}  // namespace caveman

// One-time initialisation (vocabulary, Hyperscan and RE2 databases) happens here, outside
// libFuzzer's per-input timeout: on a loaded machine it can take longer than the timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace caveman;
  State& st = GetState();
  const std::string warm = "2024-05-01T10:00:00 INFO a=1\n2024-05-01T10:00:01 ERROR b=2\n[{\"a\":1}]\n";
  for (const std::string& type : st.types) {
    CompressOptions o;
    o.mode = Mode::kCompress;
    o.type = type;
    o.query = "error";
    std::string out;
    (void)st.plain->Compress(warm, o, &out);
    (void)st.best_of->Compress(warm, o, &out);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  State& st = GetState();
  if (++st.runs > 2000) st.ResetStore();

  std::string_view in = fuzz::AsView(data, size);
  const uint8_t type_byte = fuzz::TakeByte(&in);
  const uint8_t flags = fuzz::TakeByte(&in);
  const std::string& type = st.types[type_byte % st.types.size()];
  const bool best_of = (flags & 4) != 0;
  Engine& engine = best_of ? *st.best_of : *st.plain;

  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = type;
  o.external_recovery = (flags & 1) != 0;
  if (flags & 2) o.query = std::string(kQueries[(flags >> 4) % 3]);

  std::string out;
  auto r = engine.Compress(in, o, &out);
  FUZZ_CHECK(r.ok(), "type=%s: %s", type.c_str(), r.status().ToString().c_str());
  const CompressResult& res = *r;

  // Size gate.
  if (res.passed_through()) {
    FUZZ_CHECK(out == in, "type=%s: pass-through output differs from the input", type.c_str());
    FUZZ_CHECK(res.tokens_after == res.tokens_before, "type=%s: pass-through changed tokens", type.c_str());
    FUZZ_CHECK(res.recovery_handle.empty(), "type=%s: pass-through with a handle", type.c_str());
  } else {
    FUZZ_CHECK(res.tokens_after < res.tokens_before, "type=%s: gate let %llu >= %llu through", type.c_str(),
               (unsigned long long)res.tokens_after, (unsigned long long)res.tokens_before);
    FUZZ_CHECK(out != in, "type=%s: accepted output equals the input", type.c_str());
    FUZZ_CHECK(res.tokens_after == engine.counter().Count(out),
               "type=%s: tokens_after %llu is not the count of the output", type.c_str(),
               (unsigned long long)res.tokens_after);
    FUZZ_CHECK(o.external_recovery == res.recovery_handle.empty(),
               "type=%s: handle presence does not follow external_recovery", type.c_str());
  }
  FUZZ_CHECK(res.tokens_before == engine.counter().Count(in), "type=%s: tokens_before wrong", type.c_str());

  // UTF-8 in → UTF-8 out.
  if (internal::IsValidUtf8(in)) {
    FUZZ_CHECK(internal::IsValidUtf8(out), "type=%s ct=%s: invalid UTF-8 output for UTF-8 input", type.c_str(),
               res.content_type.c_str());
  }

  // Structured outputs.
  if (!res.passed_through() && StartsLikeJson(in)) {
    const std::string& ct = res.content_type;
    const bool json_out =
        (ct == "json" && res.method == "elision") || ct == "toolschema" || ct == "toolschema-annotations";
    if (json_out) {
      simdjson::dom::parser parser(internal::kJsonTreeMaxDepth + 1);
      simdjson::padded_string padded(out);
      auto doc = parser.parse(padded);
      // simdjson rejects integers beyond 64 bits, which are valid JSON (§0.3) and copied
      // literally from the input; for those the spec's strict parser decides.
      internal::JsonTree tree;
      const bool number_error = doc.error() == simdjson::NUMBER_ERROR;
      FUZZ_CHECK(doc.error() == simdjson::SUCCESS || (number_error && tree.Parse(out)),
                 "ct=%s method=%s: output is not JSON: %s\n%.*s", ct.c_str(), res.method.c_str(),
                 simdjson::error_message(doc.error()), static_cast<int>(std::min<size_t>(out.size(), 4000)),
                 out.data());
    }
    if (res.method == "toon") {
      auto decoded = DecodeToon(out);
      FUZZ_CHECK(decoded.ok(), "ct=%s: toon output does not decode: %s", ct.c_str(),
                 decoded.status().ToString().c_str());
      FUZZ_CHECK(*decoded == CanonicalJson(in), "ct=%s: toon output is not lossless", ct.c_str());
    }
  }

  // Idempotence (§1.5): the output compressed again with the same options passes through.
  if (!res.passed_through()) {
    CompressOptions again = o;
    again.external_recovery = true;  // keep the store for the originals
    std::string out2;
    auto r2 = engine.Compress(out, again, &out2);
    FUZZ_CHECK(r2.ok(), "type=%s: %s", type.c_str(), r2.status().ToString().c_str());
    FUZZ_CHECK(r2->passed_through(), "type=%s ct=%s: not idempotent (%llu -> %llu tokens)", type.c_str(),
               r2->content_type.c_str(), (unsigned long long)r2->tokens_before, (unsigned long long)r2->tokens_after);
  }

  // Chunk-size invariance of the streaming path.
  if (flags & 8) {
    auto source = NewChunkedSource(in, flags >> 4, 1 + (flags >> 4) * 7);
    StringSink sink;
    CompressOptions streamed = o;
    streamed.external_recovery = true;  // same output; avoids a second store record
    auto rs = engine.Compress(*source, streamed, sink);
    FUZZ_CHECK(rs.ok(), "type=%s: %s", type.c_str(), rs.status().ToString().c_str());
    FUZZ_CHECK(sink.data() == out, "type=%s: chunked read changed the output", type.c_str());
    FUZZ_CHECK(rs->tokens_after == res.tokens_after && rs->method == res.method && rs->content_type == res.content_type,
               "type=%s: chunked read changed the report", type.c_str());
  }

  // Exact store round trip.
  if (!res.recovery_handle.empty()) {
    StringSink back;
    Status s = engine.Retrieve(res.recovery_handle, back);
    FUZZ_CHECK(s.ok(), "retrieve: %s", s.ToString().c_str());
    FUZZ_CHECK(back.data() == in, "retrieve returned different bytes");
  }
  return 0;
}
