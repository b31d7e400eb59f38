"""The command line of the table scripts beside it (fp8_table.py, ggml_blocks_table.py): print the
table, or with `--check FILE` exit 1 unless FILE holds exactly that table (a ctest runs it, so a
checked-in table cannot drift from the definitions that compute it)."""
import sys


def main(text, script):
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        with open(sys.argv[2]) as f:
            if f.read() != text:
                sys.exit(f"{sys.argv[2]} differs from what {script} computes: regenerate it with\n"
                         f"  python3 problem/tests/{script} > {sys.argv[2]}")
        sys.exit(0)
    sys.stdout.write(text)
