#include "store/internal/timestamp.h"

#include <cstdint>
#include <cstdio>
#include <ctime>

namespace caveman::internal {
namespace {

constexpr int64_t kNanosPerSecond = 1000000000;
constexpr int64_t kSecondsPerDay = 86400;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`.
bool Digits(std::string_view s, size_t& pos, size_t n, int64_t* out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

UnixNanos NowNanos() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

std::string FormatRfc3339(UnixNanos t) {
  int64_t secs = t / kNanosPerSecond;
  int64_t nanos = t % kNanosPerSecond;
  if (nanos < 0) {
    nanos += kNanosPerSecond;
    --secs;
  }
  time_t tt = static_cast<time_t>(secs);
  struct tm tm;
  ::gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(nanos));
  return buf;
}

std::optional<UnixNanos> ParseRfc3339(std::string_view s) {
  size_t pos = 0;
  int64_t year, month, day, hour, minute, second;
  if (!Digits(s, pos, 4, &year) || !Expect(s, pos, '-') || !Digits(s, pos, 2, &month) || !Expect(s, pos, '-') ||
      !Digits(s, pos, 2, &day)) {
    return std::nullopt;
  }
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!Digits(s, pos, 2, &hour) || !Expect(s, pos, ':') || !Digits(s, pos, 2, &minute) || !Expect(s, pos, ':') ||
      !Digits(s, pos, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, static_cast<unsigned>(month)) || hour > 23 ||
      minute > 59 || second > 60) {  // 60: leap second, counted as the next second like most parsers do
    return std::nullopt;
  }
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t scale = kNanosPerSecond;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (scale > 1) {
        scale /= 10;
        nanos += (s[pos] - '0') * scale;
      }
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t oh, om;
    if (!Digits(s, pos, 2, &oh) || !Expect(s, pos, ':') || !Digits(s, pos, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_seconds = sign * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  int64_t secs = days * kSecondsPerDay + hour * 3600 + minute * 60 + second - offset_seconds;
  // Outside int64 nanoseconds (before 1678 or after 2262): saturate, the order still holds.
  if (secs >= INT64_MAX / kNanosPerSecond) return INT64_MAX;
  if (secs <= INT64_MIN / kNanosPerSecond) return INT64_MIN;
  return secs * kNanosPerSecond + nanos;
}

}  // namespace caveman::internal
