"""The MPT table's errors by band (docs/validation.md, "Published runs: MosaicML's MPT
benchmarks"): per configuration, MAPE and the mean signed error over the rows of each sequence
length and model size band, from the results file scripts/validate.py writes. scripts/accuracy.py
writes it between its markers with the README's table; --check compares it."""
from accuracy_files import errors_of, mape, results, update_marked

BEGIN, END = "<!-- mpt-bands: scripts/accuracy.py -->", "<!-- /mpt-bands -->"
CONFIGS = [("datasheet", "datasheet"), ("burst", "burst"),
           ("transfer", "transfer (the A100 terms)"),
           ("datasheet_fa1", "datasheet, FlashAttention 1.x"),
           ("transfer_fa1", "transfer, FlashAttention 1.x")]


def size_m(group):
    """'125M' -> 125, '7B' -> 7000 (millions of parameters)."""
    return float(group[:-1]) * (1 if group.endswith("M") else 1000)


# The bands: a name and the test on a row's (sequence length, size in millions).
BANDS = [("512-2,048 tokens", lambda seq, m: seq <= 2048),
         ("4,096-8,192", lambda seq, m: 4096 <= seq <= 8192),
         ("16,384-65,536", lambda seq, m: seq >= 16384),
         ("125M-760M", lambda seq, m: m < 1000),
         ("1B-7B", lambda seq, m: 1000 <= m <= 7000),
         ("13B-70B", lambda seq, m: m >= 13000)]


def band_table():
    """The markdown table: one line per configuration."""
    rows = results("data/published/llm-foundry-mpt-a100-results.csv")
    inputs = {r["name"]: r for r in results("data/published/llm-foundry-mpt-a100.csv")}
    key = lambda r: (int(inputs[r["name"]]["training.seq_length"]),
                     size_m(inputs[r["name"]]["group"]))
    members = [[r for r in rows if test(*key(r))] for _, test in BANDS]
    head = ([f"MAPE ({len(rows)} rows)", "within 10 %"] +
            [f"{name} ({len(m)})" for (name, _), m in zip(BANDS, members)])
    lines = ["| configuration | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for column, label in CONFIGS:
        measured = lambda rs: errors_of(rs, f"{column}_step_time_s", "published_step_time_s")
        everything = measured(rows)
        cells = [f"{mape(everything):.1f} %", str(sum(abs(e) < 10 for e in everything))]
        for m in members:
            e = measured(m)
            cells.append(f"{mape(e):.1f} % ({sum(e) / len(e):+.1f})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_bands(check):
    """Writes (or, with check, compares) the band table in docs/validation.md."""
    update_marked("docs/validation.md", BEGIN, END, band_table(), check,
                  "docs/validation.md's MPT band table")
