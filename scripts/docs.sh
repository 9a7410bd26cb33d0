#!/usr/bin/env bash
# The DocC reference of the `Sluice` library: Sources/Sluice/Docs.docc over the symbols `import Sluice`
# makes visible, written to .build/docs/Sluice.doccarchive (`--output DIR` for another folder).
#
# Fails on any DocC warning (a ``Symbol`` link that does not resolve, a topic that names nothing) and on a
# public type without a doc comment; prints how many public members have none (PUBLIC-API.md: public
# declarations carry one). CI runs it after the test suite (.ci/run).
#
# Driven by hand rather than through swift-docc-plugin, so that the package gains no dependency (the
# README's first command resolves and clones every one): the debug build's own compile flags of `Sluice`
# (SwiftPM's .build/debug.yaml) are given to swift-symbolgraph-extract, with the modules `Sluice`
# re-exports allowed, then `docc convert` reads the catalog and that one symbol graph.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/docs
if [ "${1:-}" = "--output" ]; then out=$2; fi
reexported=SluiceCore,SluiceExtract,SluiceChunk,SluiceEmbed,SluiceSinks,SluicePipeline

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A no-op after scripts/test.sh's build (CI); else builds what `Sluice` needs.
swift build --target Sluice >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
[ -f .build/debug.yaml ] || { echo "docs: .build/debug.yaml not found (did swift build run?)" >&2; exit 1; }

# The search paths, C module maps and target of the command that compiled `Sluice`.
python3 - "$work/flags" <<'PY'
import json, sys
args = None
for line in open(".build/debug.yaml"):
    line = line.strip()
    if line.startswith("args: [") and '"-module-name","Sluice",' in line:
        args = json.loads(line[len("args: "):])
        break
if args is None:
    sys.exit("docs: no compile command of the module Sluice in .build/debug.yaml")
flags, i = [], 0
while i < len(args):
    arg = args[i]
    if arg in ("-I", "-F", "-Xcc", "-target", "-module-cache-path"):
        flags += [arg, args[i + 1]]
        i += 2
        continue
    if arg.startswith(("-I", "-F")):
        flags.append(arg)
    i += 1
open(sys.argv[1], "w").write("\n".join(flags) + "\n")
PY
mapfile -t flags <"$work/flags"
mkdir -p "$work/graphs"
swift-symbolgraph-extract -module-name Sluice "${flags[@]}" -minimum-access-level public \
  -experimental-allowed-reexported-modules="$reexported" -output-dir "$work/graphs"

# Public types (and free functions) must carry a doc comment; members are counted.
python3 - "$work/graphs/Sluice.symbols.json" <<'PY'
import json, sys
graph = json.load(open(sys.argv[1]))
types = ("swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias", "swift.func", "swift.var")
missing, members = [], 0
for symbol in graph["symbols"]:
    if "docComment" in symbol:
        continue
    if symbol["kind"]["identifier"] in types:
        missing.append(".".join(symbol["pathComponents"]))
    else:
        members += 1
print(f"docs: {len(graph['symbols'])} public symbols; {members} members without a doc comment")
if missing:
    print("docs: public types without a doc comment: " + ", ".join(sorted(missing)), file=sys.stderr)
    sys.exit(1)
PY

rm -rf "$out/Sluice.doccarchive"
mkdir -p "$out"
log="$work/docc.log"
if ! docc convert Sources/Sluice/Docs.docc --additional-symbol-graph-dir "$work/graphs" \
  --fallback-display-name Sluice --fallback-bundle-identifier org.sluice.Sluice \
  --output-path "$out/Sluice.doccarchive" --warnings-as-errors >"$log" 2>&1; then
  grep -E "warning|error" -A3 "$log" >&2 || cat "$log" >&2
  echo "docs: DocC found the above (fix the doc comments or Sources/Sluice/Docs.docc)" >&2
  exit 1
fi
echo "docs: $out/Sluice.doccarchive"
