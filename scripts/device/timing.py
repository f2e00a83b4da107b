"""What the device scripts share: CSV rows written as they are measured, nvidia-smi sampling in
the background, and CUDA-event timing of a callable."""
import csv
import subprocess


class Rows:
    """A CSV written row by row, flushed, so that a run cut short keeps what it measured."""

    def __init__(self, path, fields):
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=fields)
        self.writer.writeheader()

    def add(self, row):
        self.writer.writerow(row)
        self.file.flush()

    def close(self):
        self.file.close()


def smi_fields():
    base = "timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu"
    for reasons in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
        query = f"{base},{reasons}"
        probe = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                               capture_output=True, text=True)
        if probe.returncode == 0:
            return query
    return base


def start_smi(path, log):
    try:
        query = smi_fields()
        out = open(path, "w")
        out.write(query + "\n")
        out.flush()
        return subprocess.Popen(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-lms", "100"],
            stdout=out, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as error:
        log(f"nvidia-smi sampling not started: {error}")
        return None


def timed(torch, fn, min_ms, warmup=3):
    """Milliseconds per call: CUDA events around a batch of calls, after warm-up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls, total_ms = 0, 0.0
    batch = 1
    while total_ms < min_ms and calls < 10000:
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        total_ms += start.elapsed_time(stop)
        calls += batch
        batch = min(batch * 2, 256)
    return total_ms / calls
