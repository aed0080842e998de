#!/usr/bin/env bash
# Download the public robot recordings of `make demo-kuka` / `make demo-tx40` and of the tests on
# real data (KUKA LWR4+ of FloBaRoID, LGPL-3.0; Staubli TX40 of the FIGAROH examples,
# Apache-2.0) into data/ (ignored by git), pinned to upstream commits and checked by SHA-256
# (scripts/data_manifest.txt). Files already there with the right checksum are kept.
#
#   scripts/fetch_data.sh [--dest DIR] [--from DIR_OR_URL]
#
#   --dest DIR   where the data sets go (default: data/ of the repository)
#   --from BASE  take each file from BASE/<set>/<file> (a local folder, file:// or http(s)://
#                base, e.g. a copy of ../shared/data) instead of its upstream URL
#
# Progress on stdout; errors are one line on stderr. Exit codes: 0 ok, 1 a download failed,
# 2 a bad option or a file with the wrong checksum (named; nothing of it is left in DIR).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MANIFEST=$ROOT/scripts/data_manifest.txt
DEST=$ROOT/data
FROM=
PROG=fetch_data.sh

die() { echo "$PROG: error: $2" >&2; exit "$1"; }

while [ $# -gt 0 ]; do
    case $1 in
        --dest) [ $# -ge 2 ] || die 2 "--dest needs a folder"; DEST=$2; shift 2 ;;
        --dest=*) DEST=${1#--dest=}; shift ;;
        --from) [ $# -ge 2 ] || die 2 "--from needs a folder or URL"; FROM=$2; shift 2 ;;
        --from=*) FROM=${1#--from=}; shift ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die 2 "unknown argument '$1' (see --help)" ;;
    esac
done

if command -v sha256sum >/dev/null 2>&1; then
    sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
    sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
    die 1 "neither sha256sum nor shasum found"
fi

# copy or download $1 into the file $2
get() {
    case $1 in
        file://*) cp -- "${1#file://}" "$2" ;;
        http://*|https://*|ftp://*)
            if command -v curl >/dev/null 2>&1; then
                curl -fsSL --retry 2 -o "$2" "$1"
            elif command -v wget >/dev/null 2>&1; then
                wget -q -O "$2" "$1"
            else
                die 1 "neither curl nor wget found (needed to download $1)"
            fi ;;
        *) cp -- "$1" "$2" ;;
    esac
}

TMP=
trap '[ -n "$TMP" ] && rm -f -- "$TMP"' EXIT
fetched=0 kept=0
while read -r sum url dest; do
    case $sum in ''|'#'*) continue ;; esac
    target=$DEST/$dest
    if [ -f "$target" ] && [ "$(sha256 "$target")" = "$sum" ]; then
        kept=$((kept + 1))
        continue
    fi
    source=$url
    [ -z "$FROM" ] || source=${FROM%/}/$dest
    mkdir -p -- "$(dirname -- "$target")"
    TMP=$(mktemp "$(dirname -- "$target")/.$(basename -- "$target").XXXXXX")
    echo "$PROG: $dest <- $source"
    if ! why=$(get "$source" "$TMP" </dev/null 2>&1); then
        rm -f -- "$TMP"
        die 1 "$dest: cannot get $source${why:+ (${why%%$'\n'*})}"
    fi
    got=$(sha256 "$TMP")
    if [ "$got" != "$sum" ]; then
        rm -f -- "$TMP"
        die 2 "$dest: SHA-256 mismatch (expected $sum, got $got from $source)"
    fi
    chmod 644 -- "$TMP"
    mv -f -- "$TMP" "$target"
    TMP=
    fetched=$((fetched + 1))
done < "$MANIFEST"
echo "$PROG: $fetched fetched, $kept already there, in $DEST"
