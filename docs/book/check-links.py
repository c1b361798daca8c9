#!/usr/bin/env python3
"""Checks the built book's relative links: every href/src in site/book/**/*.html that names a
file (no scheme) must name one that exists, and a fragment on a page of the book must name an
id of that page. Exit 1 with each broken link listed. Usage: check-links.py BOOK_DIR"""
import html.parser, os, sys, urllib.parse


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k == "id" and v:
                self.ids.add(v)
            if k in ("href", "src") and v:
                self.links.append(v)


def parse(path):
    p = Links()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


root = os.path.abspath(sys.argv[1])
pages = {}
for d, _, files in os.walk(root):
    for f in files:
        if f.endswith(".html"):
            pages[os.path.join(d, f)] = parse(os.path.join(d, f))
broken = []
for page, p in sorted(pages.items()):
    for link in p.links:
        u = urllib.parse.urlsplit(link)
        if u.scheme or link.startswith("//") or (not u.path and not u.fragment):
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(u.path))) if u.path else page
        if not os.path.exists(target):
            broken.append(f"{os.path.relpath(page, root)}: {link} (no such file)")
        elif u.fragment and target in pages and u.fragment not in pages[target].ids:
            broken.append(f"{os.path.relpath(page, root)}: {link} (no such anchor)")
for b in broken:
    print(b)
sys.exit(1 if broken else 0)
