#!/usr/bin/env python3
"""bench/targets.py's judgement on made-up core_bench runs: a run that meets every target, the same
run with one figure planted just under its threshold (each target in turn must say NOT MET, and
only it), missing, failed and incomplete cases (NOT MEASURED, with the reason), an AVX2-only
machine (NOT APPLICABLE), the quick certify's A/B (bench/certify_ab.py's file), and the command
line refusing a file that is not a run."""
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import targets  # noqa: E402

AVX512_TARGETS = 12


def case(name, **counters):
    return dict(name=name, run_type="iteration", label="f32 T=4096 avx512", **counters)


def good_run():
    runs = [case("BM_FmaPeak/iterations:5/real_time", best_GFLOPs_cpu=230.0),
            case("BM_FmaPeakAvx512/iterations:5/real_time", best_GFLOPs_cpu=232.0)]
    for dtype in (1, 2, 3):
        for d in (128, 64):
            for causal in (0, 1):
                full = 200.0 if dtype == 1 else 195.0
                runs.append(case("BM_CoreForward/%d/4096/%d/%d/0/min_time:1.000/real_time" % (dtype, d, causal),
                                 cpu_peak_share=0.85 if causal == 0 else 0.45, cpu_GFLOPs=full if causal == 0 else 100.0,
                                 cpu_useful_GFLOPs=full if causal == 0 else 0.95 * full))
    runs.append(case("BM_CoreBackward/1/4096/128/0/0/min_time:1.000/real_time", cpu_peak_share=0.66))
    for dtype in (1, 2):
        runs.append(case("BM_CoreDecode/%d/0/0/min_time:1.000/manual_time" % dtype, paired_share=0.8, sweep_GBps=33.0))
        runs.append(case("BM_DecodeArithmetic/%d/0/min_time:0.500/manual_time" % dtype, best_ceiling_GBps=44.0))
    return runs


def good_peers(attention_over_core=1.30):
    return {"rows": [{"D": 128, "causal": 0,
                      "median_wall_cpu_s": {"core": [0.36, 0.36], "Attention": [0.45, 0.36 * attention_over_core]}}]}


def good_certify_ab(old_over_new=1.04):
    """What bench/certify_ab.py --json writes, for three rounds whose median wall ratio is given."""
    walls = [old_over_new - 0.02, old_over_new, old_over_new + 0.03]
    return {"rounds": [{"wall_ratio_a_over_b": w, "cpu_ratio_a_over_b": 1.0} for w in walls],
            "wall_ratio_a_over_b": {"median": old_over_new, "min": walls[0], "max": walls[2]},
            "cpu_ratio_a_over_b": {"median": 1.0, "min": 1.0, "max": 1.0}}


def good_avx2_ab(d128, d64):
    """What bench/ab.py --json writes for the forward at D=128 and D=64."""
    return [{"case": "BM_CoreForward/1/4096/%d/0/0/min_time:1.000/real_time" % d, "metric": "cpu_GFLOPs",
             "a": 100.0, "b": 100.0 * r, "ratio": r, "low": 1.016, "high": 1.181, "wall": r}
            for d, r in ((128, d128), (64, d64))]


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def verdicts(runs, peers, certify_ab=None):
    return [(name, verdict, note) for name, verdict, _, _, note in targets.judge(targets.Run(runs), peers, certify_ab)]


def set_counter(runs, prefix, key, value):
    for b in runs:
        if b["name"].startswith(prefix):
            b[key] = value
    return runs


