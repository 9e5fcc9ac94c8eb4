#!/usr/bin/env python3
"""The layer table of docs/architecture.md, held against the build files, the
configured build and the include lines of the library.

    layers_test.py SOURCE_DIR BUILD_DIR

Checks, each printed as "ok NAME" or "FAIL NAME: WHY":
  table     The table under "## The libraries" names every folder of lib/ once,
            and each library uses only libraries of lower layers, so the graph
            has no cycle.
  meson     Each lib/FOLDER/meson.build opens with a comment saying what the
            folder owns, whose last line is "Uses: A, B." (or "Uses: nothing.")
            as the table's row says, and declares exactly those libraries:
            `evring_FOLDER_uses = [evring_A_view, evring_B_view]`.
  build     In the configured build (meson-info/intro-targets.json), each
            library (the static library evring_FOLDER that lib/FOLDER/meson.build
            defines) is compiled with the views of exactly the libraries it
            reaches (itself, what it uses, what those use, ...), and never
            with lib/ itself on its include path. (The tools, tests,
            benchmarks, fuzzers and the Python package above the libraries
            may include any private header.)
  includes  Every #include line of lib/ and include/evring/ names a header
            of the including file's own library or of one it reaches, and each
            library declares the libraries it includes headers of (no more).
            A header's library is its folder's (lib/ring/x.hpp: ring;
            include/evring/ring/x.hpp: ring), unless the table's last column
            gives the public header to another row. include/ is one include
            directory for everyone, so for public headers this check is the
            only guard; for private ones the compiler is one too.
Exits 1 when a check fails.
"""
import json
import os
import re
import sys
from collections import defaultdict

FAILED = []


def ok(name):
    print(f"ok {name}")


def fail(name, why):
    print(f"FAIL {name}: {why}")
    FAILED.append(name)


