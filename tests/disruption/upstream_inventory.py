"""Which upstream disruption Its karpy's tests port (a maintenance script, not a test).

Lists every ``It`` and ``DescribeTable`` (and their ``Entry`` rows) in the upstream disruption suites
named by issue #10 (with StaticDrift's and the static provisioning / deprovisioning suites), and every ``# upstream: FILE ... "It text"`` comment under tests/, and matches
them by file and exact It text (case and punctuation folded; a quoted text with ``...`` matches when
its parts cover at least half of the It's text). Needs the core mirror::

    python3 tests/disruption/upstream_inventory.py [--missing] [--unmatched] [--mirror DIR] [--commit C]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys

FILES = ["pkg/controllers/disruption/consolidation_test.go", "pkg/controllers/disruption/suite_test.go",
         "pkg/controllers/disruption/emptiness_test.go", "pkg/controllers/disruption/drift_test.go",
         "pkg/controllers/disruption/queue_test.go", "pkg/controllers/disruption/singlenodeconsolidation_test.go",
         "pkg/controllers/nodeclaim/disruption/consolidation_test.go",
         "pkg/controllers/nodeclaim/disruption/drift_test.go",
         "pkg/controllers/nodeclaim/disruption/suite_test.go", "pkg/apis/v1/nodepool_budgets_test.go",
         "pkg/controllers/disruption/staticdrift_test.go", "pkg/controllers/static/provisioning/suite_test.go",
         "pkg/controllers/static/deprovisioning/suite_test.go"]
NODE = re.compile(r'\b(Describe|Context|DescribeTable|It|Entry)\("((?:[^"\\]|\\.)*)"')
OPEN = re.compile(r'\b(DescribeTable|Entry)\($')


def upstream(mirror: str, commit: str) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for f in FILES:
        src = subprocess.run(["git", "-C", mirror, "show", f"{commit}:{f}"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        stack: list[tuple[int, str]] = []
        depth = 0
        for i, line in enumerate(src, 1):
            m = NODE.search(line)
            found = m.groups() if m else None
            if found is None and OPEN.search(line.strip()) and i < len(src):
                nxt = re.match(r'"((?:[^"\\]|\\.)*)"', src[i].strip())
                if nxt:
                    found = (OPEN.search(line.strip()).group(1), nxt.group(1))  # type: ignore[union-attr]
            if found:
                kind, text = found
                while stack and stack[-1][0] >= depth:
                    stack.pop()
                if kind == "DescribeTable" and not text and stack:
                    text = stack[-1][1]
                if kind in ("It", "Entry", "DescribeTable"):
                    out.append({"file": f, "line": i, "kind": "Table" if kind == "DescribeTable" else kind,
                                "text": text, "path": " / ".join(s[1] for s in stack)})
                if kind != "It" and kind != "Entry":
                    stack.append((depth, text))
            depth += line.count("{") - line.count("}")
    return out


def norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()


def short(f: str) -> str:
    return f.replace("pkg/controllers/", "").replace("pkg/apis/v1/", "")


def file_ok(block: str, f: str) -> bool:
    b, f = block.lower().replace(" ", ""), short(f)
    base = os.path.basename(f)
    for prefix in ("nodeclaim/disruption/", "static/provisioning/", "static/deprovisioning/"):
        if f.startswith(prefix):
            return prefix + base in b
    return base in b and not any(p + base in b for p in ("nodeclaim/disruption/", "static/provisioning/",
                                                          "static/deprovisioning/"))


def text_ok(q: str, t: str) -> bool:
    nq, nt = norm(q), norm(t)
    if not nq:
        return False
    if nq == nt:
        return True
    parts = [norm(p) for p in re.split(r"\.\.\.|…", q) if norm(p)]
    return len(parts) > 1 and all(p in nt for p in parts) and sum(map(len, parts)) >= 0.5 * len(nt)


def refs(root: str) -> list[tuple[str, int, str, str]]:
    out = []
    for path in sorted(glob.glob(os.path.join(root, "tests/**/*.py"), recursive=True)):
        lines = open(path, encoding="utf-8").read().splitlines()
        for i, line in enumerate(lines):
            s = line.strip()
            if not s.startswith("# upstream"):
                continue
            block, j = s, i + 1
            while j < len(lines) and lines[j].strip().startswith("#") and "upstream:" not in lines[j]:
                block += " " + lines[j].strip().lstrip("#")
                j += 1
            for q in re.findall(r'"([^"]{6,})"', block):
                out.append((path, i + 1, block, q))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror/kubernetes-sigs+karpenter/repo")
    ap.add_argument("--commit", default="2266468")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--missing", action="store_true", help="list the Its and tables not ported")
    ap.add_argument("--unmatched", action="store_true", help="list upstream-named comments that match no It")
    a = ap.parse_args()
    ups = upstream(a.mirror, a.commit)
    matched: dict[int, list[str]] = {}
    unmatched = []
    for path, ln, block, q in refs(a.root):
        hits = [k for k, u in enumerate(ups) if file_ok(block, str(u["file"])) and text_ok(q, str(u["text"]))]
        for k in hits:
            matched.setdefault(k, []).append(f"{path}:{ln}")
        if not hits and any(os.path.basename(short(str(u["file"]))) in block for u in ups):
            unmatched.append(f"{path}:{ln}: {q}")
    units = [k for k, u in enumerate(ups) if u["kind"] in ("It", "Table")]
    entries = [k for k, u in enumerate(ups) if u["kind"] == "Entry"]
    print(f"Its + DescribeTables ported: {sum(k in matched for k in units)} / {len(units)} "
          f"({sum(ups[k]['kind'] == 'It' for k in units)} Its, {sum(ups[k]['kind'] == 'Table' for k in units)} "
          f"tables with {len(entries)} entries)")
    for f in FILES:
        ks = [k for k in units if ups[k]["file"] == f]
        print(f"  {short(f):45s} {sum(k in matched for k in ks):3d} / {len(ks)}")
    if a.missing:
        print("\nnot ported:")
        for k in units:
            if k not in matched:
                u = ups[k]
                print(f"  {short(str(u['file']))}:{u['line']} {u['kind']} [{u['path']}] {u['text']}")
    if a.unmatched:
        print("\ncomments naming no upstream It:")
        print("\n".join(f"  {x}" for x in unmatched))
    return 0


if __name__ == "__main__":
    sys.exit(main())
