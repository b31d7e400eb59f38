#!/usr/bin/env python3
"""A/B of the quickstart's main job: two attnv builds certify the built-in core, rounds alternating.

    python3 bench/certify_ab.py OLD/cli/attnv NEW/cli/attnv --rounds 3 --json certify_ab.json
    python3 bench/targets.py --certify-ab certify_ab.json     # judges issue 13's "no slower" target

Each side runs `attnv certify --kernel builtin:core --suite quick` (ci/quickstart.sh's third
phase; --args gives other arguments instead, `certify` among them), its report written to a
temporary directory, whose certificate says what each certified (its verdict line, attnv commit
and the core's ISA path: printed and kept in the JSON). Each round runs A then B (B then A on
even rounds, so a drift within a round does not always favour one side). The figure is each run's CPU time (user + system of the process and its
threads, from the kernel's rusage) and its wall time; the ratios are A over B, so above 1 means B
is faster. Medians and ranges are over the rounds. Wall time is the judged figure
(bench/targets.py): it is what a newcomer waits for, and the thread pool polls for 50 us before
it sleeps (util/parallel.h), so a build with that pool spends CPU time that the wait does not
contain. The CPU ratio is printed beside it: on a shared VM it moves less, and when the two
agree the wall figure is not the neighbours'.

A run that does not certify (exit status other than 0) ends the A/B with its output: the time of
a failed certification is not the job's time, and a build that no longer certifies has a bigger
problem than its speed. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from abtools import child_cpu_s, summary, write_json

DEFAULT_ARGS = ("certify", "--kernel", "builtin:core", "--suite", "quick")



def what_was_certified(report):
    """The certificate's verdict line, the attnv commit and the core's ISA path, so the A/B says
    what it compared; {} when the program wrote no certificate JSON."""
    try:
        with open(os.path.join(report, "certificate.json")) as f:
            cert = json.load(f)
        return {"line": cert["verdict"]["line"], "commit": cert["provenance"].get("attnv_commit", "unknown"),
                "isa": cert["provenance"].get("isa", "unknown")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def certify(binary, args):
    """(wall s, CPU s, what_was_certified) of one certification; exits with its output when it
    does not certify."""
    with tempfile.TemporaryDirectory() as report:
        cmd = [binary, *args, "--report", report]
        cpu0, wall0 = child_cpu_s(), time.monotonic()
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall, cpu = time.monotonic() - wall0, child_cpu_s() - cpu0
        certified = what_was_certified(report)
    if done.returncode != 0:
        sys.exit("certify_ab: %s exited with %d (not certified, or an error); its last output:\n%s"
                 % (" ".join(cmd), done.returncode, done.stdout.strip()[-1500:]))
    return wall, cpu, certified



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="the baseline attnv (e.g. built at the commit before issue 13, 8e9a92c)")
    ap.add_argument("b", help="the attnv under test")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--args", help="the arguments instead of %r (--report is added)" % " ".join(DEFAULT_ARGS))
    ap.add_argument("--json", help="write the rounds and medians here (bench/targets.py --certify-ab reads it)")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("certify_ab: --rounds must be at least 1")
    for binary in (a.a, a.b):
        if not os.access(binary, os.X_OK):
            sys.exit("certify_ab: %s is not an executable" % binary)
    args = a.args.split() if a.args else list(DEFAULT_ARGS)

    rounds, certified = [], {}
    for i in range(a.rounds):
        order = ("a", "b") if i % 2 == 0 else ("b", "a")
        times = {side: certify(getattr(a, side), args) for side in order}
        (wa, ca, certified["a"]), (wb, cb, certified["b"]) = times["a"], times["b"]
        rounds.append({"a_wall_s": wa, "a_cpu_s": ca, "b_wall_s": wb, "b_cpu_s": cb,
                       "cpu_ratio_a_over_b": ca / cb, "wall_ratio_a_over_b": wa / wb})
        print("round %d (%s first): A %.1f s CPU, %.1f s wall; B %.1f s CPU, %.1f s wall; A/B CPU %.3f, wall %.3f"
              % (i + 1, order[0].upper(), ca, wa, cb, wb, ca / cb, wa / wb), flush=True)

    result = {
        "a": os.path.abspath(a.a), "b": os.path.abspath(a.b), "args": args, "rounds": rounds,
        "a_certified": certified["a"], "b_certified": certified["b"],
        "cpu_ratio_a_over_b": summary([r["cpu_ratio_a_over_b"] for r in rounds]),
        "wall_ratio_a_over_b": summary([r["wall_ratio_a_over_b"] for r in rounds]),
    }
    for side in ("a", "b"):
        c = certified[side]
        print("%s: %s" % (side.upper(), "%s path, commit %s: %s" % (c["isa"], c["commit"][:12], c["line"]) if c
                          else "no certificate JSON to say what it certified"))
    cpu, wall = result["cpu_ratio_a_over_b"], result["wall_ratio_a_over_b"]
    print("A/B over %d rounds: CPU median %.3f (%.3f-%.3f), wall median %.3f (%.3f-%.3f); above 1: B is faster"
          % (len(rounds), cpu["median"], cpu["min"], cpu["max"], wall["median"], wall["min"], wall["max"]))
    if a.json:
        write_json(a.json, result)


if __name__ == "__main__":
    main()
