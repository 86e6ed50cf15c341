"""``<prefix>_decisions.csv`` (locality/decision_log.py, contract §6): one row per start decision."""

from batloc.locality.decision_log import HEADER, DecisionLog


def test_rows_carry_six_decimals_and_empty_fields_for_what_a_decision_lacks(tmp_path):
    path = tmp_path / "d.csv"
    log = DecisionLog(str(path))
    log.write(1, "w0!1", "LEA", "n000", "0-1", 2, 11.0, "A", 1e10, "miss", "batloc-stage!stage-w0-1-n000", 5001)
    log.write(2.5, "w0!2", "FCFS", "n001", "2", 1, 2.5, None, 0.0, "none", None, None)
    log.close()
    log.close()      # closing twice is harmless (the scheduler's end and a failure may both close it)
    assert path.read_text().splitlines() == [
        ",".join(HEADER),
        "1.000000,w0!1,LEA,n000,0-1,2,11.000000,A,10000000000.000000,miss,batloc-stage!stage-w0-1-n000,5001.000000",
        "2.500000,w0!2,FCFS,n001,2,1,2.500000,,,none,,"]


def test_without_a_path_nothing_is_written(tmp_path):
    log = DecisionLog(None)
    log.write(1, "w0!1", "LEA", "n000", "0", 1, 1, None, 0, "none", None, None)
    log.close()
    assert list(tmp_path.iterdir()) == []
