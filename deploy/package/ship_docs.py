#!/usr/bin/env python3
"""The docs the Debian package ships, with links that resolve where they are installed.

Copies README.md, docs/*.md and deploy/README.md from the source tree SRC into OUT with
the same relative layout (README.md, docs/, deploy/), so their links to each other keep
working under /usr/share/doc/opmap. A relative link to anything not shipped (a source
file or folder README) becomes its path as code text, `[x](../collector/README.md)` ->
`x` (`collector/README.md` in the opmap source tree), since a link there would be dead.

  ship_docs.py SRC OUT
"""
import glob
import os
import re
import sys

LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def shipped(src):
    files = ["README.md", "deploy/README.md"]
    files += sorted(os.path.relpath(p, src) for p in glob.glob(os.path.join(src, "docs", "*.md")))
    return files


def rewrite(text, rel, ship):
    here = os.path.dirname(rel)

    def fix(m):
        label, target, anchor = m.group(1), m.group(2), m.group(3) or ""
        if re.match(r"[a-z]+:", target):
            return m.group(0)  # http:, mailto:
        resolved = os.path.normpath(os.path.join(here, target))
        if resolved in ship:
            return m.group(0)
        if label.strip("`") == resolved:
            return "`%s` (in the opmap source tree)" % resolved
        return "%s (`%s` in the opmap source tree)" % (label, resolved)

    return LINK.sub(fix, text)


def main():
    src, out = sys.argv[1], sys.argv[2]
    ship = set(shipped(src))
    for rel in sorted(ship):
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = f.read()
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(rewrite(text, rel, ship))


if __name__ == "__main__":
    main()
