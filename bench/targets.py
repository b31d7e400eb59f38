#!/usr/bin/env python3
"""Issue 13's speed targets, judged on this machine from one core_bench run (and a peers run).

    python3 bench/targets.py                         # runs core_bench (about 3 minutes), then judges
    python3 bench/targets.py --run-peers             # also times onnxruntime (bench/peers/setup.sh first)
    python3 bench/targets.py --from-json run.json    # judges a saved core_bench JSON instead
    python3 bench/targets.py --peers peers.json      # with a saved peers.py --json file
    python3 bench/targets.py --save run.json         # keeps the core_bench JSON it judged
    python3 bench/targets.py --certify-ab ab.json    # with a bench/certify_ab.py --json file
    python3 bench/targets.py --avx2-ab ab.json       # with a bench/ab.py --json file (AVX2-only machines)

Every target gets one verdict: MET, NOT MET, NOT APPLICABLE (the machine is not the kind the
target is for), or NOT MEASURED with what is missing (a case not run or in error, a counter
core_bench did not report, or an A/B against the core before issue 13 that was not given: the
quick certify's, bench/certify_ab.py's, with --certify-ab; the AVX2 machine's, bench/ab.py's, with
--avx2-ab, judged only on a CPU that reported no AVX-512F). The summary counts each kind and never
says the targets are met while one is not measured. The figures are one run's, as bench/README.md
reports them: per CPU second for the forward and backward (the machine is shared; wall figures
swing more), the decode's share of its paired stream, the onnxruntime medians per CPU second.
core_bench runs each case three times (--repetitions), all cases' repetitions in a random order,
and each figure is the median of its case's three.

The script only reads and compares: the thresholds are issue 13's, the figures core_bench's.
Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The cases the targets read: the default ISA path (the widest the CPU runs, or ATTNV_CORE_ISA).
CASES = ("^BM_FmaPeak/|^BM_FmaPeakAvx512/|^BM_CoreForward/[123]/4096/(128|64)/[01]/0/|"
         "^BM_CoreBackward/1/4096/128/0/0/|^BM_CoreDecode/[12]/0/0/|^BM_DecodeArithmetic/[12]/0/")

MET, NOT_MET, NOT_APPLICABLE, NOT_MEASURED = "MET", "NOT MET", "NOT APPLICABLE", "NOT MEASURED"


class Missing(Exception):
    """A figure that could not be read; the message says which and why."""


def forward(dtype, d, causal):
    return "BM_CoreForward/%d/4096/%d/%d/0/" % (dtype, d, causal)


F32, F16, BF16 = 1, 2, 3  # DType in problem/dtype.h


class Run:
    """The cases of one core_bench JSON, looked up by the start of their names. A case run several
    times (--benchmark_repetitions) is read from its median aggregate: the median of each counter
    over the repetitions."""

    def __init__(self, benchmarks):
        self.cases = [b for b in benchmarks if b.get("run_type", "iteration") == "iteration"]
        self.medians = [b for b in benchmarks if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"]

    def repetitions(self):
        return max([int(b.get("repetitions", 1)) for b in self.cases] or [1])

    def case(self, prefix):
        found = [b for b in self.cases if b["name"].startswith(prefix)]
        if not found:
            raise Missing("core_bench ran no %s... case" % prefix)
        for b in found:  # one failed repetition and the case is not measured: its median would hide it
            if b.get("error_occurred"):
                raise Missing("%s: %s" % (b["name"], b.get("error_message", "error")))
        median = [b for b in self.medians if b["name"].startswith(prefix)]
        return median[0] if median else found[0]

    def counter(self, prefix, key):
        b = self.case(prefix)
        if not isinstance(b.get(key), (int, float)):
            raise Missing("%s reports no %s (an attnv defect: please report it)" % (b["name"], key))
        return float(b[key])

    def avx512(self):
        """True or False from BM_FmaPeakAvx512 (an error there: the CPU has no AVX-512F); raises
        Missing when the run has no such case, which says nothing about the machine."""
        found = [b for b in self.cases if b["name"].startswith("BM_FmaPeakAvx512/")]
        if not found:
            raise Missing("the run has no BM_FmaPeakAvx512 case: whether this machine has AVX-512 is unknown")
        return not found[0].get("error_occurred")


def ort_medians(peers):
    """The peers run's medians, (wall s, CPU s per thread) by contender, for f32 D=128 full."""
    if peers is None:
        raise Missing("no onnxruntime run: --run-peers (after bash bench/peers/setup.sh) or --peers FILE")
    for row in peers.get("rows", []):
        if row.get("D") == 128 and row.get("causal") == 0:
            med = row.get("median_wall_cpu_s", {})
            if "core" not in med or "Attention" not in med:
                raise Missing("the peers run has no core or Attention timing for D=128 full")
            return med
    raise Missing("the peers run has no f32 D=128 full row")


