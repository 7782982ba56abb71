// libFuzzer target for the recovery store (§6): a record appended in fuzzer-chosen pieces
// round-trips exactly, its metadata too; a second put of the same bytes keeps one record;
// a handle that does not match the bytes is refused.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "stream/sha256.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
std::string HandleOf(std::string_view bytes) {
  return "ccr_" + caveman::Sha256::Hex(caveman::Sha256::Digest(bytes)).substr(0, 32);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  static std::unique_ptr<RecoveryStore>* store = [] {
    StoreOptions o;
    o.spool_memory_limit = 256;  // exercise the spill path too
    auto s = OpenMemoryStore(o);
    FUZZ_CHECK(s.ok(), "%s", s.status().ToString().c_str());
    return new std::unique_ptr<RecoveryStore>(std::move(s).value());
  }();
  static size_t runs = 0;
  if (++runs % 5000 == 0) {
    auto s = OpenMemoryStore();
    FUZZ_CHECK(s.ok(), "%s", s.status().ToString().c_str());
    *store = std::move(s).value();
  }
  std::string_view in = fuzz::AsView(data, size);
  const uint8_t piece = fuzz::TakeByte(&in) | 1;
  const std::string handle = HandleOf(in);

  for (int put = 0; put < 2; ++put) {
    auto w = (*store)->BeginRecord();
    FUZZ_CHECK(w.ok(), "%s", w.status().ToString().c_str());
    for (size_t pos = 0; pos < in.size(); pos += piece) {
      Status s = (*w)->Append(in.substr(pos, piece));
      FUZZ_CHECK(s.ok(), "%s", s.ToString().c_str());
    }
    RecordInfo info{.content_type = "text",
                    .compressor = "text",
                    .tokens_before = 2,
                    .tokens_after = 1,
                    .metadata = std::string(in.substr(0, 16))};
    Status s = (*w)->Commit(handle, info);
    FUZZ_CHECK(s.ok(), "commit: %s", s.ToString().c_str());
  }
  StringSink back;
  Status s = (*store)->Get(handle, back);
  FUZZ_CHECK(s.ok(), "get: %s", s.ToString().c_str());
  FUZZ_CHECK(back.data() == in, "round trip changed the bytes");
  auto meta = (*store)->GetMetadata(handle);
  FUZZ_CHECK(meta.ok() && *meta == in.substr(0, 16), "metadata changed");

  // A handle that is not the SHA-256 prefix of the bytes is refused.
  auto w = (*store)->BeginRecord();
  FUZZ_CHECK(w.ok(), "%s", w.status().ToString().c_str());
  FUZZ_CHECK((*w)->Append(in).ok(), "append");
  std::string wrong = HandleOf(std::string(in) + "x");
  FUZZ_CHECK(!(*w)->Commit(wrong, RecordInfo{.content_type = "text"}).ok(), "commit accepted a handle of other bytes");
  (*w)->Abandon();
  return 0;
}
