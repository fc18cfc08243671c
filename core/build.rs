//! Names the host/microcontroller split once, as cfgs the code tests by name (see
//! `src/platform.rs` and ARCHITECTURE.md, "Host and narrow kernels"). This is the only place that
//! looks at the target's architecture and features.
//!
//! - `sinew_host_kernels`: x86-64 and AArch64, the hosts the code's larger, faster kernels are
//!   written for (inlined blending kernels, a fused blending loop, skinning loops specialised by
//!   influence count, one bounds check per clip track entry). Elsewhere (Cortex-M, RISC-V, but
//!   also 32-bit x86 and WebAssembly) the narrow kernels keep flash small.
//! - `sinew_simd_lanes`: `wide::f32x4` is a SIMD register (the conditions under which `wide`
//!   picks SSE, simd128 or NEON), so code shaped for SIMD lanes pays off.
//! - `sinew_sse_lanes`: that register is SSE's, whose `maxps` / `minps` return the second
//!   operand when either is NaN.
//! - `sinew_fma`: x86-64 built with the `fma` target feature (`-C target-cpu=x86-64-v3` or
//!   newer): lane multiply-adds are fused (`vfmadd`, one rounding instead of two).
//! - `sinew_avx2`: x86-64 with `avx2` and `fma` (`x86-64-v3`): kernels that pair two lane
//!   vectors run them as one eight-lane operation (`ymm`), computing the same bits as the two
//!   four-lane ones (blending's two-layer kernel, written for eight lanes, rounds differently).
//!
//! - `sinew_dispatch`: x86-64 with an operating system and the `dispatch` feature, built
//!   without `fma`: jobs pick the x86-64-v3 form of their kernels at run time where the CPU
//!   has it (`src/platform/dispatch.rs`); the crate links `std` for the CPU detection.
//!
//! The `narrow-kernels` feature clears them all on every target, so the microcontroller code
//! runs, and is tested, on the host. Without `sinew_fma` every result is the same, bit for bit,
//! on every target (the firmware checks it); with it, results differ from those by rounding
//! within the accuracy bounds the tests state.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for name in
        ["sinew_host_kernels", "sinew_simd_lanes", "sinew_sse_lanes", "sinew_fma", "sinew_avx2", "sinew_dispatch"]
    {
        println!("cargo::rustc-check-cfg=cfg({name})");
    }
    if env::var_os("CARGO_FEATURE_NARROW_KERNELS").is_some() {
        return;
    }
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let feature = |f: &str| features.split(',').any(|x| x == f);

    if arch == "x86_64" || arch == "aarch64" {
        println!("cargo::rustc-cfg=sinew_host_kernels");
    }
    if feature("sse") || feature("simd128") || (arch == "aarch64" && feature("neon")) {
        println!("cargo::rustc-cfg=sinew_simd_lanes");
    }
    if feature("sse") {
        println!("cargo::rustc-cfg=sinew_sse_lanes");
    }
    if arch == "x86_64" && feature("sse") && feature("fma") {
        println!("cargo::rustc-cfg=sinew_fma");
        if feature("avx2") {
            println!("cargo::rustc-cfg=sinew_avx2");
        }
    } else if arch == "x86_64"
        && feature("sse")
        && env::var_os("CARGO_FEATURE_DISPATCH").is_some()
        && env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os != "none")
    {
        println!("cargo::rustc-cfg=sinew_dispatch");
    }
}
