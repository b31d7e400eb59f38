#!/usr/bin/env python3
"""The Python route's cost: the same kernel certified in process from Python and as a C plugin.

    python3 bench/python_route.py --attnv build/release/cli/attnv \\
        --plugin build/release/plugin/libattnv_naive_plugin.so --module build/release/python --rounds 3

The kernel is attnv's naive kernel both times, so the arithmetic is the same and the difference
is the route: Python (attnv.certify on attnv._attnv.native_kernel("naive"): every call converts
the case to NumPy arrays, calls a Python function that converts them back, runs the C++ kernel
and returns NumPy arrays, which attnv checks and reads) against the plugin (the attnv-worker
process, shared memory, guard pages). Each side certifies the same requirements on the same
seed, quick tier, one dtype: every requirement both can claim (R11, strided layouts, is left out:
the Python route passes dense arrays). Each side runs as its own process (the Python one
includes starting the interpreter and importing NumPy, as a user's run does). Rounds alternate
which side goes first; the figure is the median over the rounds of Python's wall time over the
plugin's (issue 38's target: at most 1.5), with the CPU ratio beside it. A side that does not
certify ends the run with its output. Standard library only.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

from abtools import child_cpu_s, summary, write_json

PYTHON_SIDE = r'''
import json, sys
import attnv
nk = attnv._attnv.native_kernel("naive")
dtype, only = sys.argv[1], sys.argv[2].split(",")
claims = json.loads(nk.claims_json([dtype]))
kernel = attnv.Kernel(nk.forward, backward=nk.backward, decode=nk.decode, name="naive")
cert = attnv.certify(kernel, claims=claims, dtypes=[dtype], suite="quick", only=only)
print(cert.verdict_line)
sys.exit(0 if cert.certified else 1)
'''



def timed(cmd, env=None):
    cpu0, wall0 = child_cpu_s(), time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    wall, cpu = time.monotonic() - wall0, child_cpu_s() - cpu0
    if done.returncode != 0:
        sys.exit("python_route: %s exited with %d; its last output:\n%s"
                 % (" ".join(cmd[:3]), done.returncode, done.stdout.strip()[-1500:]))
    verdict = [line for line in done.stdout.splitlines() if re.match(r"(NOT )?CERTIFIED", line)]
    return wall, cpu, verdict[-1] if verdict else "(no verdict line)"


def requirement_ids(attnv):
    out = subprocess.run([attnv, "requirements", "--json"], check=True, capture_output=True, text=True).stdout
    reqs = json.loads(out)
    reqs = reqs.get("requirements", reqs) if isinstance(reqs, dict) else reqs
    return [r["id"] for r in reqs]



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnv", required=True, help="the attnv program")
    ap.add_argument("--plugin", required=True, help="libattnv_naive_plugin.so")
    ap.add_argument("--module", required=True, help="the folder holding the attnv Python package")
    ap.add_argument("--python", default="/usr/bin/python3", help="the interpreter the module was built for")
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--only", help="requirement ids, comma-separated (default: every one but R11)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write the rounds and medians here")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("python_route: --rounds must be at least 1")
    only = a.only.split(",") if a.only else [r for r in requirement_ids(a.attnv) if r != "R11"]
    plugin = [a.attnv, "certify", "--kernel", "plugin:" + os.path.abspath(a.plugin), "--suite", "quick", "--dtype", a.dtype,
              "--only", ",".join(only)]
    python = [a.python, "-c", PYTHON_SIDE, a.dtype, ",".join(only)]
    env = dict(os.environ, PYTHONPATH=os.path.abspath(a.module))

    rounds, lines = [], {}
    for i in range(a.rounds):
        order = ("python", "plugin") if i % 2 == 0 else ("plugin", "python")
        t = {}
        for side in order:
            t[side] = timed(python, env) if side == "python" else timed(plugin)
        (wp, cp, lines["python"]), (wc, cc, lines["plugin"]) = t["python"], t["plugin"]
        rounds.append({"python_wall_s": wp, "python_cpu_s": cp, "plugin_wall_s": wc, "plugin_cpu_s": cc,
                       "wall_ratio": wp / wc, "cpu_ratio": cp / cc})
        print("round %d (%s first): Python %.1f s wall, %.1f s CPU; plugin %.1f s wall, %.1f s CPU; "
              "Python/plugin wall %.3f, CPU %.3f" % (i + 1, order[0], wp, cp, wc, cc, wp / wc, cp / cc), flush=True)
    result = {"dtype": a.dtype, "only": only, "rounds": rounds, "python_line": lines["python"],
              "plugin_line": lines["plugin"], "wall_ratio": summary([r["wall_ratio"] for r in rounds]),
              "cpu_ratio": summary([r["cpu_ratio"] for r in rounds]), "target_wall_ratio_at_most": 1.5}
    print("Python: " + lines["python"])
    print("plugin: " + lines["plugin"])
    w, c = result["wall_ratio"], result["cpu_ratio"]
    print("Python over plugin, %d rounds: wall median %.3f (%.3f-%.3f), CPU median %.3f (%.3f-%.3f); target <= 1.5: %s"
          % (len(rounds), w["median"], w["min"], w["max"], c["median"], c["min"], c["max"],
             "MET" if w["median"] <= 1.5 else "NOT MET"))
    if a.json:
        write_json(a.json, result)


if __name__ == "__main__":
    main()