class Judge(unittest.TestCase):
    def test_a_good_run_meets_every_target(self):
        got = verdicts(good_run(), good_peers())
        self.assertEqual([v for _, v, _ in got[:AVX512_TARGETS]], [targets.MET] * AVX512_TARGETS)
        # What no core_bench run can show is said, not passed over.
        self.assertEqual([v for _, v, _ in got[AVX512_TARGETS:]], [targets.NOT_MEASURED] * 2)
        out = io.StringIO()
        with redirect_stdout(out):
            targets.report(targets.judge(targets.Run(good_run()), good_peers()), "test CPU", "avx512")
        self.assertIn("targets: 12 met, 2 not measured", out.getvalue())
        self.assertNotIn("every target that applies here is met", out.getvalue())

    def test_each_planted_shortfall_is_not_met_and_only_it(self):
        f = "BM_CoreForward/"
        plants = [  # one per target, in judge's order: the figure just under its threshold
            lambda r, p: (set_counter(r, f + "1/4096/128/0/0/", "cpu_peak_share", 0.699), p),
            lambda r, p: (r, good_peers(1.249)),
            lambda r, p: (set_counter(r, f + "1/4096/64/0/0/", "cpu_peak_share", 0.599), p),
            lambda r, p: (set_counter(r, f + "1/4096/128/1/0/", "cpu_useful_GFLOPs", 0.849 * 200), p),
            lambda r, p: (set_counter(r, f + "1/4096/64/1/0/", "cpu_useful_GFLOPs", 0.849 * 200), p),
            lambda r, p: (set_counter(r, f + "2/4096/128/0/0/", "cpu_GFLOPs", 0.899 * 200), p),
            lambda r, p: (set_counter(r, f + "3/4096/128/0/0/", "cpu_GFLOPs", 0.899 * 200), p),
            lambda r, p: (set_counter(r, f + "2/4096/64/0/0/", "cpu_GFLOPs", 0.899 * 200), p),
            lambda r, p: (set_counter(r, f + "3/4096/64/0/0/", "cpu_GFLOPs", 0.899 * 200), p),
            lambda r, p: (set_counter(r, "BM_CoreBackward/", "cpu_peak_share", 0.449), p),
            lambda r, p: (set_counter(r, "BM_CoreDecode/1/", "paired_share", 0.699), p),
            lambda r, p: (set_counter(r, "BM_CoreDecode/2/", "paired_share", 0.699), p),
        ]
        self.assertEqual(len(plants), AVX512_TARGETS)
        for i, plant in enumerate(plants):
            runs, peers = plant(good_run(), good_peers())
            got = [v for _, v, _ in verdicts(runs, peers)[:AVX512_TARGETS]]
            want = [targets.MET] * AVX512_TARGETS
            want[i] = targets.NOT_MET
            self.assertEqual(got, want, "planted under target %d" % i)

    def test_missing_failed_and_incomplete_cases_are_not_measured(self):
        runs = [b for b in good_run() if not b["name"].startswith("BM_CoreBackward/")]
        runs = set_counter(runs, "BM_CoreDecode/1/", "error_occurred", True)
        runs = set_counter(runs, "BM_CoreDecode/1/", "error_message", "this CPU lacks avx512f")
        for b in runs:
            if b["name"].startswith("BM_CoreDecode/2/"):
                del b["paired_share"]
        got = {name: (v, note) for name, v, note in verdicts(runs, good_peers())}
        backward = got["backward f32 D=128 full, share of the peak"]
        self.assertEqual(backward[0], targets.NOT_MEASURED)
        self.assertIn("ran no BM_CoreBackward/1/4096/128/0/0/", backward[1])
        f32 = got["decode, f32 cache, share of the paired stream"]
        self.assertEqual(f32, (targets.NOT_MEASURED, "BM_CoreDecode/1/0/0/min_time:1.000/manual_time: this CPU lacks avx512f"))
        f16 = got["decode, f16 cache, share of the paired stream"]
        self.assertEqual(f16[0], targets.NOT_MEASURED)
        self.assertIn("reports no paired_share (an attnv defect", f16[1])
        out = io.StringIO()
        with redirect_stdout(out):
            targets.report(targets.judge(targets.Run(runs), good_peers()), "test CPU", "avx512")
        self.assertNotIn("every target that applies here is met", out.getvalue())

    def test_without_peers_the_onnxruntime_target_is_not_measured(self):
        got = verdicts(good_run(), None)
        self.assertEqual(got[1][1], targets.NOT_MEASURED)
        self.assertIn("--run-peers", got[1][2])
        self.assertEqual(verdicts(good_run(), {"rows": []})[1][1], targets.NOT_MEASURED)

    def test_an_avx2_machine_gets_not_applicable_and_the_ab_it_needs(self):
        runs = set_counter(good_run(), "BM_FmaPeakAvx512/", "error_occurred", True)
        got = verdicts(runs, good_peers())
        self.assertEqual([v for _, v, _ in got[:AVX512_TARGETS]], [targets.NOT_APPLICABLE] * AVX512_TARGETS)
        self.assertEqual(got[AVX512_TARGETS][1], targets.NOT_MEASURED)
        self.assertIn("bench/ab.py OLD/core_bench NEW/core_bench", got[AVX512_TARGETS][2])
        self.assertIn("8e9a92c", got[AVX512_TARGETS][2])

    def test_the_avx2_machine_is_judged_from_its_ab_only_on_an_avx2_machine(self):
        avx2 = set_counter(good_run(), "BM_FmaPeakAvx512/", "error_occurred", True)
        at = AVX512_TARGETS

        def row(runs, ab):
            return targets.judge(targets.Run(runs), None, None, ab)[at]

        met = row(avx2, good_avx2_ab(1.141, 1.083))
        self.assertEqual(met[1:4], (targets.MET, 1.083, 1.0))  # the slower case decides
        self.assertEqual(met[4], "new over old, median (range): BM_CoreForward/1/4096/128/0/0 1.141 (1.016-1.181); "
                                 "BM_CoreForward/1/4096/64/0/0 1.083 (1.016-1.181)")
        self.assertEqual(row(avx2, good_avx2_ab(1.141, 0.98))[1], targets.NOT_MET)
        # On an AVX-512 CPU (or one that did not say) the avx2 path's A/B is shown, not judged.
        for runs in (good_run(), [b for b in good_run() if not b["name"].startswith("BM_FmaPeakAvx512/")]):
            shown = row(runs, good_avx2_ab(1.141, 1.083))
            self.assertEqual(shown[1], targets.NOT_MEASURED)
            self.assertIn("needs an AVX2-only machine", shown[4])
            self.assertIn("1.083", shown[4])
        wrong = row(avx2, {"rows": []})
        self.assertEqual(wrong[1], targets.NOT_MEASURED)
        self.assertIn("not a bench/ab.py --json file", wrong[4])
        self.assertEqual(row(avx2, [])[1], targets.NOT_MEASURED)

    def test_a_run_without_the_avx512_peak_cannot_tell_the_machine(self):
        runs = [b for b in good_run() if not b["name"].startswith("BM_FmaPeakAvx512/")]
        got = verdicts(runs, good_peers())
        self.assertEqual([v for _, v, _ in got[:AVX512_TARGETS]], [targets.NOT_MEASURED] * AVX512_TARGETS)
        self.assertIn("whether this machine has AVX-512 is unknown", got[0][2])

    def test_the_onnxruntime_row_shows_the_medians_it_divides(self):
        got = verdicts(good_run(), good_peers())
        self.assertEqual(got[1][2], "medians: core 360.0 ms, Attention 450.0 ms wall (360.0 / 468.0 CPU ms per thread)")

    def test_the_quick_certify_is_judged_from_its_ab(self):
        quick = -1  # the last row
        met = verdicts(good_run(), good_peers(), good_certify_ab(1.04))[quick]
        self.assertEqual(met[1], targets.MET)
        self.assertEqual(met[2], "3 rounds, old over new wall 1.020-1.070; CPU time 1.000 (1.000-1.000)")
        self.assertEqual(verdicts(good_run(), good_peers(), good_certify_ab(0.99))[quick][1], targets.NOT_MET)
        missing = verdicts(good_run(), good_peers())[quick]
        self.assertEqual(missing[1], targets.NOT_MEASURED)
        self.assertIn("bench/certify_ab.py OLD/attnv NEW/attnv", missing[2])
        wrong = verdicts(good_run(), good_peers(), {"rows": []})[quick]
        self.assertEqual(wrong[1], targets.NOT_MEASURED)
        self.assertIn("not a bench/certify_ab.py --json file", wrong[2])
        # It applies to every machine: an AVX2-only one judges it too.
        avx2 = set_counter(good_run(), "BM_FmaPeakAvx512/", "error_occurred", True)
        self.assertEqual(verdicts(avx2, None, good_certify_ab(1.04))[quick][1], targets.MET)
        out = io.StringIO()
        with redirect_stdout(out):
            targets.report(targets.judge(targets.Run(good_run()), good_peers(), good_certify_ab()), "test CPU", "avx512")
        self.assertIn("targets: 13 met, 1 not measured", out.getvalue())
        self.assertNotIn("every target that applies here is met", out.getvalue())

    def test_a_figure_just_under_its_threshold_is_not_printed_as_equal(self):
        self.assertEqual(targets.shown(0.8996, 0.90), "0.8996")
        self.assertEqual(targets.shown(0.89999991, 0.90), "0.8999999")
        self.assertEqual(targets.shown(0.9004, 0.90), "0.900")
        self.assertEqual(targets.shown(0.8123, 0.70), "0.812")
        runs = set_counter(good_run(), "BM_CoreForward/3/4096/64/0/0/", "cpu_GFLOPs", 0.89996 * 200)
        out = io.StringIO()
        with redirect_stdout(out):
            targets.report(targets.judge(targets.Run(runs), good_peers()), "test CPU", "avx512")
        self.assertRegex(out.getvalue(), r"NOT MET +bf16 over f32, D=64 full +0\.8999\d* < 0\.90")

    def test_the_decode_rows_say_how_much_of_the_stream_the_arithmetic_could_take(self):
        got = {name: note for name, _, note in verdicts(good_run(), good_peers())}
        self.assertEqual(got["decode, f16 cache, share of the paired stream"],
                         "the arithmetic alone could take 1.33 of this 33.0 GB/s stream")


