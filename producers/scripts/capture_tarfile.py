"""snapconf python-tarfile producer: capture a workspace the way sandbox backends do.

usage: capture_tarfile.py ROOT ARCHIVE EXCLUDE_FILE FORMAT

EXCLUDE_FILE holds one root-relative exclusion per line, hex-encoded bytes (so newlines and
non-UTF-8 names survive). FORMAT is "pax" (Python 3.11's default) or "gnu".

This is deliberately the common backend pattern, bugs included:
    tar.add(root, arcname=".", filter=drop_excluded)
TarFile.add calls gettarinfo() before the filter; gettarinfo records every multiply-linked
inode under the first name it sees, so a later name of that inode becomes an LNK member
(H1) even when the filter then drops the first name (H2: a dangling LNK).
"""

import os
import sys
import tarfile


def read_exclusions(path):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    excluded = []
    for line in lines:
        line = line.strip()
        if line:
            ex = bytes.fromhex(line.decode("ascii")).rstrip(b"/")
            if ex:
                excluded.append(ex)
    return excluded


def main():
    root, archive, exclude_file, fmt = sys.argv[1:5]
    excluded = read_exclusions(exclude_file)
    formats = {"pax": tarfile.PAX_FORMAT, "gnu": tarfile.GNU_FORMAT}

    def drop_excluded(info):
        # Member names are "." and "./a/b"; os.fsencode undoes the surrogateescape decoding
        # tarfile applied, giving back the exact bytes.
        name = os.fsencode(info.name)
        if name == b".":
            return info
        rel = name[2:] if name.startswith(b"./") else name
        for ex in excluded:
            if rel == ex or rel.startswith(ex + b"/"):
                return None
        return info

    with tarfile.open(archive, "w", format=formats[fmt]) as tar:
        tar.add(root, arcname=".", filter=drop_excluded)


if __name__ == "__main__":
    main()
