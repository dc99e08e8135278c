"""nvidia-smi sampled in the background while a benchmark runs: the SM clock, board power
and temperature of GPU 0, for the sustained_*.py scripts (what clock a load settles at
under the power cap). No torch here, so it is tested without a GPU (smi_poll_test.py)."""
import subprocess
import threading
import time

FIELDS = ("clocks.sm", "power.draw", "temperature.gpu")


class SmiPoller:
    """Samples (perf_counter time, SM MHz, power W, temperature C) every `every_s` seconds
    from start() until stop(); a query that fails or does not parse is skipped."""

    def __init__(self, every_s=1.0, command="nvidia-smi"):
        self.every_s, self.command, self.samples = every_s, command, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run([self.command, "--id=0", "--query-gpu=" + ",".join(FIELDS),
                                      "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
                values = tuple(float(v) for v in out.stdout.strip().splitlines()[0].split(","))
                if len(values) == len(FIELDS):
                    self.samples.append((time.perf_counter(),) + values)
            except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
                pass
            self._stop.wait(self.every_s)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.samples

    def between(self, t0, t1):
        """The samples taken from t0 to t1 (perf_counter seconds)."""
        return [s for s in self.samples if t0 <= s[0] <= t1]
