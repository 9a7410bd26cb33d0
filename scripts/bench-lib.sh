# Shared by the benchmark scripts that drive a built `sluice` over a generated corpus: sourced, never run.
#   source "$(dirname "$0")/bench-lib.sh"
# Each function takes the calling script's name (NAME) for its messages.

# bench_after_dashdash ARRAY ARGS...: sets the array named ARRAY to the arguments after `--` (left as it is
# when there is no `--`).
bench_after_dashdash() {
  local -n bench_into=$1
  shift
  for ((i = 1; i <= $#; i++)); do
    if [ "${!i}" = "--" ]; then bench_into=("${@:i+1}"); return; fi
  done
}

# bench_sluice NAME ROOT: prints the binary to run: $SLUICE, else ROOT's release build, else its debug build.
bench_sluice() {
  local sluice="${SLUICE:-}"
  if [ -z "$sluice" ]; then
    sluice="$2/.build/release/sluice"
    [ -x "$sluice" ] || sluice="$2/.build/debug/sluice"
  fi
  [ -x "$sluice" ] || { echo "$1: build sluice first (swift build -c release --product sluice)" >&2; exit 1; }
  # `sluice serve` runs the sluice-serve beside it: one from an older build reads the store as an older
  # release does (a keyword index of a newer layout is scanned instead of used), which measures nothing.
  local serve
  serve="$(dirname "$sluice")/sluice-serve"
  if [ ! -x "$serve" ] || [ "$serve" -ot "$sluice" ]; then
    echo "$1: $serve is missing or older than $sluice: build it too (swift build -c release --product sluice-serve)" >&2
    exit 1
  fi
  command -v wrk >/dev/null || { echo "$1: install wrk (apt-get install wrk)" >&2; exit 1; }
  echo "$sluice"
}

# The vocabulary of the generated documents: every query of the scripts finds many of them.
bench_words=(sluice gate river water canal lock maintenance quarterly report backup policy salary review design
  cache build release budget holiday office schedule server index search query vector record access team
  contract invoice customer product roadmap meeting minutes audit security network storage incident)

# bench_document N SENTENCES: writes document N, SENTENCES sentences of 12 words drawn with RANDOM (seed it
# for a deterministic corpus; call it with its output redirected, not in $(…), so that RANDOM moves on).
bench_document() {
  local text="# Document $1"$'\n\n' sentence
  for ((s = 0; s < $2; s++)); do
    sentence=""
    for ((w = 0; w < 12; w++)); do sentence+="${bench_words[RANDOM % ${#bench_words[@]}]} "; done
    text+="${sentence% }."$'\n'
  done
  printf '%s' "$text"
}
