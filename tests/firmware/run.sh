#!/usr/bin/env bash
# Builds the bare-metal probe images, runs each under QEMU, and compares every report line with
# the same program built for the host. Prints one line per image, the images' footprint (section
# sizes, static RAM, peak stack), the animation code by module on thumbv7em, the RAM of one
# character, and exits non-zero on any build failure, QEMU failure or timeout, mismatch,
# floating-point routine in the Q16.16 image, dual-quaternion skinning code in any image (the
# probe skins with LBS), or allocator in any image.
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
# Budgets the report compares against (not enforced: see the lines marked "over").
ANIMATION_CODE_BUDGET=24576
CHARACTER_RAM_BUDGET=4096
SOFT_FLOAT='__aeabi_([fd]|[a-z0-9]*2[fd]$)|__(add|sub|mul|div|neg)[sd]f[23]|__(float|fix)[a-z]*[sd]f|__(eq|ne|lt|le|gt|ge|un|cmp)[sd]f2|__extendsfdf2|__truncdfsf2'

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

# Text symbols (`nm -S -t d`, demangled) grouped by what they do. A stage's firmware wrapper
# (kept out of line) holds the core code the compiler inlined into it.
classify() {
  arm-none-eabi-nm -C -S --size-sort -t d "$1" | awk '
    $3 ~ /^[tTwW]$/ {
      name = substr($0, index($0, $4)); size = $2 + 0; group = "runtime"
      if (name ~ /^sinew::graph::Graph<.*>::validate|^sinew_firmware::GraphStorage/) group = "setup"
      else if (name ~ /^sinew::graph::/) group = "graph"
      else if (name ~ /^sinew_firmware::update|^sinew::controller::|^sinew::job::blending|^sinew::job::additive::|^sinew::job::mask::/) group = "controller"
      else if (name ~ /^sinew::clip::|^sinew::job::sampling|^sinew::format::unpack_rotation/) group = "sampling"
      else if (name ~ /^sinew::player::|^sinew::real::q32::/) group = "player"
      else if (name ~ /^sinew::root_motion::|^sinew::math::ops::atan2/) group = "root_motion"
      else if (name ~ /^sinew_firmware::retarget|^sinew::job::retarget::|^<sinew::job::retarget::/) group = "retarget"
      else if (name ~ /^sinew_firmware::ik|^sinew::job::ik::|^<sinew::job::ik::/) group = "ik"
      else if (name ~ /^sinew_firmware::[Ss]pring|^sinew::job::spring::|^<sinew::job::spring::/) group = "spring"
      else if (name ~ /^sinew_firmware::local_to_model|^sinew::job::local_to_model/) group = "local_to_model"
      else if (name ~ /^sinew_firmware::palette_in_place|^sinew::job::skin_matrix/) group = "skin_matrix"
      else if (name ~ /^sinew_firmware::skin$|^sinew::job::skinning/) group = "skinning"
      else if (name ~ /^sinew::math::|^sinew::real::|^<sinew::real::/) group = "math"
      else if (name ~ /^sinew::raster::|^sinew_firmware::draw/) group = "raster"
      else if (name ~ /^sinew::asset::|^sinew::format::|^sinew::skeleton::|^sinew_firmware::Scene|^sinew_firmware::firmware::build_|^sinew_firmware::start|^sinew_firmware::view_proj/) group = "setup"
      sum[group] += size
    }
    END {
      n = split("graph controller sampling player root_motion retarget ik spring local_to_model skin_matrix skinning math raster setup runtime", g, " ")
      for (i = 1; i <= n; i++) printf "%s %d\n", g[i], sum[g[i]]
    }'
}

