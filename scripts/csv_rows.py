"""The rows of a data file of this repository, shared by the validation scripts: CSV with a
header, after '#' lines that give the file's provenance."""
import csv


def csv_rows(path):
    """The rows as dicts keyed by the header, the '#' lines left out."""
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))
