"""What Gonthier et al. published for their study (§V), to set batloc's results beside.

Percentages of reduction relative to FCFS (without backfilling): Table I is
week 40 (low utilisation), the week-43 figures are from §V-E's text (a
saturated week), Table II is all 12 weeks (time spent waiting for files:
transfers and waits), Table III the total core time over the 12 weeks. The
session figures are read off §V-F's text about Figs. 8 and 10 (share of user
sessions whose stretch improved, median improvement).
"""

VARIANTS = ("eft", "lea", "leo", "lem")

TABLE_I_WEEK40 = {"eft": 0.0, "lea": 14.8, "leo": 0.8, "lem": 3.8}
WEEK43_TRANSFER = {"lea": 21.0, "leo": 1.0, "lem": 11.0}
TABLE_II = {"eft": 0.9, "lea": 17.1, "leo": 0.9, "lem": 7.1}
TABLE_III = {"eft": 0.01, "lea": 0.37, "leo": 0.02, "lem": 0.10}

# scheduler -> what §V-F says of its user sessions against FCFS (or FCFS-BF for -bf)
SESSIONS = {
    "eft": "no real improvement (ECDF jumps at 1)",
    "lea": "about 75 % improved; 25 % above x2; median the largest",
    "leo": "87.5 % improved",
    "lem": "at least 87.5 % improved; median improvement 1.075",
    "lea-bf": "about 50 % improved (conclusion)",
    "lem-bf": "more than 75 % improved; 12.5 % below 0.95",
}

WEEKS = 12
JOBS = 1_986_496
SESSIONS_COUNT = 136_404
