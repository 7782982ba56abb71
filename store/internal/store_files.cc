#include "store/internal/store_files.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace caveman::internal {
namespace {

constexpr mode_t kDirMode = 0700;
constexpr mode_t kFileMode = 0600;
constexpr size_t kPwBufferSize = 16384;

std::string Errno(int err) { return std::strerror(err); }

std::string ParentDir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Issue 15: a database or companion owned by another user is refused (in a sticky shared
// directory that user could have planted ccr.db or a -wal and read the originals back).
Status CheckOwner(const std::string& path, const struct stat& st) {
  if (st.st_uid != ::geteuid()) {
    return Status::IoError(path + " is owned by another user (uid " + std::to_string(st.st_uid) + ")");
  }
  return Status::OK();
}

// Sets an existing regular file to 0600. Path-based (lstat + chmod), never open()+close():
// closing any descriptor of a file drops every POSIX lock this process holds on it, including
// SQLite's locks on -shm/-wal of an open connection, which let another process "recover" and
// truncate the shared-memory file under our mapping (SIGBUS, seen with 8 concurrent writers).
// `missing_ok`: SQLite may delete -wal/-shm between our checks (last connection closing).
// `fix_modes` false (read-only operations: retrieve, stats): check only, never chmod.
Status SecureExisting(const std::string& path, bool missing_ok, bool fix_modes = true) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT && missing_ok) return Status::OK();
    return Status::IoError("stat " + path + ": " + Errno(errno));
  }
  if (S_ISLNK(st.st_mode)) return Status::IoError(path + " is a symbolic link");
  if (!S_ISREG(st.st_mode)) return Status::IoError(path + " is not a regular file");
  CAVEMAN_RETURN_IF_ERROR(CheckOwner(path, st));
  if (fix_modes && (st.st_mode & 07777) != kFileMode && ::chmod(path.c_str(), kFileMode) != 0) {
    if (errno == ENOENT && missing_ok) return Status::OK();
    return Status::IoError("chmod " + path + ": " + Errno(errno));
  }
  return Status::OK();
}

// lstat-based check: missing is fine, a link or a non-regular file is refused.
Status CheckNotLink(const std::string& path, bool* exists) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      *exists = false;
      return Status::OK();
    }
    return Status::IoError("lstat " + path + ": " + Errno(errno));
  }
  *exists = true;
  if (S_ISLNK(st.st_mode)) return Status::IoError(path + " is a symbolic link");
  if (!S_ISREG(st.st_mode)) return Status::IoError(path + " is not a regular file");
  return CheckOwner(path, st);
}

Status SecureIfPresent(const std::string& path, bool fix_modes) {
  bool exists = false;
  CAVEMAN_RETURN_IF_ERROR(CheckNotLink(path, &exists));
  if (!exists) return Status::OK();
  return SecureExisting(path, /*missing_ok=*/true, fix_modes);
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<ResolvedLocation> ResolveLocation(const EnvLookup& env) {
  ResolvedLocation loc;
  if (auto db = env("CAVEMAN_CCR_DB"); db && !db->empty()) {
    loc.db_path = *db;
    return loc;
  }
  if (auto home = env("CAVEMAN_HOME"); home && !home->empty()) {
    loc.home_dir = *home;
  } else {
    std::string user_home;
    if (auto h = env("HOME"); h && !h->empty()) {
      user_home = *h;
    } else {
      struct passwd pw;
      struct passwd* found = nullptr;
      std::vector<char> buf(kPwBufferSize);
      int err = ::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found);
      if (err != 0) return Status::IoError("cannot resolve home directory: " + Errno(err));
      if (found == nullptr || found->pw_dir == nullptr || found->pw_dir[0] == '\0') {
        return Status::IoError("cannot resolve home directory: no home directory for uid " +
                               std::to_string(::getuid()));
      }
      user_home = found->pw_dir;
    }
    loc.home_dir = user_home + "/.caveman";
  }
  loc.db_path = loc.home_dir + "/ccr.db";
  return loc;
}

Status CreateHomeDir(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::OK();
    return Status::IoError("cannot create ~/.caveman: mkdir " + dir + ": " + Errno(EEXIST));
  }
  if (errno != ENOENT) {
    return Status::IoError("cannot create ~/.caveman: stat " + dir + ": " + Errno(errno));
  }
  std::string parent = ParentDir(dir);
  if (parent != dir && parent != "." && parent != "/") {
    CAVEMAN_RETURN_IF_ERROR(CreateHomeDir(parent));
  }
  if (::mkdir(dir.c_str(), kDirMode) != 0 && errno != EEXIST) {
    return Status::IoError("cannot create ~/.caveman: mkdir " + dir + ": " + Errno(errno));
  }
  // The umask may have removed bits we want (never added any); make the mode exact.
  if (::chmod(dir.c_str(), kDirMode) != 0) {
    return Status::IoError("cannot create ~/.caveman: chmod " + dir + ": " + Errno(errno));
  }
  return Status::OK();
}

std::optional<uint64_t> ParsePositiveDecimal(const std::string& s) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (v == 0) return std::nullopt;
  return v;
}

Status PrepareDbFiles(const std::string& db_path, bool fix_modes) {
  std::string parent = ParentDir(db_path);
  struct stat pst;
  if (::stat(parent.c_str(), &pst) != 0) {
    return Status::IoError("stat " + parent + ": " + Errno(errno));
  }
  if (!S_ISDIR(pst.st_mode)) return Status::IoError(parent + " is not a directory");
  // Anyone who can write the directory could swap the database for a link or their own file.
  if ((pst.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (pst.st_mode & S_ISVTX) == 0) {
    return Status::IoError("directory " + parent + " is group- or world-writable");
  }

  bool exists = false;
  CAVEMAN_RETURN_IF_ERROR(CheckNotLink(db_path, &exists));
  bool wal_exists = false, shm_exists = false;
  CAVEMAN_RETURN_IF_ERROR(CheckNotLink(db_path + "-wal", &wal_exists));
  CAVEMAN_RETURN_IF_ERROR(CheckNotLink(db_path + "-shm", &shm_exists));

  if (!exists) {
    int fd = ::open(db_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode);
    if (fd >= 0) {
      Status s;
      if (::fchmod(fd, kFileMode) != 0) s = Status::IoError("chmod " + db_path + ": " + Errno(errno));
      ::close(fd);
      CAVEMAN_RETURN_IF_ERROR(s);
    } else if (errno != EEXIST) {  // EEXIST: another process created it just now
      return Status::IoError("create " + db_path + ": " + Errno(errno));
    }
  }
  CAVEMAN_RETURN_IF_ERROR(SecureExisting(db_path, /*missing_ok=*/false, fix_modes));
  return SecureCompanions(db_path, fix_modes);
}

Status SecureCompanions(const std::string& db_path, bool fix_modes) {
  CAVEMAN_RETURN_IF_ERROR(SecureIfPresent(db_path + "-wal", fix_modes));
  return SecureIfPresent(db_path + "-shm", fix_modes);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool DbIsWritable(const std::string& db_path) {
  if (!FileExists(db_path)) return true;
  return ::access(db_path.c_str(), W_OK) == 0 && ::access(ParentDir(db_path).c_str(), W_OK) == 0;
}

std::string SqliteFileUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[static_cast<unsigned char>(c) >> 4];
      uri += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      uri += c;
    }
  }
  return uri;
}

}  // namespace caveman::internal
