#!/usr/bin/env python3
"""A/B of two benchmark binaries on a shared machine: rounds alternate A and B, ratios per round.

    python3 bench/ab.py OLD/core_bench NEW/core_bench --filter 'BM_CoreForward/1/4096/128/0/0/' --rounds 5
    python3 bench/ab.py core_bench core_bench --env-a ATTNV_CORE_ISA=avx2 --filter '...'   # two paths

Why not Google Benchmark's compare.py (Debian: libbenchmark-tools): it runs all of A, then all of
B, and compares the main thread's time. On a shared 2-core VM the load moves between those two
runs, and the core's figures are multi-threaded. Here each round runs A then B (B then A on even
rounds, so a drift within a round does not always favour one side), and each case is judged by
its per-CPU-second counter (`cpu_GFLOPs`, `cpu_GBps`: work over the CPU time of all threads),
which the load moves far less than wall time. Medians and ranges of B/A are over rounds.

Cases pair by name. When A and B name them differently (a benchmark gained an argument), give
each side its own --filter-a / --filter-b selecting the same cases in the same order; they then
pair by position, and the pairs are printed. Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

RATES = ("cpu_GFLOPs", "cpu_GBps", "best_GFLOPs_cpu", "GFLOPs", "GBps")  # first present wins


def rate(bench, metric=None):
    """(counter name, value): the named counter (--metric), else the first of RATES present."""
    if metric:
        if not isinstance(bench.get(metric), (int, float)):
            sys.exit(f"ab: {bench['name']} reports no counter {metric!r}")
        return metric, float(bench[metric])
    for key in RATES:
        if isinstance(bench.get(key), (int, float)):
            return key, float(bench[key])
    return "1/time", 1.0 / float(bench["real_time"])  # no counter: the inverse of the time


def run(binary, flt, env_pairs):
    env = dict(os.environ)
    for pair in env_pairs:
        key, _, value = pair.partition("=")
        env[key] = value
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [binary, f"--benchmark_filter={flt}", f"--benchmark_out={out.name}", "--benchmark_out_format=json"]
        done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"ab: {' '.join(cmd)} exited with {done.returncode}: {done.stderr.strip()[-500:]}")
        text = open(out.name).read()
    if not text.strip():  # Google Benchmark writes nothing when the filter matches no case
        sys.exit(f"ab: {binary} ran no benchmark for the filter {flt!r}")
    results = json.loads(text)["benchmarks"]
    cases = [b for b in results if b.get("run_type", "iteration") == "iteration"]
    errors = [f"{b['name']}: {b.get('error_message', '')}" for b in cases if b.get("error_occurred")]
    if errors:
        sys.exit("ab: " + binary + " reported errors:\n  " + "\n  ".join(errors))
    if not cases:
        sys.exit(f"ab: {binary} ran no benchmark for the filter {flt!r}")
    return cases


def pair(a_cases, b_cases):
    """[(name shown, a case, b case)] by name, else by position when the names differ."""
    a_names = [c["name"] for c in a_cases]
    b_names = [c["name"] for c in b_cases]
    if a_names == b_names:
        return [(n, a, b) for n, a, b in zip(a_names, a_cases, b_cases)]
    if len(a_cases) != len(b_cases):
        sys.exit(f"ab: A ran {len(a_cases)} cases and B {len(b_cases)}; give --filter-a and --filter-b "
                 "that select the same cases in the same order")
    return [(f"{a['name']} ~ {b['name']}", a, b) for a, b in zip(a_cases, b_cases)]


def summarise(rounds, chosen=None):
    """rounds: per round, the pairs of that round; chosen: --metric. Returns the table's rows."""
    rows = []
    for i, (name, _, _) in enumerate(rounds[0]):
        metric, _ = rate(rounds[0][i][1], chosen)
        other, _ = rate(rounds[0][i][2], chosen)
        if other != metric:  # a ratio of two different quantities would mean nothing
            sys.exit(f"ab: {name}: A reports {metric} and B {other}; pair cases that measure the same thing")
        a = [rate(r[i][1], chosen)[1] for r in rounds]
        b = [rate(r[i][2], chosen)[1] for r in rounds]
        ratios = [y / x for x, y in zip(a, b)]
        wall = [r[i][1]["real_time"] / r[i][2]["real_time"] for r in rounds]  # B's speed over A's
        rows.append({"case": name, "metric": metric, "a": statistics.median(a), "b": statistics.median(b),
                     "ratio": statistics.median(ratios), "low": min(ratios), "high": max(ratios),
                     "wall": statistics.median(wall)})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="baseline benchmark binary")
    ap.add_argument("b", help="contender benchmark binary (may be the same file with other --env-b)")
    ap.add_argument("--filter", default=".", help="--benchmark_filter for both (default: every case)")
    ap.add_argument("--filter-a", help="A's own filter (cases then pair by position)")
    ap.add_argument("--filter-b", help="B's own filter")
    ap.add_argument("--env-a", action="append", default=[], metavar="K=V", help="environment for A's runs")
    ap.add_argument("--env-b", action="append", default=[], metavar="K=V", help="environment for B's runs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--metric", help="the counter to compare (higher is better), e.g. best_ceiling_GBps; "
                                     "default: the first of " + ", ".join(RATES) + " a case reports")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("ab: --rounds must be at least 1")
    rounds = []
    for r in range(args.rounds):
        order = [("a", args.a, args.filter_a or args.filter, args.env_a),
                 ("b", args.b, args.filter_b or args.filter, args.env_b)]
        if r % 2 == 1:
            order.reverse()
        got = {side: run(binary, flt, env) for side, binary, flt, env in order}
        rounds.append(pair(got["a"], got["b"]))
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    rows = summarise(rounds, args.metric)
    width = max(len(row["case"]) for row in rows)
    print(f"{'case':{width}}  metric       A (median)   B (median)   B/A median (range, {args.rounds} rounds)   B/A wall")
    for row in rows:
        print(f"{row['case']:{width}}  {row['metric']:11}  {row['a']:11.4g}  {row['b']:11.4g}  "
              f"{row['ratio']:.3f} ({row['low']:.3f}-{row['high']:.3f}){'':12}{row['wall']:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