def table_rows(source):
    """The rows of the first table under "## The libraries" in docs/architecture.md."""
    text = open(os.path.join(source, "docs", "architecture.md"), encoding="utf-8").read()
    section = re.search(r"^## The libraries\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not section:
        raise SystemExit('FAIL table: docs/architecture.md has no section "## The libraries"')
    lines = []
    for line in section.group(1).splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break  # the first table only
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    want = ["layer", "library", "folder", "what it owns", "uses", "public headers"]
    if header != want:
        raise SystemExit(f"FAIL table: the table's columns are {header}, wanted {want}")
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != len(want):
            raise SystemExit(f"FAIL table: a row with {len(cells)} cells: {line}")
        layer, name, folder, _, uses, headers = cells
        rows.append({
            "layer": int(layer),
            "name": name.strip("`"),
            "folder": folder.strip("`"),
            "uses": [] if uses in ("", "-", "—") else [u.strip().strip("`") for u in uses.split(",")],
            "headers": re.findall(r"`([^`]+)`", headers),
        })
    return rows


def closure(uses, name):
    seen, todo = set(), list(uses.get(name, []))
    while todo:
        u = todo.pop()
        if u not in seen:
            seen.add(u)
            todo.extend(uses.get(u, []))
    return seen


def check_table(source, rows):
    folders = sorted(d for d in os.listdir(os.path.join(source, "lib"))
                     if os.path.isdir(os.path.join(source, "lib", d)))
    libraries = [r for r in rows if r["folder"].startswith("lib/")]
    named = sorted(r["folder"][len("lib/"):].strip("/") for r in libraries)
    for r in libraries:
        if r["folder"] != f"lib/{r['name']}/":
            fail("table", f"library {r['name']} is in {r['folder']}, wanted lib/{r['name']}/")
    if named != folders:
        fail("table", f"the table names the folders {named}, lib/ has {folders}")
    layer = {r["name"]: r["layer"] for r in rows}
    for r in rows:
        for u in r["uses"]:
            if u not in layer:
                fail("table", f"{r['name']} uses {u}, which is no row of the table")
            elif layer[u] >= r["layer"]:
                fail("table", f"{r['name']} (layer {r['layer']}) uses {u} (layer {layer[u]}): "
                              "a library uses only lower layers")
    if "table" not in FAILED:
        ok(f"table: {len(libraries)} libraries, one per folder of lib/, each using only lower layers")


def check_meson(source, rows):
    bad = 0
    for r in rows:
        if not r["folder"].startswith("lib/"):
            continue
        name = r["name"]
        path = os.path.join(source, r["folder"], "meson.build")
        text = open(path, encoding="utf-8").read()
        comment = []
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            comment.append(line.lstrip("#").strip())
        if len(comment) < 2:
            fail("meson", f"{r['folder']}meson.build does not open with a comment saying what it owns")
            bad += 1
            continue
        last = comment[-1]
        said = re.fullmatch(r"Uses: (.*)\.", last)
        want = sorted(r["uses"])
        if not said:
            fail("meson", f"{r['folder']}meson.build: the opening comment's last line is '{last}', "
                          "wanted 'Uses: ...' ")
            bad += 1
        else:
            listed = [] if said.group(1) == "nothing" else [u.strip() for u in said.group(1).split(",")]
            if sorted(listed) != want:
                fail("meson", f"{r['folder']}meson.build says it uses {listed}, the table {want}")
                bad += 1
        declared = re.search(rf"^evring_{name}_uses\s*=\s*\[([^\]]*)\]", text, re.M)
        if not declared:
            fail("meson", f"{r['folder']}meson.build has no line 'evring_{name}_uses = [...]'")
            bad += 1
            continue
        deps = sorted(re.findall(r"evring_(\w+)_view", declared.group(1)))
        if deps != want:
            fail("meson", f"{r['folder']}meson.build declares {deps}, the table {want}")
            bad += 1
    if not bad:
        ok("meson: every lib/ folder's meson.build says what it uses and declares exactly that")


def check_build(source, build, rows):
    intro = os.path.join(build, "meson-info", "intro-targets.json")
    if not os.path.exists(intro):
        fail("build", f"no {intro}: configure the build first")
        return
    targets = json.load(open(intro, encoding="utf-8"))
    uses = {r["name"]: r["uses"] for r in rows}
    lib_dir = os.path.realpath(os.path.join(source, "lib"))
    view = re.compile(r"/lib/(\w+)/view$")
    bad = 0
    seen_libraries = set()
    for t in targets:
        if t["type"] != "static library" or not t["name"].startswith("evring_"):
            continue
        name = t["name"][len("evring_"):]
        defined_in = os.path.realpath(t.get("defined_in", ""))
        if name not in uses or defined_in != os.path.join(lib_dir, name, "meson.build"):
            continue  # the merged archives (lib/meson.build) compile nothing
        seen_libraries.add(name)
        dirs = set()
        for s in t.get("target_sources", []):
            for p in s.get("parameters", []):
                if p.startswith("-I") or p.startswith("-isystem"):
                    d = p[2:] if p.startswith("-I") else p[len("-isystem"):]
                    dirs.add(os.path.normpath(os.path.join(build, d)))
        if any(os.path.realpath(d) == lib_dir for d in dirs):
            fail("build", f"library {name} has lib/ on its include path (use the views of what it uses)")
            bad += 1
        visible = {m.group(1) for d in dirs for m in [view.search(d)] if m}
        want = closure(uses, name) | {name}
        want -= {r["name"] for r in rows if not r["folder"].startswith("lib/")}
        if visible != want:
            fail("build", f"library {name} sees the folders {sorted(visible)}, "
                          f"its uses reach {sorted(want)}")
            bad += 1
    missing = sorted(r["name"] for r in rows if r["folder"].startswith("lib/"))
    missing = [m for m in missing if m not in seen_libraries and not (m == "nats" and not_built(targets, m))]
    if missing:
        fail("build", f"no static library evring_NAME in lib/NAME/meson.build for {missing}")
        bad += 1
    if not bad:
        ok(f"build: {len(seen_libraries)} libraries each see exactly the folders their uses reach, "
           "and none sees lib/ whole")


def not_built(targets, name):
    """The NATS library is built only with libnats."""
    return not any(t["name"] == f"evring_{name}" for t in targets)


def header_owner(rows, include, including_dir, source):
    """The library an #include line names, or None for a system header."""
    public = {}
    for r in rows:
        for h in r["headers"]:
            public[h] = r["name"]
    if include.startswith("evring/"):
        rest = include[len("evring/"):]
        if rest in public:
            return public[rest]
        folder = rest.split("/")[0] + "/" if "/" in rest else None
        if folder in public:
            return public[folder]
        return "?public:" + include
    first = include.split("/")[0]
    if "/" in include and os.path.isdir(os.path.join(source, "lib", first)):
        return first
    if "/" not in include and os.path.exists(os.path.join(including_dir, include)):
        return "."
    return None


def check_includes(source, rows):
    uses = {r["name"]: r["uses"] for r in rows}
    libraries = {r["name"] for r in rows if r["folder"].startswith("lib/")}
    public = {}
    for r in rows:
        for h in r["headers"]:
            public[h] = r["name"]
    # Private headers are included in quotes ("ring/ring_open.hpp"); in angle
    # brackets only <evring/...> is ours (<nats/nats.h> is libnats').
    include_re = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(evring/[^>]+)>)', re.M)
    used = defaultdict(set)
    problems = []
    files = 0

    def owner_of_public(rel):  # rel: path under include/evring/
        if rel in public:
            return public[rel]
        folder = rel.split("/")[0] + "/" if "/" in rel else None
        return public.get(folder)

    for top in ("lib", os.path.join("include", "evring")):
        for dirpath, _, names in os.walk(os.path.join(source, top)):
            for n in sorted(names):
                if not n.endswith((".cpp", ".hpp", ".h")):
                    continue
                path = os.path.join(dirpath, n)
                rel = os.path.relpath(path, source)
                if top == "lib":
                    me = rel.split(os.sep)[1]
                else:
                    me = owner_of_public(os.path.relpath(path, os.path.join(source, "include", "evring")))
                    if me is None:
                        problems.append(f"{rel} belongs to no row of the table")
                        continue
                files += 1
                for quoted, angled in include_re.findall(open(path, encoding="utf-8").read()):
                    inc = quoted or angled
                    if ".." in inc.split("/"):
                        problems.append(f"{rel}: #include \"{inc}\" climbs out of its folder")
                        continue
                    owner = header_owner(rows, inc, dirpath, source)
                    if owner is None or owner in (".", me):
                        continue
                    if owner.startswith("?public:"):
                        problems.append(f"{rel}: #include <{inc}>: no row of the table owns that header")
                        continue
                    used[me].add(owner)
                    if owner not in closure(uses, me):
                        problems.append(f"{rel} ({me}) includes {inc} ({owner}), which {me} does not use")
    for p in problems:
        fail("includes", p)
    header_only = {r["name"] for r in rows if not r["folder"].startswith("lib/")}
    for name in sorted(libraries):
        # A header-only row (format) reaches everyone through include/; it is
        # declared where it is used but not counted here.
        direct = used[name] - header_only
        if direct != set(uses[name]) - header_only:
            fail("includes", f"{name} declares the uses {sorted(uses[name])} but includes headers of "
                             f"{sorted(direct)}: declare what it includes, no more")
    if "includes" not in FAILED:
        ok(f"includes: the {files} files of lib/ and include/evring/ include only what their "
           "library uses, and each library uses what it includes")


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: layers_test.py SOURCE_DIR BUILD_DIR")
    source, build = sys.argv[1], sys.argv[2]
    rows = table_rows(source)
    check_table(source, rows)
    check_meson(source, rows)
    check_build(source, build, rows)
    check_includes(source, rows)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
