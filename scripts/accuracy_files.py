"""What scripts/accuracy.py and scripts/validation_evidence.py read: the results files of the
README's accuracy table and the `racksim calibrate --json` reports, and the errors over them;
and how the tables they make are written between their markers."""
import functools, json, os, sys

from csv_rows import csv_rows

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CAL = os.path.join("scenarios", "calibration")


@functools.cache
def report(path):
    """A `racksim calibrate --json` report, read once (the table asks each several times)."""
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


def json_of(log):
    """The JSON report beside a calibrate log: a100-kernel-fit.log.txt -> a100-kernel-fit.json."""
    return os.path.join(CAL, log.replace(".log.txt", ".json"))


def with_table(text, begin, end, table):
    """`text` with what stands between its `begin` and `end` markers replaced by `table`."""
    start = text.index(begin) + len(begin)
    return text[:start] + "\n" + table + "\n" + text[text.index(end):]


def update_marked(path, begin, end, table, check, what):
    """Rewrites the table between `begin` and `end` in `path` (a file under the repository), or
    with `check` compares it and exits 1 when it differs. `what` names the table in messages."""
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    if begin not in text or end not in text:
        sys.exit(f"accuracy: {path} lacks the markers {begin} ... {end}")
    new = with_table(text, begin, end, table)
    if check:
        if new != text:
            sys.exit(f"accuracy: {what} differs from the results files "
                     "(run scripts/accuracy.py RACKSIM --table-only)")
        print(f"accuracy: {what} matches the results files")
        return
    if new != text:
        with open(os.path.join(ROOT, path), "w") as f:
            f.write(new)
    print(f"accuracy: {what} rebuilt" + (" (unchanged)" if new == text else ""))


def read_lines(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read().splitlines()


def results(path):
    return csv_rows(os.path.join(ROOT, path))


def errors_of(rows, predicted, measured):
    """predicted / measured - 1 of each row, in per cent (from the times, not the rounded errors)."""
    return [100 * (float(r[predicted]) / float(r[measured]) - 1) for r in rows]


def mape(errors):
    return sum(abs(e) for e in errors) / len(errors)


def worst(errors):
    return max(errors, key=abs)


def model_label(name):
    """gpt-39.1b-tp2-pp16-dp16-mb3 -> 39.1B TP2 PP16; gpt-76.1b -> 76.1B."""
    parts = name.split("-")
    label = parts[1].upper()
    extra = [p.upper() for p in parts[2:] if p.startswith(("tp", "pp"))]
    return " ".join([label, *extra])
