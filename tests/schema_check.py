#!/usr/bin/python3
"""Validates ttsbuf's JSON and JSONL outputs against schema/*.schema.json
with python3-jsonschema (Debian's), and CSV headers against the schema's
flattened names.  Run by the test group "schema" (tests/test_schema.c):

    schema_check.py SCHEMA_DIR FILE...           JSON documents, JSONL files
    schema_check.py SCHEMA_DIR --csv KIND FILE   KIND: bench_summary, sweep,
                                                 compare
    schema_check.py SCHEMA_DIR --dir DIR         what tests/collect/collect.c
                                                 kept: GROUP.ID.COMMAND.WHAT.EXT
                                                 (EXT json, jsonl, KIND.csv)
    schema_check.py SCHEMA_DIR --man PAGE...     every key of every schema is
                                                 named in the man pages

Each JSON object names its schema ("schema": {"name", "version"}); a
bench records or trace header makes the lines after it records or trace
events.  Prints one line per problem and exits 1 when there is any.
"""
import io
import json
import multiprocessing
import os
import re
import sys

import jsonschema

NAMES = {
    "ttsbuf.result": "result",
    "ttsbuf.bench_summary": "bench_summary",
    "ttsbuf.sweep": "sweep",
    "ttsbuf.compare": "compare",
    "ttsbuf.bench_records": "bench_records_header",
    "ttsbuf.trace": "trace_header",
    "ttsbuf.serve_log": "serve_log",
}
# What the lines after a header are.
FOLLOWERS = {
    "bench_records_header": "bench_record",
    "trace_header": "trace_event",
    "serve_log": "serve_log",
}
# Where a CSV's rows live in the JSON document of the same kind.
CSV_ROWS = {"bench_summary": "levels", "sweep": "points", "compare": "rows"}


def load(sdir):
    store, schemas = {}, {}
    for f in sorted(os.listdir(sdir)):
        if f.endswith(".schema.json"):
            with open(os.path.join(sdir, f)) as fh:
                s = json.load(fh)
            jsonschema.Draft202012Validator.check_schema(s)
            store[s["$id"]] = s
            schemas[f[: -len(".schema.json")]] = s
    return store, schemas


VALIDATORS = {}


def validator(kind, store, schemas):
    if kind not in VALIDATORS:
        s = schemas[kind]
        VALIDATORS[kind] = jsonschema.Draft202012Validator(
            s, resolver=jsonschema.RefResolver.from_schema(s, store=store)
        )
    return VALIDATORS[kind]


def kind_of(doc):
    sc = doc.get("schema")
    if isinstance(sc, dict) and sc.get("name") in NAMES:
        return NAMES[sc["name"]]
    if "ttsbuf_trace" in doc:
        return "trace_header"
    return None