def ort_ratio(peers):
    """Core speed over onnxruntime Attention's, per CPU second, f32 D=128 full."""
    med = ort_medians(peers)
    return float(med["Attention"][1]) / float(med["core"][1])


def avx512_targets(run, peers):
    """(target, figure function, threshold) for an AVX-512 machine (issue 13, "Targets")."""
    share = lambda dtype, d, causal: run.counter(forward(dtype, d, causal), "cpu_peak_share")
    ratio = lambda a, b, key: run.counter(a, key) / run.counter(b, key)
    return [
        ("forward f32 T=4096 D=128 full, share of the AVX-512 FMA peak", lambda: share(F32, 128, 0), 0.70),
        ("forward f32 D=128 full over onnxruntime Attention (per CPU s)", lambda: ort_ratio(peers), 1.25),
        ("forward f32 D=64 full, share of the peak", lambda: share(F32, 64, 0), 0.60),
        ("causal useful over non-causal, f32 D=128",
         lambda: ratio(forward(F32, 128, 1), forward(F32, 128, 0), "cpu_useful_GFLOPs"), 0.85),
        ("causal useful over non-causal, f32 D=64",
         lambda: ratio(forward(F32, 64, 1), forward(F32, 64, 0), "cpu_useful_GFLOPs"), 0.85),
        ("f16 over f32, D=128 full", lambda: ratio(forward(F16, 128, 0), forward(F32, 128, 0), "cpu_GFLOPs"), 0.90),
        ("bf16 over f32, D=128 full", lambda: ratio(forward(BF16, 128, 0), forward(F32, 128, 0), "cpu_GFLOPs"), 0.90),
        ("f16 over f32, D=64 full", lambda: ratio(forward(F16, 64, 0), forward(F32, 64, 0), "cpu_GFLOPs"), 0.90),
        ("bf16 over f32, D=64 full", lambda: ratio(forward(BF16, 64, 0), forward(F32, 64, 0), "cpu_GFLOPs"), 0.90),
        ("backward f32 D=128 full, share of the peak",
         lambda: run.counter("BM_CoreBackward/1/4096/128/0/0/", "cpu_peak_share"), 0.45),
        ("decode, f32 cache, share of the paired stream",
         lambda: run.counter("BM_CoreDecode/1/0/0/", "paired_share"), 0.70),
        ("decode, f16 cache, share of the paired stream",
         lambda: run.counter("BM_CoreDecode/2/0/0/", "paired_share"), 0.70),
    ]


def ort_context(peers):
    """The medians the onnxruntime ratio divides."""
    try:
        med = ort_medians(peers)
    except Missing:
        return ""
    return "medians: core %.1f ms, Attention %.1f ms wall (%.1f / %.1f CPU ms per thread)" % (
        med["core"][0] * 1e3, med["Attention"][0] * 1e3, med["core"][1] * 1e3, med["Attention"][1] * 1e3)


def decode_context(run, dtype):
    """How much of the stream the decode's arithmetic alone could take: its ceiling over the sweep."""
    try:
        ceiling = run.counter("BM_DecodeArithmetic/%d/0/" % dtype, "best_ceiling_GBps")
        sweep = run.counter("BM_CoreDecode/%d/0/0/" % dtype, "sweep_GBps")
    except Missing:
        return ""
    return "the arithmetic alone could take %.2f of this %.1f GB/s stream" % (ceiling / sweep, sweep)


def certify_speed(certify_ab):
    """The old quick certify's wall time over the new one's, median over bench/certify_ab.py's rounds."""
    if certify_ab is None:
        raise Missing("no A/B of the quick certify: bench/certify_ab.py OLD/attnv NEW/attnv --json FILE "
                      "(OLD built at 8e9a92c, the core before issue 13), then --certify-ab FILE")
    try:
        return float(certify_ab["wall_ratio_a_over_b"]["median"])
    except (KeyError, TypeError, ValueError):
        raise Missing("the --certify-ab file has no wall_ratio_a_over_b median: not a bench/certify_ab.py --json file")


