#!/usr/bin/env python3
# Every relative link in the documentation resolves: README.md and docs/**/*.md, links and
# images, to a file or directory that exists and, with #anchor, to a heading of that file
# (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens). Code is skipped.
# usage: check_links.py SOURCE_DIR
import os
import re
import sys

LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')


def strip_code(text):
    text = re.sub(r'^(```|~~~).*?^\1', '', text, flags=re.S | re.M)
    text = re.sub(r'^(?: {4}|\t).*$', '', text, flags=re.M)  # indented code
    return re.sub(r'`[^`\n]*`', '', text)


def anchors(path, cache={}):
    if path not in cache:
        heads = re.findall(r'^#{1,6}\s+(.*?)\s*#*\s*$', strip_fences(open(path).read()), re.M)
        slugs = set()
        for h in heads:
            h = re.sub(r'`', '', h).strip().lower()
            slug = re.sub(r'[^\w\- ]', '', h).replace(' ', '-')
            n, base = 1, slug
            while slug in slugs:
                slug = '%s-%d' % (base, n)
                n += 1
            slugs.add(slug)
        cache[path] = slugs
    return cache[path]


def strip_fences(text):
    return re.sub(r'^(```|~~~).*?^\1', '', text, flags=re.S | re.M)


def main():
    src = sys.argv[1]
    files = [os.path.join(src, 'README.md')]
    for root, _, names in os.walk(os.path.join(src, 'docs')):
        files += [os.path.join(root, n) for n in sorted(names) if n.endswith('.md')]
    bad = checked = 0
    for f in files:
        for target in LINK.findall(strip_code(open(f).read())):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue  # http:, https:, mailto: are not ours to check
            checked += 1
            path, _, frag = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, src)
            if not os.path.exists(dest):
                print('%s: %s: no such file' % (rel, target))
                bad += 1
            elif frag and (not dest.endswith('.md') or frag not in anchors(dest)):
                print('%s: %s: no heading #%s' % (rel, target, frag))
                bad += 1
    print('%d links in %d files, %d broken' % (checked, len(files), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
