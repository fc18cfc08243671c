//! The host/microcontroller split, by name: which kernels this build compiles.
//!
//! Some jobs have two kernels that compute the same bits: a host kernel, larger and faster
//! where registers, caches and instruction sets are wide, and a narrow kernel, small for the
//! flash of a microcontroller. `build.rs` is the only place that looks at the target
//! (`target_arch`, `target_feature`); it names its answers as cfgs, and this module turns them
//! into constants. Code branches on the constants with `if` (both kernels compile everywhere,
//! the other one folds away); an attribute that must differ (`#[inline(never)]` on
//! microcontrollers) tests the cfg of the same name with `cfg_attr`.
//!
//! The `narrow-kernels` cargo feature makes every constant false on every target, so the
//! microcontroller kernels run on the host (`cargo test -p sinew --features narrow-kernels`).

/// Host-sized kernels (cfg `sinew_host_kernels`): on x86-64 and AArch64, blending inlines its
/// kernels and fuses uniform-weight layers into one loop, LBS skinning has a loop per usual
/// influence count and a packed palette, and a clip reads a track entry with one bounds check.
/// Elsewhere (Cortex-M, RISC-V, 32-bit x86, WebAssembly) each has one shared, smaller kernel.
pub(crate) const HOST_KERNELS: bool = cfg!(sinew_host_kernels);

/// `f32` lanes are a SIMD register (cfg `sinew_simd_lanes`): `wide::f32x4` uses SSE, simd128
/// or AArch64 NEON. Code shaped for SIMD lanes (the unrolled local-to-model walk, the SIMD
/// square root of [`Lanes::sqrt_ieee`](crate::real::Lanes::sqrt_ieee)) is used only then;
/// where lanes are four scalars the compact forms are smaller and as fast.
pub(crate) const SIMD_LANES: bool = cfg!(sinew_simd_lanes);

/// `f32` lanes are an SSE register (cfg `sinew_sse_lanes`), whose `maxps` / `minps` return the
/// second operand when either is NaN, so a clamp into [0, 1] needs no NaN fix-up.
pub(crate) const SSE_LANES: bool = cfg!(sinew_sse_lanes);

/// Lane multiply-adds are fused (cfg `sinew_fma`: x86-64 with the `fma` target feature, as
/// `-C target-cpu=x86-64-v3` gives): [`Lanes::mul_add`](crate::real::Lanes::mul_add) rounds
/// once. Results then differ from the default build's (and the firmware's) by rounding, within
/// the accuracy bounds the tests state; tests that compare bits with the default build test
/// this constant.
pub(crate) const FMA: bool = cfg!(sinew_fma);

/// Eight-lane operations (cfg `sinew_avx2`: x86-64 with the `avx2` and `fma` target features,
/// as `-C target-cpu=x86-64-v3` gives): the pair operations of
/// [`Lanes`](crate::real::Lanes) (`mul_pair`, `mul_add_pair`) run two lane vectors as one
/// `ymm` register, with the same bits as two four-lane operations; the LBS skinning loop blends
/// a joint's first two palette columns that way, and blending crosses two layers with a kernel
/// of its own on such pairs (`mul_pairs`, `mul_add_pairs`), which rounds differently from the
/// four-lane one.
pub(crate) const AVX2: bool = cfg!(sinew_avx2);

/// Run-time dispatch (cfg `sinew_dispatch`: the `dispatch` feature, on x86-64 with an operating
/// system, not built for x86-64-v3 already, not `narrow-kernels`): jobs run their kernels
/// through [`dispatch::dispatch`], which picks the x86-64-v3 form on CPUs that have it.
pub(crate) const DISPATCH: bool = cfg!(sinew_dispatch);

/// Lane multiply-adds are fused in kernels of the set `v3` ([`dispatch`]): in the v3 kernels,
/// and in every kernel of a build with [`FMA`].
#[inline(always)]
pub(crate) const fn fma(v3: bool) -> bool {
    FMA || (DISPATCH && v3)
}

/// Pair operations and the kernels written for eight lanes run in kernels of the set `v3`
/// ([`dispatch`]): in the v3 kernels, and in every kernel of a build with [`AVX2`].
#[inline(always)]
pub(crate) const fn avx2(v3: bool) -> bool {
    AVX2 || (DISPATCH && v3)
}

/// The jobs' lane multiply-adds are fused now: [`FMA`], or the x86-64-v3 kernels chosen at
/// run time ([`dispatch`]). For tests that compare the jobs' bits with unfused references.
#[cfg(test)]
pub(crate) fn jobs_fuse() -> bool {
    FMA || dispatch::active() == dispatch::Kernels::X86_64V3
}

/// The jobs run the eight-lane kernels now: [`AVX2`], or the x86-64-v3 kernels chosen at run
/// time ([`dispatch`]).
#[cfg(test)]
pub(crate) fn jobs_pair() -> bool {
    AVX2 || dispatch::active() == dispatch::Kernels::X86_64V3
}

// SSE lanes are SIMD lanes; fused lanes are SSE lanes; eight-lane builds are fused.
const _: () = assert!(!SSE_LANES || SIMD_LANES);
const _: () = assert!(!FMA || SSE_LANES);
const _: () = assert!(!AVX2 || FMA);

const _: () = assert!(!DISPATCH || (HOST_KERNELS && SSE_LANES && !FMA));

pub mod dispatch;

#[cfg(test)]
mod tests;
