"""One simulated step time from `racksim run`, shared by the validation scripts (validate.py,
a100-vtrain-table.py): a scenario, its overrides as a dict of field paths, extra arguments."""
import subprocess


def set_args(overrides):
    """racksim's --set arguments for a dict of field paths. Empty values are left out: a table
    column that a row leaves blank keeps the scenario's value."""
    return [a for k, v in overrides.items() if v != "" for a in ("--set", f"{k}={v}")]


def step_time(racksim, scenario, overrides, extra=(), timeout=None, cwd=None):
    """(seconds, None) when racksim ran, (None, why) when it failed or ran past `timeout` s."""
    sets = set_args(overrides)
    try:
        out = subprocess.run([racksim, "run", scenario, *sets, *extra], capture_output=True,
                             text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout:g} s"
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["failed"])[-1]
    line = next(l for l in out.stdout.splitlines() if l.startswith("step time"))
    return float(line.split()[2]), None
