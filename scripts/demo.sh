#!/usr/bin/env bash
# The main job of the quick start: builds `docstore`, creates a demo store with it, and shows the
# store with `docstore inspect` (overview, schema, one object, a tree, an HTML report), `docstore query`, `docstore verify`,
# and a dump loaded into a copy. Installs liblz4-dev first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --product docstore
bin="$(swift build --show-bin-path)/docstore"
store="${1:-/tmp/docstore-demo/Notes.docstore}"
mkdir -p "$(dirname "$store")"
echo "\$ docstore demo $store"
"$bin" demo "$store"
echo
echo "\$ docstore inspect $store"
"$bin" inspect "$store"
echo
echo "\$ docstore inspect $store --schema"
"$bin" inspect "$store" --schema
echo
echo "\$ docstore query $store Note \"folder.name == 'Work' AND title BEGINSWITH 'Note 99'\" --sort title:desc"
"$bin" query "$store" Note "folder.name == 'Work' AND title BEGINSWITH 'Note 99'" --sort title:desc
echo
echo "\$ docstore inspect $store --object Note/43"
"$bin" inspect "$store" --object Note/43
echo
echo "\$ docstore inspect $store --page 2"
"$bin" inspect "$store" --page 2 | head -12
echo
echo "\$ docstore inspect $store --tree records.2"
"$bin" inspect "$store" --tree records.2
echo
echo "\$ docstore verify $store"
"$bin" verify "$store"
echo
dir="$(dirname "$store")"
echo "\$ docstore inspect $store --html $dir/report.html"
"$bin" inspect "$store" --html "$dir/report.html"
echo
rm -rf "$dir/notes.jsonl" "$dir/Copy.docstore" "$dir/Copy.docstore-wal" "$dir/Copy.docstore-blobs"
echo "\$ docstore dump $store --output $dir/notes.jsonl"
"$bin" dump "$store" --output "$dir/notes.jsonl"
echo "\$ docstore load $dir/Copy.docstore < $dir/notes.jsonl"
"$bin" load "$dir/Copy.docstore" < "$dir/notes.jsonl"
echo "\$ docstore verify $dir/Copy.docstore"
"$bin" verify "$dir/Copy.docstore"
