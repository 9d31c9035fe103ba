"""The raw ustar header and PAX record writer the hand-made corpus scripts share
(corpora/fields/make.py, corpora/sparse/handmade.py): byte for byte, never sanitised.

Layout: POSIX.1-2017 `pax`, "ustar Interchange Format" (name 0, mode 100, uid 108, gid 116,
size 124, mtime 136, chksum 148, typeflag 156, magic 257); PAX records `"%d %s=%s\\n"`,
the length counting itself ("pax Extended Header"); the old GNU magic `ustar  \\0`.
"""

MTIME = 1700000000
POSIX = b"ustar\x0000"
OLD_GNU = b"ustar  \x00"


def octal(value, width):
    """`value` in octal, zero-padded to `width - 1` digits, then a NUL."""
    return ("%0*o" % (width - 1, value)).encode() + b"\0"


def header(name, flag, size, magic=POSIX, fields=None):
    """A 512-byte header, mode 0644, uid/gid 0, mtime MTIME; `fields` maps an offset to
    raw bytes written over the defaults before the checksum is computed."""
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = octal(0o644, 8)
    h[108:116] = octal(0, 8)
    h[116:124] = octal(0, 8)
    h[124:136] = octal(size, 12)
    h[136:148] = octal(MTIME, 12)
    h[156:157] = flag
    h[257:265] = magic
    for at, data in (fields or {}).items():
        h[at:at + len(data)] = data
    h[148:156] = b" " * 8
    h[148:156] = ("%06o\0 " % sum(h)).encode()
    return bytes(h)


def pad(data):
    """`data` padded with NULs to a whole number of 512-byte blocks."""
    return data + b"\0" * (-len(data) % 512)


def pax_body(records):
    """PAX records `(key, value)` (bytes) as one extended header's body."""
    body = b""
    for key, value in records:
        rest = b" " + key + b"=" + value + b"\n"
        n = len(rest) + 1
        while len(str(n)) + len(rest) != n:
            n = len(str(n)) + len(rest)
        body += str(n).encode() + rest
    return body


def pax(name, body):
    """A PAX extended header (type `x`) named `name` holding `body`, padded."""
    return header(name, b"x", len(body)) + pad(body)
