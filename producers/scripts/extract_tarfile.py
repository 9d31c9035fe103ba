"""snapconf python extractors: hydrate a workspace with tarfile's extraction filters.

usage: extract_tarfile.py ARCHIVE ROOT FILTER

FILTER is a PEP 706 filter name: "data" or "tar" (Python docs, tarfile "Extraction
filters"). This is what a backend's resume path runs:
    tarfile.open(archive).extractall(root, filter=FILTER)
A refused member raises tarfile.FilterError (exit 1 with a traceback), after the members
before it have been written.
"""

import sys
import tarfile


def main():
    archive, root, filter_name = sys.argv[1:4]
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter=filter_name)


if __name__ == "__main__":
    main()