failed=0
summary=()
sizes=()
memory=""
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
  stack=$(sed -n 's/^stack peak \([0-9]*\) .*$/\1/p' "$work/$name.out")
  verdict=OK
  if [ "$status" -ne 0 ]; then
    verdict="FAILED (qemu exit $status)"
    if [ "$status" -eq 124 ]; then verdict="FAILED (timeout after ${QEMU_TIMEOUT} s)"; fi
  elif [ -z "$got" ] || [ -z "$want" ]; then
    verdict="FAILED (no checksum)"
  elif ! diff <(grep -Ev '^(stack peak|memory) ' "$work/$name.out") "$work/host-$scalar.txt" >"$work/$name.diff"; then
    verdict="MISMATCH (see $work/$name.diff)"
  fi
  # The Q16.16 build must not do any floating-point arithmetic: no soft-float routine in it
  # (arithmetic, comparisons, conversions from and to integers, in the AEABI and libgcc names).
  # (Symbol lists are read whole first: `nm | grep -q` under pipefail fails when grep stops
  # reading early, which hides a match.)
  symbols=$(arm-none-eabi-nm -C "$elf")
  if [ "$scalar" = q16 ] && grep -Eq "$SOFT_FLOAT" <<<"$symbols"; then
    verdict="FAILED (soft-float routines in the q16 image)"
  fi
  # The probe skins with LBS only: no dual-quaternion skinning loop nor polar split may be linked
  # (an out-of-line `SkinningJob::run` keeps every palette kind's loop: about 9 KB on soft float).
  if grep -Eq 'sinew::job::skinning::.*(dqs|blend_dual_quats)|polar_decompose|from_mat4_scaled' <<<"$symbols"; then
    verdict="FAILED (dual-quaternion skinning linked in an LBS-only image)"
  fi
  # No image has a heap: no global allocator (nor its shims) may be linked.
  if grep -Eq '__rust_alloc|__rg_alloc|__rdl_alloc|__rust_no_alloc_shim|__rust_alloc_error_handler' <<<"$symbols"; then
    verdict="FAILED (an allocator is linked)"
  fi
  [ "$verdict" = OK ] || failed=1
  summary+=("$target $machine $scalar: checksum ${got:-none} host ${want:-none} $verdict${stack:+ (stack peak $stack)}")
  if [ "$verdict" != OK ]; then
    # QEMU's stderr (faults, panics) and the first differing lines.
    sed "s/^/  $name stderr: /" "$work/$name.err" >&2 || true
    if [ -s "$work/$name.diff" ]; then head -n 8 "$work/$name.diff" | sed "s/^/  $name diff: /" >&2; fi
  fi

  animation=$(classify "$elf" | awk '$1 !~ /^(raster|setup|runtime)$/ { s += $2 } END { print s + 0 }')
  sizes+=("$(arm-none-eabi-size -A "$elf" | awk -v n="$name" -v stack="${stack:-0}" -v anim="$animation" '
    $1 == ".text" || $1 == ".vector_table" { text += $2 }
    $1 == ".rodata" { rodata = $2 }
    $1 == ".data" { data = $2 }
    $1 == ".bss" || $1 == ".uninit" { bss += $2 }
    END {
      printf "%-26s %7d %7d %6d %6d %7d %7d %6d %7d %6d\n", n, text, rodata, data, bss, text + rodata + data,
        data + bss, stack, data + bss + stack, anim
    }')")
  if [ "$target" = thumbv7em-none-eabihf ]; then classify "$elf" >"$work/animation.txt"; fi
  if [ "$target" = thumbv6m-none-eabi ]; then
    memory=$(sed -n 's/^memory //p' "$work/$name.out")
    phases=$(sed -n 's/^stack peak .*(\(.*\))$/\1/p' "$work/$name.out")
    sizes[-1]+=" ($phases)"
  fi
done

printf '%s\n' "${summary[@]}"
echo
printf '%-26s %7s %7s %6s %6s %7s %7s %6s %7s %6s\n' image .text .rodata .data .bss flash static stack ram anim
printf '%s\n' "${sizes[@]}"
echo "(.text includes the vector table; .rodata the $(stat -c %s ../../core/fixtures/character.sinew)-byte character; flash = .text +"
echo " .rodata + .data; static = .data + .bss; stack = peak of setup and frames (painted stack);"
echo " ram = static + stack; anim = animation code in .text, below; no image has a heap)"
echo
if [ -s "$work/animation.txt" ]; then
  echo "animation code on thumbv7em-none-eabihf (bytes of .text, by symbol; stage wrappers hold inlined core code):"
  awk -v budget="$ANIMATION_CODE_BUDGET" '
    BEGIN {
      label["graph"] = "state machine, blend spaces, inertialization (sinew::graph)"
      label["controller"] = "controller update, fades, blending (sinew::controller, job::blending)"
      label["sampling"] = "track sampling, key decoding (sinew::clip, job::sampling)"
      label["player"] = "players, Q32.32 time (sinew::player, real::q32)"
      label["root_motion"] = "root motion (sinew::root_motion)"
      label["retarget"] = "retargeting, its constants computed each frame (job::retarget)"
      label["ik"] = "chain IK (FABRIK, job::ik)"
      label["spring"] = "spring bones (job::spring)"
      label["local_to_model"] = "local-to-model (job::local_to_model)"
      label["skin_matrix"] = "skin matrices in place (job::skin_matrix)"
      label["skinning"] = "LBS skinning, bind data reads (job::skinning)"
      label["math"] = "shared math (sinew::math, sinew::real)"
      label["raster"] = "not animation: raster (sinew::raster, band hashing)"
      label["setup"] = "not animation: asset parsing, graph validation, skeleton and controller setup"
      label["runtime"] = "not animation: fmt, report, semihosting, compiler builtins"
    }
    {
      printf "  %-72s %6d\n", label[$1], $2
      if ($1 !~ /^(raster|setup|runtime)$/) total += $2
      if ($1 ~ /^(sampling|controller|local_to_model|skinning|skin_matrix)$/) core += $2
    }
    END {
      printf "  %-72s %6d\n", "animation total", total
      printf "  %-72s %6d (target %d: %s)\n", "of which sampling + controller/blend + local-to-model + palette + LBS", core,
        budget, core <= budget ? "met" : "over by " (core - budget)
    }' "$work/animation.txt"
  echo
fi
if [ -n "$memory" ]; then
  echo "RAM of one 24-joint character (thumbv6m; StateMachine<R, Probe>: 24 joints = 6 SoA, 3 slots, 16 tracks, 2 parameters):"
  echo "  $memory"
  character=$(sed -n 's/^character \([0-9]*\) .*/\1/p' <<<"$memory")
  if [ -n "$character" ]; then
    echo "  character $character bytes (target $CHARACTER_RAM_BUDGET: $([ "$character" -le "$CHARACTER_RAM_BUDGET" ] && echo met || echo "over by $((character - CHARACTER_RAM_BUDGET))"))"
  fi
  echo
fi
echo "run.sh: $(( $(date +%s) - start )) s"
exit "$failed"