def certify_context(certify_ab):
    """The rounds behind the certify figure: their range and the CPU-time ratio beside it."""
    try:
        wall, cpu = certify_ab["wall_ratio_a_over_b"], certify_ab["cpu_ratio_a_over_b"]
        note = "%d rounds, old over new wall %.3f-%.3f; CPU time %.3f (%.3f-%.3f)" % (
            len(certify_ab["rounds"]), wall["min"], wall["max"], cpu["median"], cpu["min"], cpu["max"])
    except (KeyError, TypeError):
        return ""
    paths = [(certify_ab.get(side) or {}).get("isa") for side in ("a_certified", "b_certified")]
    if all(paths):
        note += "; old on the %s path, new on %s" % tuple(paths)
    return note


def avx2_speed(avx2_ab):
    """The slowest case's median B/A from a bench/ab.py --json file, and the cases as a note."""
    if avx2_ab is None:
        raise Missing("no A/B: bench/ab.py OLD/core_bench NEW/core_bench ... --json FILE (OLD built at 8e9a92c, "
                      "the core before issue 13; bench/README.md, \"A/B of two builds\"), then --avx2-ab FILE")
    try:
        rows = [(str(r["case"]), float(r["ratio"]), float(r["low"]), float(r["high"])) for r in avx2_ab]
    except (KeyError, TypeError, ValueError):
        rows = []
    if not rows:
        raise Missing("the --avx2-ab file has no rows of case and ratio: not a bench/ab.py --json file")
    note = "; ".join("%s %.3f (%.3f-%.3f)" % (case.split("/min_time")[0], r, lo, hi) for case, r, lo, hi in rows)
    return min(r for _, r, _, _ in rows), "new over old, median (range): " + note


def avx2_row(avx2_ab, avx512):
    """The AVX2 machine's target: judged only where the CPU reported no AVX-512F (avx512 False);
    elsewhere the same A/B of the avx2 path is shown but proves nothing about an AVX2 machine."""
    name = "AVX2 machine: no regression against the core before issue 13"
    try:
        value, note = avx2_speed(avx2_ab)
    except Missing as e:
        return (name, NOT_MEASURED, None, 1.0, str(e))
    if avx512 is False:
        return (name, MET if value >= 1.0 else NOT_MET, value, 1.0, note)
    return (name, NOT_MEASURED, None, 1.0, "needs an AVX2-only machine (this one has AVX-512, or did not say); "
            "the A/B given, of the avx2 path here: " + note)


def judge(run, peers, certify_ab=None, avx2_ab=None):
    """[(target, verdict, figure or None, threshold or None, note)] for this machine."""
    rows = []
    try:
        avx512, unknown = run.avx512(), None
    except Missing as e:
        avx512, unknown = True, str(e)
    for name, figure, threshold in avx512_targets(run, peers):
        if unknown:
            rows.append((name, NOT_MEASURED, None, threshold, unknown))
            continue
        if not avx512:
            rows.append((name, NOT_APPLICABLE, None, threshold, "no AVX-512 on this machine (BM_FmaPeakAvx512)"))
            continue
        try:
            value = figure()
        except Missing as e:
            rows.append((name, NOT_MEASURED, None, threshold, str(e)))
            continue
        note = ""
        if name.startswith("decode"):
            note = decode_context(run, F32 if "f32" in name else F16)
        elif "onnxruntime" in name:
            note = ort_context(peers)
        rows.append((name, MET if value >= threshold else NOT_MET, value, threshold, note))
    rows.append(avx2_row(avx2_ab, avx512 if unknown is None else None))
    name = "quick certify (ci/quickstart.sh's main job) no slower: old wall time over new"
    try:
        value = certify_speed(certify_ab)
        rows.append((name, MET if value >= 1.0 else NOT_MET, value, 1.0, certify_context(certify_ab)))
    except Missing as e:
        rows.append((name, NOT_MEASURED, None, 1.0, str(e)))
    return rows


def core_path(run):
    """The ISA path the core's cases ran on (the last word of their labels)."""
    try:
        return run.case(forward(F32, 128, 0)).get("label", "").split()[-1]
    except (Missing, IndexError):
        return "unknown"


def shown(value, threshold):
    """The figure with three decimals, or as many more as it takes not to print 0.900 < 0.90."""
    for digits in range(3, 10):
        text = "%.*f" % (digits, value)
        if (float(text) >= threshold) == (value >= threshold):
            return text
    return repr(value)


