"""What the bench/ A/B scripts share (certify_ab.py, python_route.py): child processes' CPU time,
medians and ranges, and a JSON written whole or not at all. Standard library only."""
import json
import os
import resource
import statistics


def child_cpu_s():
    """CPU seconds (user + system) of the finished child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def write_json(path, result):
    """Writes `result` to a temporary file renamed over `path`."""
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(path + ".tmp", path)
