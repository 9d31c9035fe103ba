#!/bin/sh
# Regenerates the GNU-tar-made archives of corpora/sparse/ (see corpora/README.md) and then
# the hand-made ones (handmade.py). Run from anywhere; needs GNU tar (with --sparse-version)
# and python3, and a filesystem with holes for the scratch files ($TMPDIR: tmpfs or ext4),
# since GNU tar finds the holes with SEEK_HOLE.
#
# Output is deterministic except one thing GNU tar does not let us choose: the placeholder
# name `GNUSparseFile.<pid>/` of the PAX 0.1 and 1.0 members carries tar's process id.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/ws"
cd "$work/ws"

# put FILE OFFSET TEXT REPEAT: writes TEXT REPEAT times at OFFSET without truncating.
put() {
    python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[2])); f.write(sys.argv[3].encode()*int(sys.argv[4]))' "$@"
}

# vm.img: 2 MiB + 100 bytes; data at the start and in the middle, then a hole to its end
# (GNU tar's map ends with the entry `realsize,0`).
truncate -s 2097252 vm.img
put vm.img 0 "boot sector " 40
put vm.img 1048576 "superblock " 500
# db.bin: 1 MiB; six data regions 128 KiB apart, the last at its very end (more than the four
# entries an old GNU header holds: GNU tar writes one extension block).
truncate -s 1048576 db.bin
for i in 0 1 2 3 4; do
    put db.bin $((i * 131072 + 4096)) "page $i " 300
done
put db.bin 1048560 "end of database!" 1
# A plain file and a directory beside them.
mkdir docs
printf 'not sparse\n' > docs/readme.txt
touch -d @1700000000 vm.img db.bin docs/readme.txt docs

set -- --owner=0 --group=0 --numeric-owner --mtime=@1700000000 --sort=name -b 1
tar "$@" --format=gnu --sparse -cf "$here/gnu-oldgnu.tar" db.bin docs vm.img
for v in 0.0 0.1 1.0; do
    tar "$@" --format=pax --sparse --sparse-version="$v" \
        --pax-option=delete=atime,delete=ctime,delete=mtime,exthdr.name=%d/PaxHeaders/%f \
        -cf "$here/gnu-pax$v.tar" db.bin docs vm.img
done
[ ! -f "$here/handmade.py" ] || python3 "$here/handmade.py" "$here"
