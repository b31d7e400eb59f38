#!/usr/bin/python3
"""Validates a JSON document (a certificate, a manifest) against a JSON Schema 2020-12 (`attnv schema ...`).

usage: validate_certificate.py SCHEMA CERTIFICATE
Exit 0: valid; 1: invalid (every error printed); 77: python3-jsonschema is not installed.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (Debian: apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(77)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        doc = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors:
        print("/".join(str(p) for p in e.path) or "(root)", ":", e.message, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
