#!/usr/bin/env python3
"""Writes the archives of corpora/fields/ (see corpora/README.md), byte for byte the same at
every run: one small, benign archive per class of header field that the reference extractor
once read differently from other parsers (issue 25). Each holds plain files only.

Read as real tools read (the reference follows them):
- size-nul-digits.tar: `a.txt` whose 12-byte size field is six NULs, a space, `0016`, a
  NUL (read as 0 by GNU tar, bsdtar, BusyBox and Python, as 0o16 by Go); then `b.txt`.
- volume-label.tar: a GNU volume label (type `V`, old GNU magic) whose mode and size
  fields are all NULs; then `a.txt`.
- pax-size-zeros.tar: `a.txt` with a PAX `size` of `000000000000000000000999` (24 digits)
  and the same 999 in its ustar size field; then `b.txt`.

- prefix-full.tar: `foo` with a ustar `prefix` of 155 `p`s and no NUL (the field full):
  every tool joins the whole field and the name.

Read differently by real tools (the reference refuses them):
- gnu-magic-prefix.tar: `foo` under the old GNU magic with 97 `a`s at byte 345, where POSIX
  puts the `prefix` and old GNU the access time (Go's `invalid-go17.tar`, written by Go
  1.7's writer, has this shape).
- pax-size-ustar-zero.tar: `a.txt` with a PAX `size` of 6 and a ustar size field of 0.
- gnu-realsize.tar: `a.txt`, a regular file under the old GNU magic, 6 bytes, with a GNU
  `realsize` (byte 483) of 64.
- pax-no-equals.tar: `a.txt` after a PAX header whose one record has no `=`.

Usage: make.py [DIR] (default: the script's directory).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tarhead import OLD_GNU, header, octal, pad, pax_body  # noqa: E402
from tarhead import pax as pax_named  # noqa: E402


def file(name, data, **kw):
    return header(name, b"0", len(data), **kw) + pad(data)


def pax(body):
    return pax_named(b"PaxHeaders/a.txt", body)


END = b"\0" * 1024

ARCHIVES = {
    "size-nul-digits.tar": header(b"a.txt", b"0", 0, fields={124: b"\0" * 6 + b" 0016\0"})
    + file(b"b.txt", b"hello\n")
    + END,
    "volume-label.tar": header(
        b"snapconf-volume", b"V", 0, magic=OLD_GNU, fields={100: b"\0" * 8, 124: b"\0" * 12}
    )
    + file(b"a.txt", b"hello\n", magic=OLD_GNU)
    + END,
    "pax-size-zeros.tar": pax(pax_body([(b"size", b"000000000000000000000999")]))
    + file(b"a.txt", b"z" * 999)
    + file(b"b.txt", b"hello\n")
    + END,
    "prefix-full.tar": file(b"foo", b"hello\n", fields={345: b"p" * 155}) + END,
    "gnu-magic-prefix.tar": file(b"foo", b"hello\n", magic=OLD_GNU, fields={345: b"a" * 97})
    + END,
    "pax-size-ustar-zero.tar": pax(pax_body([(b"size", b"6")]))
    + header(b"a.txt", b"0", 0)
    + pad(b"hello\n")
    + END,
    "gnu-realsize.tar": file(b"a.txt", b"hello\n", magic=OLD_GNU, fields={483: octal(64, 12)})
    + END,
    "pax-no-equals.tar": pax(b"11 abcdefg\n") + file(b"a.txt", b"hello\n") + END,
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, data in sorted(ARCHIVES.items()):
        assert len(data) % 512 == 0, name
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
