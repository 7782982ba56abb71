// store migrate (issue 18): see store_migrate.h.
#include "cli/internal/store_migrate.h"

#include <cstdio>
#include <memory>
#include <string>

#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "stream/json_writer.h"
#include "stream/sha256.h"

namespace caveman::internal {
namespace {

constexpr size_t kPage = 100;  // records listed per round trip

int Fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

// Hashes and counts what passes through; with a writer, appends it there as well.
class HashingSink final : public ByteSink {
 public:
  explicit HashingSink(RecordWriter* writer) : writer_(writer) {}
  Status Write(std::string_view data) override {
    sha_.Update(data);
    bytes_ += data.size();
    return writer_ == nullptr ? Status::OK() : writer_->Append(data);
  }
  std::string Handle() { return HandleFromDigest(sha_.Final()); }
  uint64_t bytes() const { return bytes_; }

 private:
  RecordWriter* writer_;
  Sha256 sha_;
  uint64_t bytes_ = 0;
};

// sqlite:PATH or a PostgreSQL URL, on top of the environment's capacity and zstd level.
Result<std::unique_ptr<RecoveryStore>> OpenSpec(const std::string& spec, const StoreOptions& base) {
  StoreOptions o = base;
  o.url.clear();
  o.path.clear();
  if (spec.starts_with("sqlite:") && spec.size() > 7) {
    o.path = spec.substr(7);
  } else if (IsPostgresUrl(spec)) {
    o.url = spec;
  } else {
    return Status::InvalidArgument("store migrate: expected sqlite:PATH or a postgresql:// URL, got \"" +
                                   RedactUrl(spec) + "\"");
  }
  return OpenRecoveryStore(o);
}

// Copies one record; "" on success, else why not.
std::string CopyRecord(RecoveryStore& from, RecoveryStore& to, const RecordListing& rec) {
  auto writer = to.BeginRecord();
  if (!writer.ok()) return writer.status().message();
  HashingSink copy(writer->get());
  // Get writes only a verified original (checksum, length, SHA-256 prefix = handle).
  Status st = from.Get(rec.handle, copy);
  if (!st.ok()) {
    (*writer)->Abandon();
    return "source: " + st.message();
  }
  if (copy.bytes() != rec.original_bytes || copy.Handle() != rec.handle) {
    (*writer)->Abandon();
    return "source: the original read does not match its handle";
  }
  // Commit checks the handle against the bytes appended once more.
  st = (*writer)->Commit(rec.handle, rec.info);
  if (!st.ok()) return "destination: " + st.message();
  HashingSink back(nullptr);
  st = to.Get(rec.handle, back);
  if (!st.ok()) return "destination read-back: " + st.message();
  if (back.bytes() != rec.original_bytes || back.Handle() != rec.handle) {
    return "destination read-back: checksum mismatch";
  }
  return "";
}

}  // namespace

int RunStoreMigrate(const std::vector<std::string>& args) {
  std::string from_spec, to_spec;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string* target = nullptr;
    std::string value;
    if (a == "--from" || a == "--to") {
      if (i + 1 >= args.size()) return Fail(std::string(kStoreMigrateUsage));
      target = a == "--from" ? &from_spec : &to_spec;
      value = args[++i];
    } else if (a.starts_with("--from=") || a.starts_with("--to=")) {
      target = a.starts_with("--from=") ? &from_spec : &to_spec;
      value = a.substr(a.find('=') + 1);
    } else if (a == "-h" || a == "--help") {
      std::string help = std::string(kStoreMigrateUsage) +
                         "\nCopies every complete record from one recovery store to another, verifying each"
                         "\nby checksum; records already at the destination are skipped (rerun to resume)."
                         "\nPrints {\"migrated\":N,\"skipped\":N,\"failed\":N,\"original_bytes\":B}. Exit 0 when"
                         "\nevery record is at the destination, 1 otherwise.\n";
      std::fwrite(help.data(), 1, help.size(), stdout);
      return 0;
    } else {
      return Fail(std::string(kStoreMigrateUsage));
    }
    *target = std::move(value);
  }
  if (from_spec.empty() || to_spec.empty()) return Fail(std::string(kStoreMigrateUsage));
  if (from_spec == to_spec) return Fail("store migrate: --from and --to name the same store");

  auto base = StoreOptions::FromEnv();
  if (!base.ok()) return Fail("store migrate: " + base.status().message());
  auto from = OpenSpec(from_spec, *base);
  if (!from.ok()) return Fail("store migrate: --from: " + from.status().message());
  auto to = OpenSpec(to_spec, *base);
  if (!to.ok()) return Fail("store migrate: --to: " + to.status().message());

  uint64_t migrated = 0, skipped = 0, failed = 0, bytes = 0;
  std::string after;
  for (;;) {
    auto page = (*from)->ListRecords(after, kPage);
    if (!page.ok()) return Fail("store migrate: --from: " + page.status().message());
    if (page->empty()) break;
    for (const RecordListing& rec : *page) {
      after = rec.handle;
      // Resumable: a record the destination holds was verified when it was copied.
      auto present = (*to)->GetMetadata(rec.handle);
      if (present.ok()) {
        ++skipped;
        continue;
      }
      if (present.status().code() != StatusCode::kNotFound) {
        return Fail("store migrate: --to: " + present.status().message());
      }
      std::string why = CopyRecord(**from, **to, rec);
      if (!why.empty()) {
        ++failed;
        std::fprintf(stderr, "store migrate: %s: %s\n", rec.handle.c_str(), why.c_str());
        continue;
      }
      ++migrated;
      bytes += rec.original_bytes;
    }
  }
  JsonWriter summary;
  summary.BeginObject().Key("migrated").Uint(migrated).Key("skipped").Uint(skipped).Key("failed").Uint(failed);
  summary.Key("original_bytes").Uint(bytes).EndObject();
  const std::string line = summary.Take() + "\n";
  const bool wrote = std::fwrite(line.data(), 1, line.size(), stdout) == line.size() && std::fflush(stdout) == 0;
  if (!wrote) return Fail("write stdout: cannot write the summary");
  return failed == 0 ? 0 : 1;
}

}  // namespace caveman::internal
