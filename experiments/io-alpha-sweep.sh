#!/bin/sh
# Jeannot et al.'s α sweep in miniature: I/O-aware list scheduling against pack
# scheduling (random, max, char) on the Uniform and Mira families, bi-normal (bn)
# and normal (no) I/O shares, on 16 nodes x 16 cores (P = 256) sharing a 1 GB/s
# file system with exclusive access (one job's I/O at a time), 60 jobs released
# together. Run from the repository root:  sh experiments/io-alpha-sweep.sh [--jobs 2]
# then read out/io-alpha-sweep/summary.csv (alpha, makespan, idle_ratio,
# io_mean_stretch, io_max_stretch) and report.html (utilisation over time).
# With the paper's volumes V = B·X·w·Q/P, α cannot exceed the mean I/O share of
# the heavy jobs: bn reaches about 0.4-0.6 here, no about 0.2-0.7 (the generator
# refuses an α out of reach). A larger sweep: more seeds, --jobs 200, P = 4096.
set -e
dir=out/io-alpha-sweep/inputs
mkdir -p "$dir"
batloc platform generate -o "$dir/io256.xml" --nodes 16 --cores 16 --node-bw 10GB/s --backbone-bw 1GB/s \
    --io-routes --pfs-access exclusive
for spec in uniform:no:0.2 uniform:no:0.4 uniform:no:0.6 mira:no:0.2 mira:no:0.4 mira:no:0.6 mira:no:0.7 \
            uniform:bn:0.4 uniform:bn:0.5 mira:bn:0.4 mira:bn:0.6; do
    IFS=: read family mix alpha <<END
$spec
END
    batloc workload synth --io "$family" --io-mix "$mix" --alpha "$alpha" --jobs 60 --seed 1 \
        --platform "$dir/io256.xml" -o "$dir/$family-$mix-a$alpha.json"
done
robin experiments/io-alpha-sweep.yaml "$@"