class Repetitions(unittest.TestCase):
    @staticmethod
    def repeated(shares, median):
        """good_run with the D=128 forward run len(shares) times and its median aggregate."""
        name = "BM_CoreForward/1/4096/128/0/0/min_time:1.000/real_time"
        runs = [b for b in good_run() if b["name"] != name]
        for i, share in enumerate(shares):
            runs.append(case(name, cpu_peak_share=share, cpu_GFLOPs=200.0, cpu_useful_GFLOPs=200.0,
                             repetition_index=i, repetitions=len(shares)))
        runs.append(dict(case(name + "_median", cpu_peak_share=median, cpu_GFLOPs=200.0, cpu_useful_GFLOPs=200.0),
                         run_type="aggregate", aggregate_name="median"))
        runs.append(dict(case(name + "_mean", cpu_peak_share=0.0), run_type="aggregate", aggregate_name="mean"))
        return runs

    def test_a_repeated_case_is_judged_by_its_median(self):
        runs = self.repeated([0.65, 0.80, 0.75], 0.75)
        rows = targets.judge(targets.Run(runs), good_peers())
        self.assertEqual(rows[0][1:3], (targets.MET, 0.75))  # not the first repetition's 0.65, not the mean
        self.assertEqual(targets.Run(runs).repetitions(), 3)
        rows = targets.judge(targets.Run(self.repeated([0.65, 0.80, 0.68], 0.68)), good_peers())
        self.assertEqual(rows[0][1:3], (targets.NOT_MET, 0.68))

    def test_one_failed_repetition_leaves_the_case_not_measured(self):
        runs = self.repeated([0.75, 0.80, 0.75], 0.75)
        runs = [dict(b, error_occurred=True, error_message="busy") if b.get("repetition_index") == 1 else b for b in runs]
        rows = targets.judge(targets.Run(runs), good_peers())
        self.assertEqual(rows[0][1], targets.NOT_MEASURED)
        self.assertIn("busy", rows[0][4])


