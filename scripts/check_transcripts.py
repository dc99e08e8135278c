#!/usr/bin/env python3
"""Checks that the docs' command transcripts print what the CLI prints today.

A transcript is a ```console block right after a `<!-- transcript -->` line; each of its
`$ paraplan ...` commands is run through the real CLI against SERVER (a fresh server
with the built-in profiles), from the repository root, in the order of the files and
blocks (a transcript may rely on what earlier ones stored), and its output (stdout, then
stderr) compared line by line with the lines under it. Search times (`in 0.083 s`),
timestamps, operation ids and the server's address are not compared; a line `...` (or
`…`) stands for any lines. --update leaves blocks with such lines alone.

  check_transcripts.py --cli PATH --server HOST:PORT FILE.md...   exit 1 on a difference
  check_transcripts.py ... --update FILE.md...                     rewrite the outputs

Commands with shell syntax (pipes, redirections, `;`) cannot be checked and are refused.

A ```console or ```sh block after `<!-- transcript: http -->` holds curl commands against
the HTTP port as docs/api.md shows them: each runs in bash (pipes to jq and sed allowed)
with `http://127.0.0.1:8080` replaced by HTTP (--http, or $PARAPLAN_TEST_HTTP).
"""
import argparse
import difflib
import re
import shlex
import subprocess
import sys

MARK = '<!-- transcript -->'
MARK_HTTP = '<!-- transcript: http -->'
FENCE = re.compile(r'^( *)```(?:console|sh)\n(.*?)^\1```\n', re.S | re.M)
TIME = re.compile(r'in [0-9]+(\.[0-9]+)? s\b')
FINGERPRINT = re.compile(r'"api_fingerprint": ?"[0-9a-f]+"')
SEARCH_TIME = re.compile(r'"search_time_s": ?[0-9.e+-]+')
STAMP = re.compile(r'[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}')
OPERATION = re.compile(r'\bcal-[0-9a-f]{16}\b')
ANY = ('...', '…')
PROGRESS = re.compile(r'^calibration cal-[0-9a-f]+ of \S+: ')
ROOT = __import__('os').path.dirname(__import__('os').path.dirname(__import__('os').path.abspath(__file__)))
SHELL = ('|', '>', '<', ';', '&&', '||', '2>/dev/null', '2>&1')


def normalise(line, server):
    line = OPERATION.sub('cal-ID', STAMP.sub('DATE', TIME.sub('in T s', line.rstrip())))
    line = FINGERPRINT.sub('"api_fingerprint":"F"', SEARCH_TIME.sub('"search_time_s": T', line))
    return line.replace(server, 'SERVER').replace('127.0.0.1:50051', 'SERVER')


def matches(want, got):
    """Whether `got` reads as `want`, each `...` line in `want` standing for any lines."""
    if not want:
        return not got
    if want[0].strip() in ANY:
        return any(matches(want[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and want[0] == got[0] and matches(want[1:], got[1:])


def commands(block):
    """(command, output lines, first line index, end index) for each `$ ` line."""
    lines = block.split('\n')[:-1]
    out, i = [], 0
    while i < len(lines):
        if not lines[i].startswith('$ '):
            i += 1
            continue
        cmd, j = lines[i][2:], i + 1
        while cmd.rstrip().endswith(('\\', '|')) and j < len(lines):  # continued
            cmd = cmd.rstrip()
            cmd, j = (cmd[:-1] if cmd.endswith('\\') else cmd) + ' ' + lines[j].strip(), j + 1
        k = j
        while k < len(lines) and not lines[k].startswith('$ '):
            k += 1
        out.append((cmd.strip(), lines[j:k], j, k))
        i = k
    return out


def lines_of(text):
    return text.rstrip('\n').split('\n') if text else []


def run(cli, server, cmd):
    words = shlex.split(cmd, comments=True)
    if words[0] != 'paraplan':
        raise ValueError('not a paraplan command: ' + cmd)
    if any(w in SHELL for w in words):
        raise ValueError('shell syntax cannot be checked: ' + cmd)
    args = words[1:]
    if '--server' in args:  # the transcript's address is replaced by the test server's
        at = args.index('--server')
        del args[at:at + 2]
    p = subprocess.run([cli, '--server', server] + args, capture_output=True, text=True, timeout=120, cwd=ROOT)
    # A long operation's progress line on stderr (`calibration cal-... of P: running, ...`)
    # is for a terminal, not the transcript.
    err = ''.join(l for l in p.stderr.splitlines(True) if not PROGRESS.match(l))
    return lines_of(p.stdout + err)


def run_http(http, cmd):
    if not http:
        raise ValueError('an http transcript needs --http or $PARAPLAN_TEST_HTTP: ' + cmd)
    p = subprocess.run(['bash', '-o', 'pipefail', '-c', cmd.replace('http://127.0.0.1:8080', 'http://' + http)],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    return lines_of(p.stdout + p.stderr)


def check_file(path, cli, server, update, http=None):
    text = open(path, encoding='utf-8').read()
    failures, checked, pieces, last = 0, 0, [], 0
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip('\n').split('\n')[-1].strip()
        if before not in (MARK, MARK_HTTP):
            continue
        runner = (lambda c: run_http(http, c)) if before == MARK_HTTP else (lambda c: run(cli, server, c))
        indent = m.group(1)  # a block inside a list item
        lines = [x[len(indent):] if x.startswith(indent) else x for x in m.group(2).split('\n')[:-1]]
        block = '\n'.join(lines) + '\n'
        new_lines = list(lines)
        ran = []
        for cmd, want, start, end in commands(block):  # in order: a block may store, then read
            while want and not want[-1].strip():  # blank lines before the next command
                want, end = want[:-1], end - 1
            ran.append((cmd, want, start, end, runner(cmd)))
        for cmd, want, start, end, got in reversed(ran):  # rewrites keep earlier indices
            checked += 1
            if matches([normalise(x, server) for x in want], [normalise(x, server) for x in got]):
                continue
            if update and not any(x.strip() in ANY for x in want):
                # Keep the transcript's address and the printed time where only they differ.
                new_lines[start:end] = [x.replace(server, '127.0.0.1:50051') for x in got]
                continue
            failures += 1
            print('%s: `%s` prints otherwise%s:' % (path, cmd, ' (elided: update by hand)' if update else ''))
            sys.stdout.writelines(difflib.unified_diff([x + '\n' for x in want], [x + '\n' for x in got],
                                                       'documented', 'printed', n=1))
        pieces.append(text[last:m.start(2)])
        pieces.append(''.join(indent + x + '\n' if x else '\n' for x in new_lines))
        last = m.end(2)
    pieces.append(text[last:])
    if update:
        open(path, 'w', encoding='utf-8').write(''.join(pieces))
    return checked, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cli', required=True)
    ap.add_argument('--server', required=True)
    ap.add_argument('--http', default=__import__('os').environ.get('PARAPLAN_TEST_HTTP'),
                    help='HOST:PORT of the server\'s HTTP port, for http transcripts')
    ap.add_argument('--update', action='store_true', help='rewrite the documented outputs')
    ap.add_argument('files', nargs='+')
    a = ap.parse_args()
    checked = failures = 0
    for f in a.files:
        c, n = check_file(f, a.cli, a.server, a.update, a.http)
        checked, failures = checked + c, failures + n
    print('%d transcript commands checked, %d print otherwise%s' % (checked, failures,
                                                                     ' (updated)' if a.update else ''))
    if checked == 0:
        print('no <!-- transcript --> block found')
        return 1
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
