#!/usr/bin/env bash
# Builds the bare-metal probe images, runs each under QEMU, and compares every report line with
# the same program built for the host. Prints one line per image, the images' section sizes,
# and exits non-zero on any build failure, QEMU failure or timeout, or mismatch.
#
# Needs: qemu-system-arm and binutils-arm-none-eabi (Debian packages), and the rustup targets
# listed in IMAGES (missing ones are added with `rustup target add`).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
start=$(date +%s)

# target, QEMU machine, scalar (f32, or q16 for the Q16.16 build)
IMAGES=(
  "thumbv7em-none-eabihf mps2-an386 f32"
  "thumbv7m-none-eabi lm3s6965evb f32"
  "thumbv6m-none-eabi microbit f32"
  "thumbv6m-none-eabi microbit q16"
)
QEMU_TIMEOUT=${QEMU_TIMEOUT:-60}

missing=()
command -v qemu-system-arm >/dev/null || missing+=(qemu-system-arm)
for tool in arm-none-eabi-size arm-none-eabi-nm; do
  command -v "$tool" >/dev/null || missing+=(binutils-arm-none-eabi)
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: missing tools; install them with:" >&2
  echo "  apt-get install -y $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')" >&2
  exit 2
fi

installed=$(rustup target list --installed)
for t in $(printf '%s\n' "${IMAGES[@]}" | cut -d' ' -f1 | sort -u); do
  if ! grep -qx "$t" <<<"$installed"; then
    echo "run.sh: adding rustup target $t"
    rustup target add "$t"
  fi
done

# Build paths below assume the crate's own target directory.
export CARGO_TARGET_DIR="$here/target"
host=$(rustc -vV | sed -n 's/^host: //p')
work="$here/target/probe"
mkdir -p "$work"

features() { [ "$1" = q16 ] && echo "--features=q16" || true; }

# The reports computed on the host, one per scalar.
for scalar in $(printf '%s\n' "${IMAGES[@]}" | cut -d' ' -f3 | sort -u); do
  cargo build -q --release --target "$host" $(features "$scalar")
  "target/$host/release/sinew-firmware" >"$work/host-$scalar.txt"
done

checksum_of() { sed -n 's/^checksum \(0x[0-9a-f]*\)$/\1/p' "$1"; }

failed=0
summary=()
sizes=()
for image in "${IMAGES[@]}"; do
  read -r target machine scalar <<<"$image"
  name="$target-$scalar"
  cargo build -q --release --target "$target" $(features "$scalar")
  elf="$work/$name.elf"
  cp "target/$target/release/sinew-firmware" "$elf"

  status=0
  timeout "$QEMU_TIMEOUT" qemu-system-arm -machine "$machine" -nographic -monitor none \
    -semihosting-config enable=on,target=native -kernel "$elf" \
    </dev/null >"$work/$name.out" 2>"$work/$name.err" || status=$?

  got=$(checksum_of "$work/$name.out")
  want=$(checksum_of "$work/host-$scalar.txt")
  rm -f "$work/$name.diff"
  stack=$(sed -n 's/^stack peak \(.*\)$/\1/p' "$work/$name.out")
  verdict=OK
  if [ "$status" -ne 0 ]; then
    verdict="FAILED (qemu exit $status)"
    if [ "$status" -eq 124 ]; then verdict="FAILED (timeout after ${QEMU_TIMEOUT} s)"; fi
  elif [ -z "$got" ] || [ -z "$want" ]; then
    verdict="FAILED (no checksum)"
  elif ! diff <(grep -v '^stack peak ' "$work/$name.out") "$work/host-$scalar.txt" >"$work/$name.diff"; then
    verdict="MISMATCH (see $work/$name.diff)"
  fi
  # The Q16.16 build must not do any floating-point arithmetic: no soft-float routine in it.
  if [ "$scalar" = q16 ] && arm-none-eabi-nm "$elf" | grep -Eq '__aeabi_(f|d)|__(add|sub|mul|div)[sd]f3'; then
    verdict="FAILED (soft-float routines in the q16 image)"
  fi
  [ "$verdict" = OK ] || failed=1
  summary+=("$target $machine $scalar: checksum ${got:-none} host ${want:-none} $verdict${stack:+ (stack peak $stack)}")
  if [ "$verdict" != OK ]; then
    # QEMU's stderr (faults, panics) and the first differing lines.
    sed "s/^/  $name stderr: /" "$work/$name.err" >&2 || true
    if [ -s "$work/$name.diff" ]; then head -n 8 "$work/$name.diff" | sed "s/^/  $name diff: /" >&2; fi
  fi

  sizes+=("$(arm-none-eabi-size -A "$elf" | awk -v n="$name" '
    $1 == ".text" || $1 == ".vector_table" { text += $2 }
    $1 == ".rodata" { rodata = $2 }
    $1 == ".data" { data = $2 }
    $1 == ".bss" || $1 == ".uninit" { bss += $2 }
    END { printf "%-28s %8d %8d %8d %8d %9d %9d\n", n, text, rodata, data, bss, text + rodata + data, data + bss }')")
done

printf '%s\n' "${summary[@]}"
echo
printf '%-28s %8s %8s %8s %8s %9s %9s\n' image .text .rodata .data .bss flash ram
printf '%s\n' "${sizes[@]}"
echo "(.text includes the vector table; flash = .text + .rodata + .data, ram = .data + .bss, stack not included)"
echo
echo "run.sh: $(( $(date +%s) - start )) s"
exit "$failed"
