#!/usr/bin/env bash
# Checks that third-party binaries run on x86-64 CPUs without AVX-512: every function that uses a zmm
# register must be one the library chooses at run time (its name says avx512/avx512f/vnni, or it is the
# chooser or CPU probe itself). A binary compiled for an AVX-512 build host's own CPU has hundreds of zmm
# instructions spread over ordinary functions, and dies with SIGILL on an AVX2-only CPU.
#
#   scripts/tools/check-avx512.sh FILE_OR_FOLDER...
#
# Prints, per ELF file with zmm instructions, the functions that use them; exits 1 if any function is not
# runtime-dispatched. A stripped file (no .symtab) cannot be judged this way: it is listed with its count,
# for scripts/tools/check-avx2-emulated.sh, which runs the servers on an emulated AVX2-only CPU.
# Needs objdump and readelf (binutils).
set -euo pipefail
dispatched='avx512|avx_512|vnni|zmm_regs|_choose|_available|cpu_features|_resolver|ifunc'
status=0
files=()
for target in "$@"; do
  if [ -d "$target" ]; then
    while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$target" -type f -print0)
  else
    files+=("$target")
  fi
done
checked=0
for f in "${files[@]}"; do
  head -c 4 "$f" 2>/dev/null | grep -q $'\x7fELF' || continue
  checked=$((checked + 1))
  report=$(objdump -d --no-show-raw-insn "$f" 2>/dev/null |
    awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 } /%zmm/ { count[fn]++ } END { for (k in count) print count[k], k }' | sort -rn)
  [ -n "$report" ] || continue
  if [ "$(readelf -S "$f" 2>/dev/null | grep -c "\.symtab")" = 0 ]; then
    echo "check-avx512: $f is stripped: $(echo "$report" | awk '{n += $1} END {print n}') zmm instructions that cannot be attributed to functions (see scripts/tools/check-avx2-emulated.sh)"
    continue
  fi
  bad=$(echo "$report" | grep -viE "$dispatched" || true)
  if [ -n "$bad" ]; then
    echo "check-avx512: $f uses AVX-512 outside runtime-dispatched functions:" >&2
    echo "$bad" | head -10 | sed 's/^/  /' >&2
    status=1
  else
    echo "check-avx512: $f: AVX-512 only in runtime-dispatched functions: $(echo "$report" | awk '{printf "%s%s (%s)", sep, $2, $1; sep=", "}')"
  fi
done
echo "check-avx512: $checked ELF files checked"
exit $status