def documents(path):
    """(where, object, line) for a JSON document (line None) or each line
    of a JSONL file."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        yield path, json.loads(text), None
        return
    except ValueError:
        pass
    for n, line in enumerate(io.StringIO(text), 1):
        if line.strip():
            yield "%s:%d" % (path, n), json.loads(line), line


# Lines already found valid, by kind: a long trace repeats its lines (a
# burst of one token at one time), and a line's validity depends on its
# text alone.  Bounded: only short lines, at most CACHE_MAX of them.
SEEN = set()
CACHE_MAX = 200000


def check_json(paths, store, schemas, kinds=None):
    problems, count = [], 0
    for path in paths:
        follow, ndocs = None, 0
        try:
            for where, doc, line in documents(path):
                ndocs += 1
                kind = kind_of(doc) if isinstance(doc, dict) else None
                if kind is not None:
                    follow = FOLLOWERS.get(kind)
                else:
                    kind = follow
                if kind is None:
                    problems.append("%s: names no schema: %.120s" % (where, json.dumps(doc)))
                    continue
                count += 1
                if kinds is not None:
                    kinds[kind] = kinds.get(kind, 0) + 1
                key = (kind, line) if line is not None and len(line) < 256 else None
                if key is not None and key in SEEN:
                    continue
                bad = False
                for e in validator(kind, store, schemas).iter_errors(doc):
                    bad = True
                    problems.append(
                        "%s: %s at /%s: %s"
                        % (where, kind, "/".join(str(p) for p in e.absolute_path), e.message[:200])
                    )
                if key is not None and not bad and len(SEEN) < CACHE_MAX:
                    SEEN.add(key)
        except ValueError as e:
            problems.append("%s: not JSON or JSONL: %s" % (path, e))
        if ndocs == 0:
            problems.append("%s: empty (no JSON document)" % path)
    return problems, count


def resolve(s, store):
    while "$ref" in s:
        uri, _, frag = s["$ref"].partition("#")
        s = store[uri]
        for part in frag.strip("/").split("/"):
            s = s[part]
    return s


def flat(s, store, prefix="", required_only=False):
    """The CSV columns of one row object: nested objects joined by '_'
    (with required_only, of its required keys only: the columns of a row
    without the optional ones, such as sweep's without a TTS option)."""
    out = []
    for name, sub in s["properties"].items():
        if required_only and name not in s.get("required", []):
            continue
        sub = resolve(sub, store)
        for alt in sub.get("oneOf", []):  # null or a block (tts_stats): the block's
            alt = resolve(alt, store)
            if alt.get("type") == "object" and alt.get("properties"):
                sub = alt
        if sub.get("type") == "object" and sub.get("properties"):
            out += flat(sub, store, prefix + name + "_")
        elif sub.get("type") != "array":
            out.append(prefix + name)
    return out


def subsequence(got, want):
    """Whether got's columns are some of want's, in want's order."""
    it = iter(want)
    return all(c in it for c in got)


def check_csv(kind, path, store, schemas):
    row = resolve(schemas[kind]["properties"][CSV_ROWS[kind]]["items"], store)
    want = flat(row, store)
    with open(path, encoding="utf-8") as fh:
        got = fh.readline().rstrip("\r\n").split(",")
    if got != want and got == flat(row, store, required_only=True):
        return []
    if got != want and subsequence(got, want) and all(
        c in got for c in flat(row, store, required_only=True)
    ):
        return []  # optional groups (sweep's TTS, v2v, target columns) in order
    if got != want:
        extra = [c for c in got if c not in want]
        missing = [c for c in want if c not in got]
        return ["%s: CSV header is not the schema's %s columns (extra %s, missing %s, order %s)"
                % (path, kind, extra, missing, "differs" if not extra and not missing else "-")]
    return []


def tally(counts):
    return ", ".join("%s %d" % kv for kv in sorted(counts.items())) or "none"


# The schemas of check_dir's worker processes (inherited at fork).
STORE, SCHEMAS = None, None


def check_one(path):
    """(problems, count, kinds) of one collected file."""
    name, kinds = os.path.basename(path), {}
    if name.endswith(".csv"):
        kind = name.rsplit(".", 2)[1]
        kinds["csv " + kind] = 1
        return check_csv(kind, path, STORE, SCHEMAS), 1, kinds
    p, n = check_json([path], STORE, SCHEMAS, kinds)
    return p, n, kinds


def check_dir(d, store, schemas):
    """Every output the test run kept, with counts per group and kind.  The
    files are validated by one process per CPU (python3-jsonschema is pure
    Python: a whole suite's outputs take a CPU-minute), the largest first."""
    global STORE, SCHEMAS
    problems, count, groups, kinds, big, todo = [], 0, {}, {}, [], []
    STORE, SCHEMAS = store, schemas
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        group = name.split(".", 1)[0]
        groups[group] = groups.get(group, 0) + 1
        if name.endswith(".toolarge"):
            big.append(name)
        else:
            todo.append(path)
    todo.sort(key=lambda p: -os.path.getsize(p))
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        results = pool.map(check_one, todo, chunksize=1)
    for path, (p, n, k) in sorted(zip(todo, results)):
        problems += p
        count += n
        for kind, c in k.items():
            kinds[kind] = kinds.get(kind, 0) + c
    print("collected %d files; per group: %s" % (sum(groups.values()), tally(groups)))
    print("validated per kind: %s" % tally(kinds))
    if big:
        print("not validated (over the copy cap): %s" % ", ".join(big))
    return problems, count


def keys(s, store, out, seen):
    """Every property name in s, nested objects and variants included."""
    s = resolve(s, store)
    if id(s) in seen:
        return
    seen.add(id(s))
    for k in ("allOf", "anyOf", "oneOf"):
        for sub in s.get(k, []):
            keys(sub, store, out, seen)
    for k in ("then", "else", "items"):
        if isinstance(s.get(k), dict):
            keys(s[k], store, out, seen)
    for name, sub in s.get("properties", {}).items():
        out.add(name)
        keys(sub, store, out, seen)


def check_man(pages, store, schemas):
    text = ""
    for p in pages:
        with open(p, encoding="utf-8") as fh:
            text += fh.read()
    for roff, plain in (("\\:", ""), ("\\-", "-"), ("\\f[V]", " "), ("\\f[R]", " ")):
        text = text.replace(roff, plain)
    problems = []
    for kind, s in sorted(schemas.items()):
        names = set()
        keys(s, store, names, set())
        for n in sorted(names):
            if not re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(n), text):
                problems.append("%s: key %s is in no man page (%s)" % (kind, n, ", ".join(pages)))
    return problems, len(schemas)


def main(argv):
    store, schemas = load(argv[1])
    if len(argv) >= 4 and argv[2] == "--man":
        problems, count = check_man(argv[3:], store, schemas)
    elif len(argv) == 4 and argv[2] == "--dir":
        problems, count = check_dir(argv[3], store, schemas)
    elif len(argv) == 5 and argv[2] == "--csv":
        problems, count = check_csv(argv[3], argv[4], store, schemas), 1
    else:
        problems, count = check_json(argv[2:], store, schemas)
    for p in problems[:40]:
        print(p)
    if len(problems) > 40:
        print("... and %d more" % (len(problems) - 40))
    print("%d checked, %d problem%s" % (count, len(problems), "" if len(problems) == 1 else "s"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
