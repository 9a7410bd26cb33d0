# common helpers; source from scripts
B=${SLUICE_BIN:-$PWD/.build/debug}
S=$B/sluice
mkcorpus() { # DIR N [seed]
  local D=$1 N=${2:-40} seed=${3:-0}; mkdir -p $D
  python3 - "$D" "$N" "$seed" <<'PY'
import sys,random
d,n,seed=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])
words="alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu river mountain ocean forest desert city engine rocket planet star galaxy".split()
for i in range(1,n+1):
    r=random.Random(i*1000+seed)
    with open(f"{d}/doc{i}.md","w") as f:
        f.write(f"# Document {i}\n\n")
        for p in range(3):
            f.write(f"Paragraph {p} of doc{i}: "+" ".join(r.choice(words) for _ in range(40))+".\n\n")
PY
}
mkpipe() { # FILE [extra yaml lines]
  cat > $1 <<Y
source:
  path: corpus
  include: ["**/*.md"]
chunk:
  strategy: structured
  max_tokens: 64
  overlap_tokens: 8
embed:
  provider: hash
  dimensions: 64
state: state
$2
Y
}
exsum() { # pipeline [args] -> sorted export digest, count
  $S export "$@" 2>/dev/null | python3 -c '
import sys,json,hashlib
rows=[json.loads(l) for l in sys.stdin if l.strip()]
for r in rows: r["metadata"].pop("mtime",None)
s=sorted(json.dumps(r,sort_keys=True) for r in rows)
print(len(rows), hashlib.sha1("\n".join(s).encode()).hexdigest()[:12])'
}
