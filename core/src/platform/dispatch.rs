//! Run-time kernel dispatch on x86-64 hosts, and the switch that turns it off.
//!
//! A default x86-64 build may assume SSE2 only. Built with the `dispatch` feature (on by
//! default) for an x86-64 host with an operating system, every job that has lane kernels
//! (sampling's track decode, blending, local-to-model, the skin palettes, LBS and DQS skinning)
//! is compiled twice: once for the build's own target, and once for the x86-64-v3 level (AVX2,
//! FMA, BMI1/2, LZCNT, MOVBE, F16C), where lane multiply-adds are fused and the pair
//! operations are one eight-lane register, as in a `-C target-cpu=x86-64-v3` build. A job picks
//! one when it runs: the v3 kernels when the CPU has every v3 feature and dispatch is on, the
//! build's own otherwise. The v3 kernels give the same bits as an x86-64-v3 build; the build's
//! own give the default build's bits, the firmware's.
//!
//! The switch: [`set_dispatch`]`(false)` (or `SINEW_KERNELS=baseline` in the environment, read
//! when the first job runs) makes every job run the build's own kernels, so the results are the
//! same bits on every CPU: lockstep simulations and replays that compare results across
//! machines want that. [`with_build_kernels`] does the same for one closure on one thread
//! (the asset baker wraps its work in it, so a bake is the same bytes on every CPU). Builds
//! without the feature, builds for other targets, and builds that already assume v3
//! (`-C target-cpu=x86-64-v3`) have one kernel set and ignore the switch.
//!
//! This module holds the crate's only `unsafe`: the calls into the kernels compiled with
//! `#[target_feature]`, made only once the CPU is known to have those features, the AVX
//! intrinsics of eight-lane operations run only in those kernels (the LBS blend's `pair`, the
//! skin palette's `mul_mat4`), and one empty `asm!` block that keeps the v3 kernels' fused
//! lanes together (`whole`).

#[cfg(sinew_dispatch)]
use core::sync::atomic::{AtomicU8, Ordering};

/// A set of kernels the jobs can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// The build's own kernels: those of its target and target features (the default
    /// x86-64 build: SSE2), the same bits on every CPU the build runs on.
    Build,
    /// The x86-64-v3 kernels (AVX2, FMA and the rest of the level), chosen at run time: the
    /// same bits as an x86-64-v3 build.
    X86_64V3,
}

/// The kernels jobs started now on this thread run: [`Kernels::X86_64V3`] where this build
/// dispatches, the CPU has every x86-64-v3 feature, dispatch is on and the thread is not inside
/// [`with_build_kernels`]; [`Kernels::Build`] otherwise.
#[must_use]
pub fn active() -> Kernels {
    if v3() {
        Kernels::X86_64V3
    } else {
        Kernels::Build
    }
}

/// Turns run-time dispatch on (the default) or off. Off, every job runs the build's own
/// kernels: the default build's bits on every CPU. It takes effect for jobs started after it
/// returns; a program that needs the same bits everywhere calls it before its first job.
/// Without dispatch in the build it does nothing.
pub fn set_dispatch(on: bool) {
    #[cfg(sinew_dispatch)]
    STATE.store(if on && cpu_has_v3() { V3 } else { BUILD }, Ordering::Relaxed);
    #[cfg(not(sinew_dispatch))]
    let _ = on;
}

/// `item` compiled for every feature of the x86-64-v3 level that [`cpu_has_v3`] checks (the
/// two lists must name the same features).
#[cfg(sinew_dispatch)]
macro_rules! v3_features {
    ($item:item) => {
        #[target_feature(enable = "avx,avx2,bmi1,bmi2,f16c,fma,lzcnt,movbe,popcnt,sse3,sse4.1,sse4.2,ssse3")]
        $item
    };
}

/// A job's kernel in both kernel sets: `build` runs the build's own, `v3` the x86-64-v3 set.
/// Only [`dispatch`] runs them.
///
/// A job whose kernels sit in a file of their own includes that file twice, once in a module
/// per set, each module naming its set with a constant `V3` that the lane operations read
/// ([`fma`](super::fma), [`avx2`](super::avx2), `Lanes::mul_add_on`): the kernels are written
/// once and take no parameter for the set (`job/blending.rs`, `job/skin_matrix.rs`,
/// `job/skinning.rs`, `clip/soa.rs`).
pub(crate) trait PerSet {
    /// What the kernel returns.
    type Output;
    /// The kernel in the build's own set.
    fn build(self) -> Self::Output;
    /// The kernel in the x86-64-v3 set; run only once the CPU was found to have the level.
    #[cfg(sinew_dispatch)]
    fn v3(self) -> Self::Output;
}

