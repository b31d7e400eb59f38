#!/usr/bin/env python3
"""bench/certify_ab.py against stand-in attnv programs whose cost is known: a side that burns five
times the CPU must read about five times slower in both ratios, every run must get its own
--report directory, what each side certified must be read from its certificate, a side that does
not certify must end the A/B with its output and leave no JSON behind, and the JSON must be what
bench/targets.py --certify-ab judges."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import targets  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(HERE), "certify_ab.py")

# A stand-in attnv: checks it was asked to certify with a --report directory that exists, burns
# CPU_S of CPU time, then exits with STATUS. Wrong arguments exit 9 with a message.
FAKE = """#!{python}
import os, sys, time
args = sys.argv[1:]
if args[:1] != ["certify"] or "--report" not in args or not os.path.isdir(args[args.index("--report") + 1]):
    print("fake attnv: bad arguments", args)
    sys.exit(9)
end = time.process_time() + {cpu_s}
while time.process_time() < end:
    pass
if {isa!r}:
    import json
    with open(os.path.join(args[args.index("--report") + 1], "certificate.json"), "w") as f:
        json.dump({{"verdict": {{"line": "{message}"}}, "provenance": {{"attnv_commit": "abc123", "isa": {isa!r}}}}}, f)
print("{message}")
sys.exit({status})
"""


def fake(tmp, name, cpu_s, status=0, message="CERTIFIED", isa=""):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(FAKE.format(python=sys.executable, cpu_s=cpu_s, status=status, message=message, isa=isa))
    os.chmod(path, 0o755)
    return path


def run_ab(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class CertifyAB(unittest.TestCase):
    def test_the_slower_side_reads_slower_and_targets_judges_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            slow, quick = fake(tmp, "slow", 0.5, isa="avx2+fma"), fake(tmp, "quick", 0.1, isa="avx512f")
            out = os.path.join(tmp, "ab.json")
            done = run_ab(slow, quick, "--rounds", "2", "--json", out)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("round 2 (B first)", done.stdout)
            with open(out) as f:
                result = json.load(f)
            self.assertEqual(len(result["rounds"]), 2)
            # 0.5 + start-up against 0.1 + start-up CPU seconds: well above 2 however slow the start.
            self.assertGreater(result["cpu_ratio_a_over_b"]["median"], 2.0)
            self.assertGreater(result["wall_ratio_a_over_b"]["median"], 2.0)
            self.assertEqual(targets.certify_speed(result), result["wall_ratio_a_over_b"]["median"])
            # What each side certified is kept, and targets.py says which paths it compared.
            self.assertEqual(result["a_certified"], {"line": "CERTIFIED", "commit": "abc123", "isa": "avx2+fma"})
            self.assertIn("A: avx2+fma path, commit abc123: CERTIFIED", done.stdout)
            self.assertIn("old on the avx2+fma path, new on avx512f", targets.certify_context(result))
            # The other way round, B is the slower: the target would not be met.
            done = run_ab(quick, slow, "--rounds", "1", "--json", out)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out) as f:
                self.assertLess(targets.certify_speed(json.load(f)), 0.5)

    def test_a_side_that_does_not_certify_ends_the_ab_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            good, bad = fake(tmp, "good", 0.0), fake(tmp, "bad", 0.0, status=2, message="NOT CERTIFIED: 3 checks failed")
            out = os.path.join(tmp, "ab.json")
            done = run_ab(good, bad, "--json", out)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("exited with 2", done.stderr)
            self.assertIn("NOT CERTIFIED: 3 checks failed", done.stderr)
            self.assertFalse(os.path.exists(out))
            self.assertFalse(os.path.exists(out + ".tmp"))

    def test_a_program_without_a_certificate_is_timed_and_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            plain = fake(tmp, "plain", 0.0)
            done = run_ab(plain, plain, "--rounds", "1")
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("A: no certificate JSON to say what it certified", done.stdout)

    def test_refuses_what_cannot_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = fake(tmp, "good", 0.0)
            done = run_ab(good, os.path.join(tmp, "missing"))
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("is not an executable", done.stderr)
            done = run_ab(good, good, "--rounds", "0")
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("--rounds must be at least 1", done.stderr)


if __name__ == "__main__":
    unittest.main()
