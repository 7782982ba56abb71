#include "store/internal/writer_identity.h"

#include <sys/random.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace caveman::internal {
namespace {

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// Field 22 (starttime) of /proc/<pid>/stat; "" when the process does not exist.
std::string StartTime(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  if (!f) return "";
  std::stringstream ss;
  ss << f.rdbuf();
  std::string stat = ss.str();
  // The command name (field 2) is in parentheses and may contain spaces: skip past the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return "";
  }
  return field;
}

}  // namespace

std::string CurrentWriterIdentity() {
  const long pid = static_cast<long>(getpid());
  return HostName() + ":" + std::to_string(pid) + ":" + StartTime(pid);
}

bool WriterAlive(std::string_view identity) {
  const size_t a = identity.find(':');
  const size_t b = a == std::string_view::npos ? a : identity.find(':', a + 1);
  if (b == std::string_view::npos) return false;
  if (identity.substr(0, a) != HostName()) return false;
  long pid = 0;
  std::string_view pid_text = identity.substr(a + 1, b - a - 1);
  auto [ptr, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
  if (ec != std::errc() || ptr != pid_text.data() + pid_text.size() || pid <= 0) return false;
  const std::string start = StartTime(pid);
  return !start.empty() && start == identity.substr(b + 1);
}

bool WriterOnThisHost(std::string_view identity) {
  const size_t a = identity.find(':');
  return a != std::string_view::npos && identity.substr(0, a) == HostName();
}

std::string WriterDisplay(std::string_view identity) {
  const size_t a = identity.find(':');
  const size_t b = a == std::string_view::npos ? a : identity.find(':', a + 1);
  return std::string(identity.substr(0, b));
}

std::string NewPartialId() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof bytes) {  // no getrandom: std::random_device (also the kernel's source)
    std::random_device rd;
    for (unsigned char& c : bytes) c = static_cast<unsigned char>(rd());
  }
  static const char kHex[] = "0123456789abcdef";
  std::string id = "part_";
  for (unsigned char c : bytes) {
    id.push_back(kHex[c >> 4]);
    id.push_back(kHex[c & 15]);
  }
  return id;
}

}  // namespace caveman::internal
