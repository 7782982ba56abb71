#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds the examples/ consumers against it —
# once with find_package(caveman_engine) (CMake package) and once with pkg-config — then runs
# them: the streaming example must reproduce the seed's golden CLI output byte for byte, and
# the round-trip example must retrieve the exact original.
# Usage: consumer_test.sh <build dir>
set -euo pipefail
BUILD=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$BUILD" --prefix "$prefix" >"$work/install.log"
for f in include/caveman/engine/engine.h include/caveman/stream/status.h lib/cmake/caveman_engine/caveman_engineConfig.cmake \
         lib/pkgconfig/caveman-engine.pc share/doc/caveman-engine/o200k/NOTICE; do
  [[ -f $prefix/$f ]] || { echo "FAIL: $f not installed"; exit 1; }
done
[[ -z $(find "$prefix/include" -path '*internal*') ]] || { echo "FAIL: internal headers installed"; exit 1; }
# Installed headers include each other under the caveman/ prefix only (issue 17).
stray=$(grep -rhE '^#include "' "$prefix/include" | grep -v '^#include "caveman/' || true)
[[ -z $stray ]] || { echo "FAIL: installed headers include unprefixed paths:"; echo "$stray"; exit 1; }

# Only caveman:: symbols leave the shared object (cmake/templates/caveman_engine.map).
lib=$(readlink -f "$prefix"/lib/libcaveman_engine.so)
foreign=$(nm -D --defined-only -C "$lib" | awk '{ $1 = ""; $2 = ""; print }' | grep -v 'caveman::' | grep -v '^ *CAVEMAN_' || true)
[[ -z $foreign ]] || { echo "FAIL: non-caveman symbols exported:"; echo "$foreign" | head; exit 1; }

# 1. CMake package.
cmake -S "$SRC/examples" -B "$work/ex" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/ex" >"$work/build.log"
export CAVEMAN_HOME=$work/home
unset CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON
golden=$SRC/tests/cli/cases/seed-repetition
"$work/ex/compress_stream" repetition <"$SRC/fixtures/seed/pytest.log" >"$work/view" 2>"$work/report"
cmp "$work/view" "$golden/stdout.exact" || { echo "FAIL: compress_stream view differs from the CLI golden"; exit 1; }
cmp "$work/report" "$golden/stderr.exact" || { echo "FAIL: compress_stream report differs"; cat "$work/report"; exit 1; }
echo "ok   find_package consumer: seed view and report identical to the CLI golden"
"$work/ex/roundtrip" "$SRC/fixtures/seed/orders.json" | tee "$work/rt"
grep -q "identical" "$work/rt" || { echo "FAIL: roundtrip did not retrieve the original"; exit 1; }
# The static library (caveman::engine_static): no libcaveman_engine.so in NEEDED.
"$work/ex/roundtrip_static" "$SRC/fixtures/seed/orders.json" | tee "$work/rt_static"
grep -q "identical" "$work/rt_static" || { echo "FAIL: roundtrip_static did not retrieve the original"; exit 1; }
[[ -f $prefix/lib/libcaveman_engine.a ]] || { echo "FAIL: libcaveman_engine.a not installed"; exit 1; }
if readelf -d "$work/ex/roundtrip_static" | grep -q 'libcaveman_engine'; then
  echo "FAIL: roundtrip_static links the shared library"; exit 1
fi
echo "ok   static library consumer (caveman::engine_static)"
# A consumer whose own stream/status.h comes first on its include path (examples/own_headers/).
"$work/ex/own_headers" <"$SRC/fixtures/seed/pytest.log" | tee "$work/own"
grep -q '^compressed ' "$work/own" || { echo "FAIL: own_headers consumer"; exit 1; }
echo "ok   consumer with its own stream/status.h (CMake package)"

# 2. pkg-config, with the oldest standard the headers promise (C++17).
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[[ $(pkg-config --modversion caveman-engine) == "$(sed -n 's/^project(caveman_engine VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")" ]] \
  || { echo "FAIL: pkg-config version"; exit 1; }
# shellcheck disable=SC2046
c++ -std=c++17 -Wall -Werror -o "$work/roundtrip_pc" "$SRC/examples/roundtrip.cc" \
  $(pkg-config --cflags --libs caveman-engine) -Wl,-rpath,"$prefix/lib"
"$work/roundtrip_pc" "$SRC/fixtures/seed/pytest.log" | tee "$work/rt2"
grep -q identical "$work/rt2" || { echo "FAIL: pkg-config roundtrip"; exit 1; }
# shellcheck disable=SC2046
c++ -std=c++17 -Wall -Werror -I"$SRC/examples/own_headers" -o "$work/own_pc" "$SRC/examples/own_headers.cc" \
  $(pkg-config --cflags --libs caveman-engine) -Wl,-rpath,"$prefix/lib"
"$work/own_pc" <"$SRC/fixtures/seed/pytest.log" | grep -q '^compressed ' || { echo "FAIL: pkg-config own_headers"; exit 1; }
echo "ok   pkg-config consumer (C++17)"

# 3. Version macros (<caveman/version.h>, issue 17): what the consumer compiled against, what
# the library says, and what the installed CLI prints are one string.
cat >"$work/version.cc" <<'CC'
#include <cstdio>
#include <cstring>
#include <caveman/engine/engine.h>
#include <caveman/version.h>
static_assert(CAVEMAN_VERSION_MAJOR >= 0 && CAVEMAN_VERSION_MINOR >= 0 && CAVEMAN_VERSION_PATCH >= 0, "numbers");
int main() {
  std::printf("%d.%d.%d %s %s\n", CAVEMAN_VERSION_MAJOR, CAVEMAN_VERSION_MINOR, CAVEMAN_VERSION_PATCH,
              CAVEMAN_VERSION_STRING, caveman::LibraryVersion());
  return std::strcmp(CAVEMAN_VERSION_STRING, caveman::LibraryVersion()) == 0 ? 0 : 1;
}
CC
# shellcheck disable=SC2046
c++ -std=c++17 -Wall -Werror -o "$work/version" "$work/version.cc" $(pkg-config --cflags --libs caveman-engine) \
  -Wl,-rpath,"$prefix/lib"
v=$("$prefix/bin/caveman-engine" --version)
[[ $("$work/version") == "$v $v $v" ]] || { echo "FAIL: version macros / LibraryVersion / CLI differ: $("$work/version") vs $v"; exit 1; }
[[ $("$prefix/bin/caveman-engine" version) == "$v" ]] || { echo "FAIL: version subcommand"; exit 1; }
echo "ok   version macros = LibraryVersion() = caveman-engine --version ($v)"
