#!/bin/sh
# qmllint over every QML file with the build's import path; any message fails the test.
# usage: qmllint.sh QMLLINT IMPORT_DIR FILE...
lint="$1"; imports="$2"; shift 2
status=0
for f in "$@"; do
  out=$("$lint" -I "$imports" "$f" 2>&1) || status=1
  if [ -n "$out" ]; then echo "$out"; status=1; fi
done
[ $status = 0 ] && echo "qmllint: $# files clean"
exit $status
