#!/usr/bin/env python3
"""Deterministic adversarial inputs for token counting (issue 15 item 11).

  scripts/gen_adversarial.py KIND MIB [SEED] > FILE
  scripts/gen_adversarial.py --list

Each KIND is `random.Random(SEED)` choices from one alphabet (or one fixed pattern), encoded
as UTF-8 and cut at exactly MIB MiB (so the last code point may be cut; the counter must
handle that too). The default seed is 1234. docs/PERFORMANCE.md measures these.
"""
import random
import string
import sys


def chars(alphabet):
    def gen(rng, n):
        out = bytearray()
        while len(out) < n:
            out += "".join(rng.choices(alphabet, k=65536)).encode("utf-8", "surrogatepass")
        return bytes(out[:n])

    return gen


def code_points(lo, hi):
    return chars([chr(c) for c in range(lo, hi + 1)])


def raw_bytes(lo, hi):
    def gen(rng, n):
        return bytes(rng.randrange(lo, hi + 1) for _ in range(n))

    return gen


def repeat(pattern):
    def gen(rng, n):
        return (pattern * (n // len(pattern) + 1))[:n]

    return gen


def quoted_words(lo, hi):
    """Random a-z words of lo..hi bytes, each between apostrophes ('word'word'...)."""

    def gen(rng, n):
        out = bytearray()
        letters = string.ascii_lowercase
        while len(out) < n:
            out += b"'" + "".join(rng.choices(letters, k=rng.randint(lo, hi))).encode()
        return bytes(out[:n])

    return gen


def symbol_runs(rng, n):
    """Runs of 100..3000 of one of - = * / # between single '=' (one long piece)."""
    out = bytearray()
    while len(out) < n:
        out += rng.choice(b"-=*/#").to_bytes(1, "big") * rng.randint(100, 3000) + b"="
    return bytes(out[:n])


def rule_lines(rng, n):
    """Lines of 65..400 of one of - = * # ~ _ after a comment lead, ending in a newline or ' x '."""
    out = []
    size = 0
    while size < n:
        length = rng.randint(65, 400)
        c = rng.choice("-=*#~_")
        line = rng.choice(["// ", "# ", " ", "* ", "-- "]) + c * length + rng.choice(["\n", " x ", "\n\n"])
        out.append(line)
        size += len(line)
    return "".join(out).encode()[:n]


def latin1_words(rng, n):
    """Words with Latin-1 bytes for é and ï (ill-formed UTF-8), space separated."""
    words = [b"caf\xe9", b"na\xefve", b"r\xe9sum\xe9", b"d\xe9j\xe0", b"plain", b"words"]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + b" "
    return bytes(out[:n])


def urandom_like(rng, n):
    return rng.randbytes(n)


KINDS = {
    "lower": chars(string.ascii_lowercase),
    "mixed": chars(string.ascii_letters),
    "digits": chars(string.digits),
    "hex": chars("0123456789abcdef"),
    "punct": chars(string.punctuation),
    "ws": chars(" \t\n\r"),
    "cjk": code_points(0x4E00, 0x9FFE),
    "cyr": code_points(0x0430, 0x044F),
    "latin1": code_points(0x00C0, 0x00FF),
    "emoji": code_points(0x1F300, 0x1F5FE),
    "greek": code_points(0x03B1, 0x03C9),
    "arabic": code_points(0x0627, 0x064A),
    "thai": code_points(0x0E01, 0x0E2E),
    "lowsp": chars(string.ascii_lowercase + " " * 6),
    "ascii": chars([chr(c) for c in range(0x20, 0x7F)]),
    "b64": chars(string.ascii_letters + string.digits + "+/"),
    "apos": chars(string.ascii_lowercase + "'"),
    "apos200": quoted_words(100, 300),
    "ab": chars("ab"),
    "abcd": chars("abcd"),
    "sptab": chars(" \t"),
    "slash": chars("/"),
    "hibytes": raw_bytes(0x80, 0xFF),
    "ur": urandom_like,
    "aaa": repeat(b"a"),
    "spaces": repeat(b" "),
    "nl": repeat(b"\n"),
    "dots": repeat(b"."),
    "crlf": repeat(b"\r\n"),
    "lat1enc": latin1_words,
    "dashes": repeat(b"-"),
    "equals": repeat(b"="),
    "stars": repeat(b"*"),
    "tabs": repeat(b"\t"),
    "symruns": symbol_runs,
    "spdash140": repeat(b"-" * 140 + b" x "),
    "spdash200": repeat(b"-" * 200 + b" x "),
    "speq250": repeat(b"=" * 250 + b" x "),
    "spslash250": repeat(b"/" * 250 + b" x "),
    "rules": rule_lines,
}


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        print(" ".join(KINDS))
        return 0
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in KINDS:
        sys.stderr.write(__doc__)
        return 2
    n = int(float(sys.argv[2]) * 1024 * 1024)
    seed = int(sys.argv[3]) if len(sys.argv) == 4 else 1234
    sys.stdout.buffer.write(KINDS[sys.argv[1]](random.Random(seed), n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
