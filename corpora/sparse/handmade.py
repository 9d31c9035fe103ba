#!/usr/bin/env python3
"""Writes the hand-made archives of corpora/sparse/ (see corpora/README.md), byte for byte the
same at every run: forms GNU tar does not write itself, read by the tests against GNU tar.

- handmade-oldgnu.tar: an old GNU sparse member (type S, magic "ustar  \\0") whose realsize
  is in base-256, with six map entries (four in the header, two in an extension block), two
  regions back to back at unaligned offsets, a zero-length region in the middle and a last
  region of 10 bytes up to the file's end; then a plain file, to show the data ended where
  the map said.
- handmade-pax00.tar: a PAX 0.0 sparse member (GNU.sparse.size, numblocks and
  offset/numbytes pairs; the real name in the ustar header) with a region at offset 0,
  unaligned regions back to back, a zero-length one in the middle, a last region of 513
  bytes and then a hole to the end (the entry `realsize,0`); then a plain file.

Every region but the last with data fills whole 512-byte blocks, and the map ends at the
file's size: GNU tar reads each region from a block boundary and sizes the file by the last
entry, so other forms are read differently by other tools (the reference refuses them).

Usage: handmade.py DIR (make.sh passes its own directory).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tarhead import OLD_GNU, header, octal, pad, pax_body  # noqa: E402
from tarhead import pax as pax_named  # noqa: E402


def pax(records):
    return pax_named(b"PaxHeaders/x", pax_body(records))


def regions_data(regions):
    """Region contents: a recognisable byte pattern per region."""
    out = b""
    for i, (_, length) in enumerate(regions):
        out += bytes((0x41 + i + k % 23) for k in range(length))
    return out


def plain(name, data):
    return header(name, b"0", len(data)) + pad(data)


def old_gnu():
    real = 300000
    regions = [(100, 512), (612, 512), (70000, 0), (200000, 1024), (250000, 512), (299990, 10)]
    data = regions_data(regions)
    entry = lambda off, n: octal(off, 12) + octal(n, 12)
    extra = {
        386: b"".join(entry(o, n) for o, n in regions[:4]),
        482: b"\x01",
        # realsize, base-256: 0x80 then the value big-endian in 11 bytes.
        483: b"\x80" + real.to_bytes(11, "big"),
    }
    out = header(b"handmade/odd.bin", b"S", len(data), OLD_GNU, extra)
    ext = bytearray(512)
    ext[0:48] = b"".join(entry(o, n) for o, n in regions[4:])
    out += bytes(ext) + pad(data)
    out += plain(b"handmade/after.txt", b"after the sparse member\n")
    return end(out)


def pax00():
    real = 600000
    regions = [(0, 512), (12289, 512), (12801, 1024), (13825, 0), (400000, 513), (real, 0)]
    records = [(b"GNU.sparse.size", str(real).encode()),
               (b"GNU.sparse.numblocks", str(len(regions)).encode())]
    for o, n in regions:
        records += [(b"GNU.sparse.offset", str(o).encode()),
                    (b"GNU.sparse.numbytes", str(n).encode())]
    data = regions_data(regions)
    out = pax(records) + header(b"handmade/p00.bin", b"0", len(data)) + pad(data)
    out += plain(b"handmade/after.txt", b"after the sparse member\n")
    return end(out)


def end(archive):
    """Two zero blocks, then zeros to a whole 10 KiB record as GNU tar writes (without them
    GNU tar warns of a lone zero block)."""
    archive += b"\0" * 1024
    return archive + b"\0" * (-len(archive) % 10240)


def main():
    here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, data in (("handmade-oldgnu.tar", old_gnu()), ("handmade-pax00.tar", pax00())):
        with open(os.path.join(here, name), "wb") as f:
            f.write(data)


main()
