# %% [markdown]
# # batloc from a notebook
#
# A small cluster, a synthetic day of jobs that share input files, one LEA run read as a DataFrame, then FCFS,
# LEA and LEA with backfilling compared in the report's summary table, and a figure of our own. Each `# %%`
# is a notebook cell (Jupyter, VS Code); `python3 docs/examples/notebook.py` runs them all. It uses only
# `batloc.api` (docs/python-api.md), pandas and matplotlib, and writes into ./batloc-notebook/.

# %%
import matplotlib

matplotlib.use("Agg")   # no window needed; drop this line in a notebook to see the figure inline
import matplotlib.pyplot as plt
import pandas as pd

import batloc.api as bl

# %% [markdown]
# ## The inputs: 4 nodes of 4 cores, 16 GB of memory each, 0.1 GB/s from the file system to each node

# %%
cluster = bl.platform(nodes=4, cores=4, memory="16GB", node_bw="0.1GB/s", name="tiny")
jobs = bl.workload(platform=cluster, duration="6h", load=1.0, jobs_per_file=4, users=8, seed=1,
                   name="synth-6h")
print(cluster)
print(jobs)
jobs.jobs.head()

# %% [markdown]
# ## One run: LEA, the scheduler inside the engine's process

# %%
run = bl.run(cluster, jobs, "lea", output_dir="batloc-notebook/lea")
print(run)
run.jobs.head()     # out_jobs.csv, one row per job (staging jobs included: workload batloc-stage)

# %%
with open(run.folder / "out_jobs.csv") as f:
    rows = sum(1 for _ in f) - 1
print(f"{len(run.jobs)} rows in the DataFrame, {rows} in {run.folder / 'out_jobs.csv'}")

# %%
js = run.jobset                                # an evalys JobSet: the workload's jobs on the compute cores
mean_stretch = js.df.loc[js.df["evaluated"], "stretch"].mean()
print(f"mean stretch {mean_stretch:.3f} (the report's: {run.summary['mean_stretch']:.3f}); {run.validate()}")
run.decisions.groupby("cache").size()          # how LEA got each job's file: loaded, found in memory, waited

# %% [markdown]
# ## A comparison: FCFS, LEA and LEA-BF against FCFS, then the report

# %%
comparison = bl.sweep(cluster, jobs, ["fcfs", "lea", "lea-bf"], "batloc-notebook/comparison", baseline="fcfs",
                      jobs=2)
summary = comparison.summary.set_index("scheduler")
summary[["mean_stretch", "mean_wait", "total_load_time", "bytes_staged", "jobs_killed"]]

# %%
print(f"report: {comparison.report}; {len(comparison.figures)} figures, e.g. {comparison.figures[0].name}")

# %% [markdown]
# ## A figure of our own: mean stretch and total load time per scheduler

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3))
summary["mean_stretch"].plot.bar(ax=left, title="mean stretch", rot=0)
(summary["total_load_time"] / 3600).plot.bar(ax=right, title="total load time (h)", rot=0)
fig.tight_layout()
figure = "batloc-notebook/stretch_and_loads.png"
fig.savefig(figure, dpi=100)
print(f"saved {figure}")
pd.DataFrame({"mean stretch": summary["mean_stretch"]}).round(3)
