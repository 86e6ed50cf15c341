"""The CSV files a run writes: their columns, how a field is quoted, and how they are read back.

One home for the engine (jobs, machine states), the schedulers and the proxy
(decision log), the dry run, the analysis and the validator (contract §5, §6).

Quoting. Batsim 4.2.1 (``src/export.cpp``) joins its fields with commas as
they are, and wraps ``metadata`` in quotes without doubling the quotes inside:
a job id or profile name holding a comma, a quote or a newline (all legal in
JSON) shifts every later column. batloc writes the same bytes whenever a field
needs no quoting, and otherwise quotes the field as RFC 4180 does (quotes
doubled); ``metadata`` is always quoted, as Batsim does. Python's csv module
and pandas (so evalys) read the files back field for field. Files are UTF-8.
"""

import csv

JOBS_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources", "requested_time",
    "success", "final_state", "starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
    "stretch", "allocated_resources", "consumed_energy", "metadata",
)
JOBS_HEADER = ",".join(JOBS_COLUMNS)
MACHINE_STATES_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
DECISIONS_COLUMNS = ("time", "job_id", "policy", "node", "alloc", "cores", "planned_start",
                     "input_file", "input_size", "cache", "staging_job", "score")
PREDICTIONS_COLUMNS = ("job_id", "submission_time", "predicted_at", "predicted_start", "last_predicted_start",
                       "starting_time")

ENCODING = "utf-8"


class OutputError(Exception):
    """An output file that cannot be written (a full disk, a folder without rights); the message names it."""


# The decision log has always been written by the csv module's default dialect (lines end in CRLF);
# kept, so that logs of earlier runs compare byte for byte. Batsim's own files end lines in LF.
CRLF = "\r\n"


def text(value):
    """A field as written: as is, or quoted with its quotes doubled when it holds a comma, a quote, CR or LF."""
    value = str(value)
    if "," in value or '"' in value or "\n" in value or "\r" in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def quoted(value):
    """A field always quoted (Batsim's ``metadata``), its quotes doubled."""
    return '"' + str(value).replace('"', '""') + '"'


def row(fields, end="\n"):
    """One line of fields, each quoted only if it must be."""
    texts = [str(v) for v in fields]
    line = ",".join(texts)
    # most rows need no quoting: then no field held a comma, a quote, CR or LF (each field tested is slower)
    if line.count(",") == len(texts) - 1 and '"' not in line and "\n" not in line and "\r" not in line:
        return line + end
    return ",".join(map(text, texts)) + end


def open_for_writing(path, buffering=-1):
    """A text file for one of these CSVs (newlines are written as given)."""
    return open(path, "w", encoding=ENCODING, newline="", buffering=buffering)


def read_rows(path, line_key=None):
    """(column names, rows as dicts) of a CSV written here; quoted commas, quotes and newlines read back as written.

    With `line_key`, each row also holds, under that key, the line it starts on
    (a quoted newline makes rows and lines differ). OSError and UnicodeDecodeError
    (a file that is not UTF-8 text) are the caller's to word; a broken quote is `csv.Error`.
    """
    # the engine writes an id of any length: lift the csv module's 128 KiB limit on one field
    csv.field_size_limit(max(csv.field_size_limit(), 2 ** 31 - 1))
    with open(path, newline="", encoding=ENCODING) as fh:
        reader = csv.DictReader(fh)
        rows = []
        start = 2
        for r in reader:
            if line_key is not None:
                r[line_key] = start
            start = reader.line_num + 1
            rows.append(r)
        return list(reader.fieldnames or []), rows
