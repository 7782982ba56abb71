#!/usr/bin/env python3
"""View accounting for tests/cli/follow_real_fixtures.sh (standard library only).

Usage: follow_check.py FIXTURE VIEW TYPE

Walks the view of `compress --follow` of FIXTURE (a line type: log, terminal, repetition)
line by line (§4.1 split on LF, one final LF dropped; a line keeps its CR). Each view line is
  - the next fixture line, verbatim (terminal: or that line after the §5.16 cleanup: final CR
    detached, a line with CR replaced by its last non-empty CR segment, ANSI/OSC/ESC sequences
    deleted, CR re-attached): accounts for 1 fixture line;
  - `… N lines elided (caveman)[: summary] …`: accounts for N fixture lines;
  - `… caveman: N identical lines elided …`: accounts for N fixture lines, each equal to the
    fixture line before them;
  - the contract note, `… caveman: elided …`, only as the last view line: accounts for none.
The lines accounted for must equal the fixture's line count. For log, every fixture line that
matches the log keep pattern (KEEP below) must be shown verbatim, or (when it repeats the
previous fixture line) be inside an identical-lines marker.

Prints one line of JSON: lines, kept, elided, markers, identical_markers, errors (a list of
readable messages, at most 20). Exit 0 if there are no errors, 1 otherwise.
"""
import json
import re
import sys

KEEP = re.compile(
    r'(?i)(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b'
    r'|^\s+at\s|^\s+File "|\.go:\d+|^\s+--->|caused by)')
ELIDED = re.compile(rb'^\xe2\x80\xa6 ([0-9]+) lines elided \(caveman\)(?:: .*)? \xe2\x80\xa6\r?$')
IDENTICAL = re.compile(rb'^\xe2\x80\xa6 caveman: ([0-9]+) identical lines elided \xe2\x80\xa6\r?$')
NOTE = b'\xe2\x80\xa6 caveman: elided '
# Spec §5.16: CSI, OSC (BEL or ST terminated), two-byte ESC sequences.
ANSI = re.compile(rb'\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\x5c-_]')


def split_lines(data):
    """§4.1: drop one final LF, split on LF (empty input: no lines)."""
    if not data:
        return []
    if data.endswith(b'\n'):
        data = data[:-1]
    return data.split(b'\n')


def clean_terminal(line):
    final_cr = line.endswith(b'\r')
    if final_cr:
        line = line[:-1]
    if b'\r' in line:
        segs = [s for s in line.split(b'\r') if s]
        line = segs[-1] if segs else b''
    line = ANSI.sub(b'', line)
    return line + (b'\r' if final_cr else b'')


def short(b, n=100):
    s = b.decode('utf-8', 'replace')
    return repr(s if len(s) <= n else s[:n] + '...')


def main():
    fixture, view_path, ctype = sys.argv[1], sys.argv[2], sys.argv[3]
    src = split_lines(open(fixture, 'rb').read())
    view = split_lines(open(view_path, 'rb').read())
    errors = []

    def err(msg):
        if len(errors) < 20:
            errors.append(msg)

    # how[i]: 'shown' (verbatim or cleaned), 'identical', 'elided'
    how = [None] * len(src)
    pos = kept = elided = markers = identical = 0
    for vi, line in enumerate(view):
        m = ELIDED.match(line)
        mi = IDENTICAL.match(line)
        if m or mi:
            n = int((m or mi).group(1))
            if n <= 0:
                err('view line %d: marker for %d lines' % (vi + 1, n))
            if pos + n > len(src):
                err('view line %d: marker for %d lines at fixture line %d runs past the end '
                    '(%d lines)' % (vi + 1, n, pos + 1, len(src)))
                n = max(0, len(src) - pos)
            if mi:
                identical += 1
                prev = src[pos - 1] if pos > 0 else None
                for i in range(pos, pos + n):
                    if src[i] != prev:
                        err('view line %d: identical-lines marker covers fixture line %d %s, '
                            'which differs from line %d' % (vi + 1, i + 1, short(src[i]), pos))
                        break
                for i in range(pos, pos + n):
                    how[i] = 'identical'
            else:
                for i in range(pos, pos + n):
                    how[i] = 'elided'
            markers += 1
            elided += n
            pos += n
            continue
        if line.startswith(NOTE):
            if vi != len(view) - 1:
                err('view line %d: contract note is not the last line' % (vi + 1))
            continue
        if pos >= len(src):
            err('view line %d %s: past the end of the fixture' % (vi + 1, short(line)))
            pos += 1
            continue
        want = src[pos]
        if line == want or (ctype == 'terminal' and line == clean_terminal(want)):
            how[pos] = 'shown'
            kept += 1
        else:
            err('view line %d %s is not fixture line %d %s' % (vi + 1, short(line), pos + 1,
                                                                short(want)))
        pos += 1
    if pos != len(src):
        err('the view accounts for %d lines, the fixture has %d' % (pos, len(src)))

    keep_lines = 0
    if ctype == 'log':
        for i, line in enumerate(src):
            if not KEEP.search(line.decode('utf-8', 'surrogateescape')):
                continue
            keep_lines += 1
            if how[i] == 'shown':
                continue
            if how[i] == 'identical' and i > 0 and src[i - 1] == line:
                continue
            err('fixture line %d matches the keep pattern but is %s: %s'
                % (i + 1, how[i] or 'not accounted for', short(line)))

    print(json.dumps({'lines': len(src), 'kept': kept, 'elided': elided, 'markers': markers,
                      'identical_markers': identical, 'keep_pattern_lines': keep_lines,
                      'errors': errors}))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
