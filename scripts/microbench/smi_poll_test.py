#!/usr/bin/env python3
"""SmiPoller against a stand-in nvidia-smi (a shell script printing fixed values, then
garbage): the samples parse, a bad line is skipped, stop() ends the thread. Run by ctest."""
import os
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smi_poll import SmiPoller  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    fake = os.path.join(d, "nvidia-smi")
    count = os.path.join(d, "count")
    with open(fake, "w") as f:
        # First call: a good line; every later call: garbage.
        f.write('#!/bin/sh\nif [ -e "%s" ]; then echo "N/A, x"; else touch "%s"; echo "1380, 697.25, 55"; fi\n'
                % (count, count))
    os.chmod(fake, stat.S_IRWXU)
    p = SmiPoller(every_s=0.05, command=fake).start()
    t0 = time.perf_counter()
    time.sleep(0.4)
    samples = p.stop()
    assert len(samples) == 1, samples
    assert samples[0][1:] == (1380.0, 697.25, 55.0), samples
    assert p.between(t0 - 1, time.perf_counter()) == samples
    assert p.between(time.perf_counter(), time.perf_counter() + 1) == []
    missing = SmiPoller(every_s=0.05, command=os.path.join(d, "absent")).start()
    time.sleep(0.1)
    assert missing.stop() == []
print("ok")