# A stand-in core_bench for the command line: records its arguments, writes good_run() (each case
# marked with the repetitions it was asked for) where --benchmark_out says.
FAKE_CORE_BENCH = """#!{python}
import json, sys
sys.path.insert(0, {here!r})
from targets_test import good_run
args = sys.argv[1:]
open({argv!r}, "w").write("\\n".join(args))
reps = [int(a.split("=")[1]) for a in args if a.startswith("--benchmark_repetitions=")] or [1]
out = [a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out=")][0]
json.dump({{"benchmarks": [dict(b, repetitions=reps[0]) for b in good_run()]}}, open(out, "w"))
"""


class CommandLine(unittest.TestCase):
    def run_cli(self, *args):
        return subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "targets.py"), *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def test_judges_a_saved_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            run, peers, ab = (os.path.join(tmp, n) for n in ("run.json", "peers.json", "ab.json"))
            write_json(run, {"benchmarks": good_run()})
            write_json(peers, good_peers())
            write_json(ab, good_certify_ab())
            done = self.run_cli("--from-json", run, "--peers", peers)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("targets: 12 met, 2 not measured", done.stdout)
            done = self.run_cli("--from-json", run, "--peers", peers, "--certify-ab", ab)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("targets: 13 met, 1 not measured", done.stdout)

    def test_runs_core_bench_with_interleaved_repetitions(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.mkdir(os.path.join(tmp, "bench"))
            argv, bench = os.path.join(tmp, "argv.txt"), os.path.join(tmp, "bench", "core_bench")
            with open(bench, "w") as f:
                f.write(FAKE_CORE_BENCH.format(python=sys.executable, here=HERE, argv=argv))
            os.chmod(bench, 0o755)
            done = self.run_cli("--build", tmp)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(argv) as f:
                args = f.read().split("\n")
            self.assertIn("--benchmark_repetitions=3", args)
            self.assertIn("--benchmark_enable_random_interleaving=true", args)
            self.assertIn("medians of 3 repetitions, interleaved", done.stdout)
            self.assertIn("targets: 11 met, 3 not measured", done.stdout)  # no peers, no certify A/B
            done = self.run_cli("--build", tmp, "--repetitions", "1")
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(argv) as f:
                self.assertFalse([a for a in f.read().split("\n") if "repetitions" in a or "interleaving" in a])
            self.assertNotIn("medians of", done.stdout)
            # Refused before anything runs, the peers' minute included.
            done = self.run_cli("--build", tmp, "--repetitions", "0", "--run-peers")
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("--repetitions must be at least 1", done.stderr)
            self.assertNotIn("peers.py", done.stderr)

    def test_refuses_a_file_that_is_not_a_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad, broken = os.path.join(tmp, "bad.json"), os.path.join(tmp, "broken.json")
            write_json(bad, {"rows": []})
            with open(broken, "w") as f:
                f.write("{not json")
            done = self.run_cli("--from-json", bad)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("is not a core_bench JSON", done.stderr)
            done = self.run_cli("--from-json", broken)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("cannot read core_bench JSON", done.stderr)
            done = self.run_cli("--peers", broken, "--build", tmp)  # refused before looking for core_bench
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("cannot read peers JSON", done.stderr)
            done = self.run_cli("--avx2-ab", broken, "--build", tmp)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("cannot read AVX2 A/B JSON", done.stderr)
            done = self.run_cli("--certify-ab", broken, "--build", tmp)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("cannot read certify A/B JSON", done.stderr)


if __name__ == "__main__":
    unittest.main()