def report(rows, machine, path, repetitions=1):
    print("issue 13's targets on %s, the core's %s path" % (machine, path))
    if repetitions > 1:
        print("  (core_bench figures: medians of %d repetitions, interleaved)" % repetitions)
    for name, verdict, value, threshold, note in rows:
        figure = "" if value is None else "%s %s %.2f" % (shown(value, threshold), ">=" if verdict == MET else "<", threshold)
        print("  %-14s %-64s %s" % (verdict, name, figure))
        if note:
            print("  %-14s   %s" % ("", note))
    counts = {v: sum(1 for r in rows if r[1] == v) for v in (MET, NOT_MET, NOT_MEASURED, NOT_APPLICABLE)}
    summary = ", ".join("%d %s" % (n, v.lower()) for v, n in counts.items() if n)
    print("targets: " + summary)
    if counts[NOT_MET] == 0 and counts[NOT_MEASURED] == 0:
        print("every target that applies here is met")


def machine_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "this machine"


def run_core_bench(build, repetitions):
    bench = os.path.join(build, "bench", "core_bench")
    if not os.access(bench, os.X_OK):
        sys.exit("targets: %s not found: build the release preset first (cmake --build --preset release)" % bench)
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [bench, "--benchmark_filter=" + CASES, "--benchmark_out=" + out.name, "--benchmark_out_format=json"]
        if repetitions > 1:
            # Repetitions of all the cases in a random order: a neighbour's burst then falls on
            # repetitions of different cases instead of on every repetition of one, and a ratio
            # of two cases (f16 over f32) is not one case's bad minute.
            cmd += ["--benchmark_repetitions=%d" % repetitions, "--benchmark_enable_random_interleaving=true"]
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit("targets: %s exited with %d: %s" % (" ".join(cmd), done.returncode, done.stderr.strip()[-500:]))
        with open(out.name) as f:
            return json.load(f)


def run_peers(build):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "peers.json")
        # Debian's python3 sees python3-onnx; the default python3 may be another build that does not.
        python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
        cmd = [python, os.path.join(HERE, "peers", "peers.py"), "--build", build, "--d", "128",
               "--causal", "0", "--rounds", "3", "--json", out]
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit("targets: peers.py exited with %d: %s" % (done.returncode, done.stderr.strip()[-500:]))
        with open(out) as f:
            return json.load(f)


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("targets: cannot read %s %s: %s" % (what, path, e))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"), help="the build tree (has bench/core_bench)")
    ap.add_argument("--from-json", help="a saved core_bench JSON (--benchmark_out) to judge instead of running it")
    ap.add_argument("--peers", help="a saved peers.py --json file")
    ap.add_argument("--run-peers", action="store_true", help="time onnxruntime with bench/peers/peers.py")
    ap.add_argument("--avx2-ab", help="a saved bench/ab.py --json file: the core before issue 13 (A) against this "
                                      "one (B), for the AVX2 machine's target")
    ap.add_argument("--certify-ab", help="a saved bench/certify_ab.py --json file (the quick certify's A/B)")
    ap.add_argument("--repetitions", type=int, default=3,
                    help="run each case this many times, interleaved, and judge the medians (default 3; 1: once)")
    ap.add_argument("--save", help="also write the core_bench JSON judged here to this file (--from-json rereads it)")
    a = ap.parse_args()
    # Bad arguments and files, or a peers run that cannot start, are refused before the minutes of
    # benchmarks (and before the minute of peers).
    if a.repetitions < 1:
        sys.exit("targets: --repetitions must be at least 1")
    certify_ab = load(a.certify_ab, "certify A/B JSON") if a.certify_ab else None
    avx2_ab = load(a.avx2_ab, "AVX2 A/B JSON") if a.avx2_ab else None
    peers = load(a.peers, "peers JSON") if a.peers else run_peers(a.build) if a.run_peers else None
    data = load(a.from_json, "core_bench JSON") if a.from_json else run_core_bench(a.build, a.repetitions)
    if not isinstance(data, dict) or "benchmarks" not in data:
        sys.exit("targets: %s is not a core_bench JSON (no \"benchmarks\")" % (a.from_json or "the run"))
    if a.save:
        with open(a.save + ".tmp", "w") as f:
            json.dump(data, f, indent=1)
        os.replace(a.save + ".tmp", a.save)
    run = Run(data["benchmarks"])
    report(judge(run, peers, certify_ab, avx2_ab), machine_name(), core_path(run), run.repetitions())


if __name__ == "__main__":
    main()