/// Runs a job's kernel with the kernels [`active`] names.
#[inline(always)]
pub(crate) fn dispatch<K: PerSet>(k: K) -> K::Output {
    #[cfg(sinew_dispatch)]
    if v3() {
        #[allow(unsafe_code)]
        // SAFETY: `v3()` is true only once `cpu_has_v3` found every feature `on_v3` enables.
        return unsafe { on_v3(k) };
    }
    k.build()
}

/// A kernel of one kernel set, the set of the copy of the kernels that defines it (see
/// [`PerSet`]), which [`call`] runs out of line.
pub(crate) trait Here {
    /// What the kernel returns.
    type Output;
    /// The kernel.
    fn run(self) -> Self::Output;
}

/// Runs a kernel out of line from a copy of the kernels of the set `V3` (the kernels that keep
/// a loop in a function of its own so that its pointers stay in registers): in the v3 copy, in
/// a function compiled with the v3 target features; in the build's own, out of line on hosts.
#[inline(always)]
pub(crate) fn call<K: Here, const V3: bool>(k: K) -> K::Output {
    #[cfg(sinew_dispatch)]
    if V3 {
        #[allow(unsafe_code)]
        // SAFETY: the v3 kernels run only below `dispatch`'s call of `on_v3`, made once the CPU
        // was found to have every feature `on_v3_here` enables (`PerSet::v3` is called nowhere
        // else, and `call::<_, true>` only from the v3 copies of the kernels).
        return unsafe { on_v3_here(k) };
    }
    on_build(k)
}

/// A kernel that writes two slices, called out of line with the slices as arguments of their
/// own: the compiler then knows that its stores do not alias what it reads, and keeps the
/// reads of the next element ahead of the stores of this one (in a struct's fields it cannot).
pub(crate) trait Here2<T, U> {
    /// The kernel (see [`Here`]), writing `a` and `b`.
    fn run(self, a: &mut [T], b: &mut [U]);
}

/// [`call`] for a [`Here2`].
#[inline(always)]
pub(crate) fn call2<K: Here2<T, U>, T, U, const V3: bool>(k: K, a: &mut [T], b: &mut [U]) {
    #[cfg(sinew_dispatch)]
    if V3 {
        #[allow(unsafe_code)]
        // SAFETY: as in `call`: the v3 kernels run only below `dispatch`'s call of `on_v3`,
        // made once the CPU was found to have every feature `on_v3_2` enables.
        return unsafe { on_v3_2(k, a, b) };
    }
    on_build_2(k, a, b);
}

/// The build's own form of a [`Here2`] called out of line.
#[cfg_attr(sinew_host_kernels, inline(never))]
fn on_build_2<K: Here2<T, U>, T, U>(k: K, a: &mut [T], b: &mut [U]) {
    k.run(a, b);
}

#[cfg(sinew_dispatch)]
v3_features! {
    /// The x86-64-v3 form of a [`Here2`].
    #[inline(never)]
    fn on_v3_2<K: Here2<T, U>, T, U>(k: K, a: &mut [T], b: &mut [U]) {
        k.run(a, b);
    }
}

/// The build's own form of a kernel called out of line (on hosts; elsewhere the compiler
/// decides).
#[cfg_attr(sinew_host_kernels, inline(never))]
fn on_build<K: Here>(k: K) -> K::Output {
    k.run()
}

#[cfg(sinew_dispatch)]
v3_features! {
    /// The x86-64-v3 form of a job's kernel: [`PerSet::v3`] inlined into a function compiled
    /// for every feature of the level.
    #[inline(never)]
    fn on_v3<K: PerSet>(k: K) -> K::Output {
        k.v3()
    }
}

#[cfg(sinew_dispatch)]
v3_features! {
    /// The x86-64-v3 form of a kernel called out of line: [`Here::run`] inlined into a
    /// function compiled for every feature of the level.
    #[inline(never)]
    fn on_v3_here<K: Here>(k: K) -> K::Output {
        k.run()
    }
}

