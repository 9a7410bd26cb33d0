# Sourced by the checks that run code on an emulated CPU without AVX-512 (qemu-user's Haswell model: AVX2
# and FMA, no AVX-512; an AVX-512 instruction is SIGILL there, as on an AVX2-only EPYC). Installs Debian's
# qemu-user if missing, proves the model runs AVX2 and refuses AVX-512 (with a probe built in DIR), and
# sets `emulate` to the command prefix.
#   source scripts/tools/emulated-avx2-cpu.sh; prove_emulated_avx2_cpu DIR
prove_emulated_avx2_cpu() {
  local dir=$1
  if ! command -v qemu-x86_64 >/dev/null; then
    local SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq qemu-user >/dev/null
  fi
  emulate=(qemu-x86_64 -cpu Haswell)
  cat > "$dir/probe.c" <<'C'
#include <stdio.h>
int main(int argc, char **argv) {
    if (argc > 1) __asm__ volatile("vpxord %%zmm1, %%zmm1, %%zmm1" ::: "xmm1");  /* AVX-512F */
    else __asm__ volatile("vpaddd %%ymm1, %%ymm1, %%ymm1" ::: "xmm1");           /* AVX2 */
    puts("ran");
    return 0;
}
C
  cc -O2 "$dir/probe.c" -o "$dir/probe"
  [ "$("${emulate[@]}" "$dir/probe" 2>/dev/null)" = ran ] || { echo "check: the emulated CPU does not run AVX2" >&2; exit 1; }
  if "${emulate[@]}" "$dir/probe" wide >/dev/null 2>&1; then echo "check: the emulated CPU runs AVX-512: no proof" >&2; exit 1; fi
  echo "check: emulated CPU: AVX2 runs, AVX-512 is an illegal instruction" >&2
}
