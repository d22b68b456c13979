#!/usr/bin/env python3
"""Checks the links of the project's Markdown pages: every relative link
names a file or folder that exists, and every #anchor one of the target
page's headings (as GitHub derives anchors from headings). Prints each
broken link as FILE: LINK and exits 1 when there is any.

  doc_links.py ROOT   (checks ROOT/README.md and ROOT/docs/**/*.md)
"""
import glob
import os
import re
import sys

LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)")
HEADING = re.compile(r"^#+ (.*)$", re.M)
FENCE = re.compile(r"```.*?```", re.S)


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation but '-' and
    '_' dropped, spaces as '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def main():
    root = sys.argv[1]
    pages = [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    text = {os.path.normpath(p): FENCE.sub("", open(p).read()) for p in pages}
    anchors = {p: {anchor(h) for h in HEADING.findall(t)}
               for p, t in text.items()}
    broken = 0
    for page, t in text.items():
        for m in LINK.finditer(t):
            path, frag = m.group(1), m.group(2)
            if re.match(r"[a-z]+:", path):  # http:, mailto:
                continue
            target = (os.path.normpath(os.path.join(os.path.dirname(page), path))
                      if path else page)
            if not os.path.exists(target):
                missing = True
            else:
                missing = bool(frag) and target.endswith(".md") and \
                    frag not in anchors.get(target, set())
            if missing:
                broken += 1
                print(f"{os.path.relpath(page, root)}: {m.group(0)[2:-1]}")
    print(f"{len(pages)} pages, {broken} broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