/// `v` unchanged, through an empty `asm!` block the compiler cannot see into: what computes
/// `v` computes all four lanes as one vector, and what uses it starts from one vector.
///
/// The v3 kernels' fused multiply-add is four `f32::mul_add` (`Lanes::mul_add_on`), which
/// LLVM's SLP vectorizer joins into one `vfmadd…ps`. Where a kernel reads only some lanes of
/// its results (the skinning loops: lanes 0 to 2 of a tangent), LLVM may split the vectors
/// into the lanes read, which the vectorizer joins again in pieces of two lanes and one, with
/// shuffles between (`core/docs/performance.md#instructions-per-call`). The skinning
/// loops' multiply-adds (`Lanes::mul_add_whole_on`) pass their results through here. The
/// block is empty, so no instruction runs and no lane changes.
#[cfg(sinew_dispatch)]
#[inline(always)]
pub(crate) fn whole(v: core::arch::x86_64::__m128) -> core::arch::x86_64::__m128 {
    let mut v = v;
    #[allow(unsafe_code)]
    // SAFETY: the template is a comment: no instruction runs, nothing is read or written but
    // the register, which holds `v` before and after (`pure, nomem, nostack`; the register
    // class `xmm_reg` is SSE's, which every x86-64 CPU has).
    unsafe {
        core::arch::asm!("/* {v} */", v = inout(xmm_reg) v, options(pure, nomem, nostack, preserves_flags));
    }
    v
}

/// `[x[0].mul_add(m, a[0]), x[1].mul_add(m, a[1])]`, fused, or without `a`
/// `[x[0] · m, x[1] · m]`, in a kernel of the set `V3`: the two four-lane vectors as the
/// halves of one eight-lane `ymm` register, one `vfmadd…ps` or `vmulps` (the same bits as the
/// v3 kernels' two four-lane operations). `None` outside the v3 kernels, whose callers then
/// take their build's own operations.
///
/// The LBS palette blend's eight-lane form, as an x86-64-v3 build compiles it from
/// `wide::f32x8`. Built from the v3 kernels' four-lane operations, LLVM keeps them as pairs of
/// `xmm` operations.
#[cfg(sinew_dispatch)]
#[inline(always)]
pub(crate) fn pair<const V3: bool>(x: [__m128; 2], m: f32, a: Option<[__m128; 2]>) -> Option<[__m128; 2]> {
    if !V3 {
        return None;
    }
    #[allow(unsafe_code)]
    // SAFETY: AVX and FMA instructions, run only in the `V3` kernels: as in `call`, those run
    // only below `dispatch`'s call of `on_v3`, made once the CPU was found to have every v3
    // feature.
    Some(unsafe { pair_avx(x, m, a) })
}

/// The columns of `a × b` (column-major) in a kernel of the set `V3`, two columns of the
/// product to an eight-lane register: column `c` is
/// `((a₀·b[c][0] + a₁·b[c][1]) + a₂·b[c][2]) + a₃·b[c][3]`, the first product rounded and each
/// sum fused (the same bits as the v3 kernels' four-lane form). `None` outside the v3 kernels.
#[cfg(sinew_dispatch)]
#[inline(always)]
pub(crate) fn mul_mat4<const V3: bool>(a: &[[f32; 4]; 4], b: &[[f32; 4]; 4]) -> Option<[[f32; 4]; 4]> {
    if !V3 {
        return None;
    }
    #[allow(unsafe_code)]
    // SAFETY: AVX and FMA instructions, run only in the `V3` kernels (see `pair`).
    Some(unsafe { mat4_avx(a, b) })
}

#[cfg(sinew_dispatch)]
use core::arch::x86_64::__m128;

#[cfg(sinew_dispatch)]
v3_features! {
    /// [`mul_mat4`]'s product: `a`'s columns in both halves of four registers, `b`'s columns
    /// two to a register, each of their lanes spread over its half by an in-lane shuffle.
    ///
    /// # Safety
    /// The CPU has every v3 feature.
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn mat4_avx(a: &[[f32; 4]; 4], b: &[[f32; 4]; 4]) -> [[f32; 4]; 4] {
        use core::arch::x86_64::{__m256, _mm256_fmadd_ps, _mm256_mul_ps, _mm256_permute_ps};
        let col = |c: [f32; 4]| -> __m256 { bytemuck::cast([c, c]) };
        let a = [col(a[0]), col(a[1]), col(a[2]), col(a[3])];
        let half = |i: usize| -> [[f32; 4]; 2] {
            let bb: __m256 = bytemuck::cast([b[2 * i], b[2 * i + 1]]);
            let s = _mm256_mul_ps(a[0], _mm256_permute_ps::<0x00>(bb));
            let s = _mm256_fmadd_ps(a[1], _mm256_permute_ps::<0x55>(bb), s);
            let s = _mm256_fmadd_ps(a[2], _mm256_permute_ps::<0xAA>(bb), s);
            bytemuck::cast(_mm256_fmadd_ps(a[3], _mm256_permute_ps::<0xFF>(bb), s))
        };
        let ([c0, c1], [c2, c3]) = (half(0), half(1));
        [c0, c1, c2, c3]
    }
}

