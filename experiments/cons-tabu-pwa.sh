#!/bin/sh
# Klusáček & Rudová's comparison in miniature: CONS + Tabu search against plain CONS,
# FCFS-BF, EASY (pybatsim's stock easyBackfill) and the paper's LEA-BF, on two weeks
# of the KTH SP2 and SDSC SP2 logs (each machine as one node: 100 and 128 cores).
# Run from the repository root:  sh experiments/cons-tabu-pwa.sh [TRACES_DIR] [--jobs 2]
# TRACES_DIR holds KTH-SP2-1996-2.1-cln.swf.gz and SDSC-SP2-1998-4.2-cln.swf.gz from
# the Parallel Workloads Archive (default ../shared/data/traces). Then read
# out/cons-tabu-{kth,sdsc}/summary.csv: mean_wait, mean_bsld, mean_flow, nuwt_std.
set -e
traces=${1:-../shared/data/traces}
[ $# -gt 0 ] && shift
dir=out/cons-tabu-pwa/inputs
mkdir -p "$dir"
batloc platform generate -o "$dir/kth.xml" --nodes 1 --cores 100 --name kth
batloc platform generate -o "$dir/sdsc.xml" --nodes 1 --cores 128 --name sdsc
batloc workload from-swf "$traces/KTH-SP2-1996-2.1-cln.swf.gz" -o "$dir/kth-2w.json" --platform "$dir/kth.xml" \
    --start 1997-02-03 --length 14d --before 2d --after 2d
batloc workload from-swf "$traces/SDSC-SP2-1998-4.2-cln.swf.gz" -o "$dir/sdsc-2w.json" --platform "$dir/sdsc.xml" \
    --start 1999-03-01 --length 14d --before 2d --after 2d
robin experiments/cons-tabu-kth.yaml "$@"
robin experiments/cons-tabu-sdsc.yaml "$@"
