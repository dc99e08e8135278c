"""One `paraplan estimate --batch` through the real CLI, for the bench/ scripts that state
published runs: estimate_batch(cli, server, requests) writes the EstimateRequests as a
JSONL file, runs the CLI once and returns its answers in order, one dict per request
(an `error` key where the server refused it). Raises RuntimeError, with the CLI's exit
status and the tail of its stderr, when the answers do not match the requests one to one.
"""
import json, os, subprocess, tempfile


def estimate_batch(cli, server, requests):
    with tempfile.NamedTemporaryFile('w', suffix='.jsonl', delete=False) as f:
        for r in requests:
            f.write(json.dumps(r) + '\n')
    try:
        res = subprocess.run([cli, '--server', server, '--output', 'json', 'estimate', '--batch', f.name],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    outs = [json.loads(l) for l in res.stdout.splitlines() if l.strip()]
    if len(outs) != len(requests):
        raise RuntimeError('estimate --batch: exit %d, %d answers for %d requests\n%s' % (
            res.returncode, len(outs), len(requests), res.stderr[-500:]))
    return outs