#[cfg(sinew_dispatch)]
v3_features! {
    /// `x · m + a` (fused), or `x · m` without `a`, on the two four-lane vectors as the halves
    /// of one eight-lane register. Compiled with the v3 features so that it and the
    /// intrinsics inline into the v3 kernels (in an `#[inline(always)]` function without them
    /// the intrinsics stay calls).
    ///
    /// # Safety
    /// The CPU has every v3 feature.
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn pair_avx(x: [__m128; 2], m: f32, a: Option<[__m128; 2]>) -> [__m128; 2] {
        use core::arch::x86_64::{
            _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_mul_ps, _mm256_set1_ps,
            _mm256_set_m128,
        };
        let (x, m) = (_mm256_set_m128(x[1], x[0]), _mm256_set1_ps(m));
        let s = match a {
            Some(a) => _mm256_fmadd_ps(x, m, _mm256_set_m128(a[1], a[0])),
            None => _mm256_mul_ps(x, m),
        };
        [_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s)]
    }
}

/// Not yet decided: the first job decides.
#[cfg(sinew_dispatch)]
const UNKNOWN: u8 = 0;
/// The build's own kernels.
#[cfg(sinew_dispatch)]
const BUILD: u8 = 1;
/// The x86-64-v3 kernels.
#[cfg(sinew_dispatch)]
const V3: u8 = 2;

/// Which kernels the jobs run: [`UNKNOWN`] until the first job or [`set_dispatch`].
#[cfg(sinew_dispatch)]
static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// True when the jobs run the x86-64-v3 kernels.
#[inline(always)]
fn v3() -> bool {
    #[cfg(sinew_dispatch)]
    if let Some(v3) = FORCED.get() {
        return v3;
    }
    #[cfg(sinew_dispatch)]
    return match STATE.load(Ordering::Relaxed) {
        V3 => true,
        BUILD => false,
        _ => decide(),
    };
    #[cfg(not(sinew_dispatch))]
    false
}

/// The first job's decision: v3 when the CPU has it, unless `SINEW_KERNELS=baseline`.
#[cfg(sinew_dispatch)]
#[cold]
fn decide() -> bool {
    let off = std::env::var_os("SINEW_KERNELS").is_some_and(|v| v == "baseline");
    let v3 = !off && cpu_has_v3();
    // A `set_dispatch` between the load and here wins.
    let _ = STATE.compare_exchange(UNKNOWN, if v3 { V3 } else { BUILD }, Ordering::Relaxed, Ordering::Relaxed);
    STATE.load(Ordering::Relaxed) == V3
}

/// Every feature `v3_features!` compiles [`on_v3`] and [`on_v3_2`] with (the operating
/// system's support for the AVX registers included: the detection checks it).
#[cfg(sinew_dispatch)]
fn cpu_has_v3() -> bool {
    std::is_x86_feature_detected!("avx")
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("f16c")
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("movbe")
        && std::is_x86_feature_detected!("popcnt")
        && std::is_x86_feature_detected!("sse3")
        && std::is_x86_feature_detected!("sse4.1")
        && std::is_x86_feature_detected!("sse4.2")
        && std::is_x86_feature_detected!("ssse3")
}

#[cfg(sinew_dispatch)]
std::thread_local! {
    /// The kernels this thread's jobs run regardless of [`STATE`] ([`with_build_kernels`]).
    static FORCED: core::cell::Cell<Option<bool>> = const { core::cell::Cell::new(None) };
}

/// Runs `f` with the jobs it runs on this thread on the build's own kernels, whatever the
/// switch says, and returns its result: results that must be the same bits on every CPU
/// (an asset baker's decisions, a golden file) without changing the kernels of other threads.
/// Other threads `f` starts are not covered. Without dispatch in the build it just runs `f`.
pub fn with_build_kernels<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(sinew_dispatch)]
    return forced(false, f);
    #[cfg(not(sinew_dispatch))]
    f()
}

/// `f` with [`FORCED`] at `v3`, restored afterwards (also when `f` panics).
#[cfg(sinew_dispatch)]
fn forced<T>(v3: bool, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.set(self.0);
        }
    }
    let _restore = Restore(FORCED.replace(Some(v3)));
    f()
}

/// Runs `f` with this thread's jobs on `kernels` (tests compare both sets side by side without
/// moving the switch under the tests running beside them); `None` when this build or CPU has no
/// such set.
#[cfg(test)]
pub(crate) fn with_kernels<T>(kernels: Kernels, f: impl FnOnce() -> T) -> Option<T> {
    match kernels {
        Kernels::Build => Some(with_build_kernels(f)),
        #[cfg(sinew_dispatch)]
        Kernels::X86_64V3 if cpu_has_v3() => Some(forced(true, f)),
        Kernels::X86_64V3 => None,
    }
}
