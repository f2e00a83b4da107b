"""What the device scripts share: CSV rows written as they are measured, nvidia-smi sampling in
the background, and CUDA-event timing of a callable."""
import csv
import os
import subprocess
import time


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


def timed_cells(torch, fn, flops, min_ms, cool_s):
    """The ms, tflops and error cells of one call timed after cool_s idle (one warm-up call), or
    of its error."""
    try:
        torch.cuda.synchronize()
        time.sleep(cool_s)
        ms = timed(torch, fn, min_ms, warmup=1)
    except (RuntimeError, TypeError, ValueError, AttributeError) as error:
        return failed_cells(error)
    return {"ms": f"{ms:.5f}", "tflops": f"{flops / ms / 1e9:.1f}", "error": ""}


def error_text(error):
    """What a CSV's error cell keeps of an exception: its first line, at most 200 characters."""
    return str(error).splitlines()[0][:200]


def failed_cells(error):
    return {"ms": "", "tflops": "", "error": error_text(error)}


def open_log(path, stamped=True):
    """A log function printing each message and appending it to `path` (flushed), with the
    file to close."""
    log_file = open(path, "w")

    def log(message):
        line = f"[{time.strftime('%H:%M:%S')}] {message}" if stamped else message
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    return log, log_file


def run_sections(torch, out_dir, log_name, sections):
    """Runs each (name, measure(log)) in turn with its duration logged, under nvidia-smi sampling
    (smi.csv) and a log (log_name) in out_dir, which it creates."""
    os.makedirs(out_dir, exist_ok=True)
    log, log_file = open_log(os.path.join(out_dir, log_name))
    smi = start_smi(os.path.join(out_dir, "smi.csv"), log)
    try:
        log(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}")
        for name, measure in sections:
            began = time.monotonic()
            measure(log)
            log(f"{name}: {time.monotonic() - began:.0f} s")
    finally:
        if smi is not None:
            smi.terminate()
        log_file.close()
