// Linear blend skinning ([`Palette::Matrices`](super::Palette)): the job's LBS loops and their
// lane kernels — each vertex's influences blended into one matrix ([`Blended`]), from the
// palette or, on hosts skinning many vertices, from a [`PackedPalette`] copied on the stack;
// out-of-line loops for positions with normals (and tangents) that store four lanes at a time.

use core::cell::Cell;

use super::blended::{Blended, V};
use super::vertex::{directions, renormalize, renormalize_xyz, unit};
use super::SkinningJob;
use crate::math::{Mat4, Vec3, Vec4};
use crate::platform::dispatch::{call, call2, Here, Here2};
use crate::platform::{AVX2, HOST_KERNELS};
use crate::real::{Lanes, Real};

/// Linear blend skinning with `K` influences (`K = 0`: `job.influences`), directions
/// renormalized when `UNIT`.
///
/// Hosts skinning enough vertices first copy the palette into a [`PackedPalette`] on the
/// stack (three lane vectors per joint instead of four); the result is the same bit for bit.
// Out of line on hosts: inside `run_with`, among all the other loops, the compiler does not
// inline the skinning loop's iterators and reads the influence count `K` from memory.
#[inline(always)]
pub(crate) fn lbs<R: Real, const K: usize, const UNIT: bool>(job: &mut SkinningJob<'_, R>, palette: &[Mat4<R>]) {
    call::<_, V3>(Lbs::<'_, '_, '_, R, K, UNIT> { job, palette });
}

/// [`lbs`](lbs), in its caller's function.
#[cfg_attr(sinew_host_kernels, inline(always))]
fn lbs_here<R: Real, const K: usize, const UNIT: bool>(job: &mut SkinningJob<'_, R>, palette: &[Mat4<R>]) {
    if HOST_KERNELS && palette.len() <= PACKED_JOINTS && job.positions.len() >= PACKED_MIN_VERTICES {
        let mut table = [PackedJoint([[R::ZERO; 4]; 4]); PACKED_JOINTS];
        // Each index as its two bytes in memory order: a table index is the low byte
        // (validated indices are below PACKED_JOINTS), read by one byte load.
        if let Ok(idx) = bytemuck::try_cast_slice::<u16, [u8; 2]>(job.joint_indices) {
            // The dispatched kernels blend eight lanes at a time except with tangents,
            // whose loop runs slower on eight lanes
            // (`core/docs/performance.md#instructions-per-call`).
            if eight_lanes() && (AVX2 || job.tangents.is_none()) {
                pack::<R, true>(&mut table, palette);
                return lbs_with::<R, K, UNIT, _>(job, idx, FromPacked::<R, K>(&table));
            }
            pack::<R, false>(&mut table, palette);
            return lbs_with::<R, K, UNIT, _>(job, idx, |i: &[[u8; 2]], w: &[R]| {
                blend_packed::<R, K, false>(&table, i, w)
            });
        }
    }
    let idx = job.joint_indices;
    lbs_with::<R, K, UNIT, _>(job, idx, |i: &[u16], w: &[R]| blend_matrices::<R, K>(palette, i, w));
}

/// Linear blend skinning with `blend` turning a vertex's indices (`k` of `idx`'s entries,
/// [`joint_indices`](Self::joint_indices) as `blend` reads them) and weights into its matrix,
/// directions renormalized when `UNIT`.
///
/// With positions and normals, and tangents or not, in floating point on hosts, the
/// skinning loop leaves the directions as the matrices map them and [`renormalize`] scales
/// them afterwards, four at a time (the same bits as [`unit`] in the loop).
#[inline(always)]
pub(crate) fn lbs_with<R: Real, const K: usize, const UNIT: bool, I>(
    job: &mut SkinningJob<'_, R>,
    idx: &[I],
    blend: impl BlendInfluences<I, R>,
) {
    let k = if K == 0 { job.influences } else { K };
    let n = job.positions.len();
    let idx = &idx[..n * k];
    let wts = &job.joint_weights[..n * k];
    let pos = job.positions;
    let out_p = &mut job.out_positions[..n];
    let dir = |d: Vec3<R>| if UNIT { unit(d) } else { d };
    match (job.normals, job.out_normals.as_deref_mut(), job.tangents, job.out_tangents.as_deref_mut()) {
        (Some(nrm), Some(out_n), None, _) => {
            let (nrm, out_n) = (&nrm[..n], &mut out_n[..n]);
            // In floating point on hosts, the normals are renormalized in a second pass, four
            // at a time.
            if UNIT && HOST_KERNELS && !R::FIXED_POINT {
                points_and_normals::<R, I, false>(&blend, k, (idx, wts), (pos, out_p), (nrm, &mut *out_n));
                renormalize(out_n);
            } else {
                points_and_normals::<R, I, UNIT>(&blend, k, (idx, wts), (pos, out_p), (nrm, out_n));
            }
        }
        (Some(nrm), Some(out_n), Some(tan), Some(out_t)) if HOST_KERNELS && !R::FIXED_POINT => {
            let (nrm, out_n, tan, out_t) = (&nrm[..n], &mut out_n[..n], &tan[..n], &mut out_t[..n]);
            points_normals_tangents::<R, I>(
                &blend,
                k,
                (idx, wts),
                (pos, out_p),
                (nrm, &mut *out_n),
                (tan, &mut *out_t),
            );
            if UNIT {
                renormalize(out_n);
                renormalize_xyz(out_t);
            }
        }
        (nrm, mut out_n, tan, mut out_t) => {
            for (v, ((idx, w), (p, op))) in
                idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(out_p.iter_mut())).enumerate()
            {
                let m = blend.blend(idx, w);
                *op = m.point(*p);
                directions(v, (nrm, out_n.as_deref_mut()), (tan, out_t.as_deref_mut()), |d| dir(m.direction(d)));
            }
        }
    }
}

/// The skinning loop of positions and normals: `blend` turns each vertex's `k` indices and
/// weights into its matrix, which moves the position and the normal (scaled to unit length
/// when `UNIT`).
///
/// A function of its own, out of line on hosts: only the loop's own pointers are live in it,
/// so they stay in registers (inside the job's method, beside the other loops, the compiler
/// reloads them from the stack every vertex).
///
/// In floating point on hosts, every vertex but the last writes its results with
/// [`store_over`]: one four-lane store each, instead of two stores and a lane extraction; and
/// the loop takes two vertices an iteration, which share its counters and its exit test.
#[inline(always)]
pub(crate) fn points_and_normals<R: Real, I, const UNIT: bool>(
    blend: &impl BlendInfluences<I, R>,
    k: usize,
    (idx, wts): (&[I], &[R]),
    (pos, out_p): (&[Vec3<R>], &mut [Vec3<R>]),
    (nrm, out_n): (&[Vec3<R>], &mut [Vec3<R>]),
) {
    call2::<_, _, _, V3>(PointsAndNormals::<'_, '_, R, I, _, UNIT> { blend, k, idx, wts, pos, nrm }, out_p, out_n);
}

/// [`points_and_normals`], in its caller's function.
#[cfg_attr(sinew_host_kernels, inline(always))]
fn points_and_normals_here<R: Real, I, const UNIT: bool>(
    blend: &impl BlendInfluences<I, R>,
    k: usize,
    (idx, wts): (&[I], &[R]),
    (pos, out_p): (&[Vec3<R>], &mut [Vec3<R>]),
    (nrm, out_n): (&[Vec3<R>], &mut [Vec3<R>]),
) {
    let n = pos.len().saturating_sub(1);
    let heads =
        (idx.split_at_checked(n * k), wts.split_at_checked(n * k), pos.split_at_checked(n), nrm.split_at_checked(n));
    if let (true, Some((idx, last_idx)), Some((wts, last_w)), Some((pos, last_p)), Some((nrm, last_n))) =
        (HOST_KERNELS && !R::FIXED_POINT && !UNIT, heads.0, heads.1, heads.2, heads.3)
    {
        let (cells_p, cells_n) = (Cell::from_mut(out_p).as_slice_of_cells(), Cell::from_mut(out_n).as_slice_of_cells());
        // Two vertices an iteration (one set of loop counters for both), while a pair's stores
        // have a next pair to run over; then the one or two vertices left before the last.
        let pairs = cells_p.len().saturating_sub(2) / 2;
        let (i2, i1) = idx.split_at(pairs * 2 * k);
        let (w2, w1) = wts.split_at(pairs * 2 * k);
        let (p2, p1) = pos.split_at(pairs * 2);
        let (n2, n1) = nrm.split_at(pairs * 2);
        let it = i2.chunks_exact(2 * k).zip(w2.chunks_exact(2 * k)).zip(p2.chunks_exact(2).zip(n2.chunks_exact(2)));
        for (((i, w), (p, nv)), ((cp, np), (cn, nn))) in it.zip(pair_cells(cells_p).zip(pair_cells(cells_n))) {
            if let ([pa, pb], [na, nb], [ca, cb], [da, db], [np, _], [nn, _]) = (p, nv, cp, cn, np, nn) {
                let ((ia, ib), (wa, wb)) = (i.split_at(k), w.split_at(k));
                skin_over::<R, I>(blend, (ia, wa), (pa, na), ([ca, cb], [da, db]));
                skin_over::<R, I>(blend, (ib, wb), (pb, nb), ([cb, np], [db, nn]));
            }
        }
        let at = pairs * 2;
        let (tail_p, tail_n) = (cells_p.get(at..).unwrap_or(&[]), cells_n.get(at..).unwrap_or(&[]));
        let it = i1.chunks_exact(k).zip(w1.chunks_exact(k)).zip(p1.iter().zip(n1.iter()));
        for (((i, w), (p, nv)), (cp, cn)) in it.zip(tail_p.windows(2).zip(tail_n.windows(2))) {
            if let ([ca, cb], [da, db]) = (cp, cn) {
                skin_over::<R, I>(blend, (i, w), (p, nv), ([ca, cb], [da, db]));
            }
        }
        if let ([p], [nv], Some(op), Some(on)) = (last_p, last_n, cells_p.last(), cells_n.last()) {
            let m = blend.blend(last_idx, last_w);
            op.set(m.point(*p));
            on.set(m.direction(*nv));
        }
        return;
    }
    let it = idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(nrm.iter()));
    for (((idx, w), (p, nv)), (op, on)) in it.zip(out_p.iter_mut().zip(out_n.iter_mut())) {
        let m = blend.blend(idx, w);
        *op = m.point(*p);
        *on = if UNIT { unit(m.direction(*nv)) } else { m.direction(*nv) };
    }
}

/// The skinning loop of positions, normals and tangents in floating point on hosts: `blend`
/// turns each vertex's `k` indices and weights into its matrix, which moves the position and
/// maps the normal and the tangent's xyz (its w kept), none of them renormalized. Every vertex
/// but the last writes its position and its normal with [`store_over`], and every tangent is
/// one four-lane store.
#[inline(always)]
pub(crate) fn points_normals_tangents<R: Real, I>(
    blend: &impl BlendInfluences<I, R>,
    k: usize,
    (idx, wts): (&[I], &[R]),
    (pos, out_p): (&[Vec3<R>], &mut [Vec3<R>]),
    (nrm, out_n): (&[Vec3<R>], &mut [Vec3<R>]),
    (tan, out_t): (&[Vec4<R>], &mut [Vec4<R>]),
) {
    call::<_, V3>(PointsNormalsTangents::<'_, '_, R, I, _> { blend, k, idx, wts, pos, out_p, nrm, out_n, tan, out_t });
}

/// [`points_normals_tangents`], in its caller's function.
#[cfg_attr(sinew_host_kernels, inline(always))]
fn points_normals_tangents_here<R: Real, I>(
    blend: &impl BlendInfluences<I, R>,
    k: usize,
    (idx, wts): (&[I], &[R]),
    (pos, out_p): (&[Vec3<R>], &mut [Vec3<R>]),
    (nrm, out_n): (&[Vec3<R>], &mut [Vec3<R>]),
    (tan, out_t): (&[Vec4<R>], &mut [Vec4<R>]),
) {
    let tangent = |m: &Blended<R>, t: &Vec4<R>| {
        let a = m.linear(t.truncate()).to_array();
        Vec4::new(a[0], a[1], a[2], t.w)
    };
    let (cells_p, cells_n) = (Cell::from_mut(out_p).as_slice_of_cells(), Cell::from_mut(out_n).as_slice_of_cells());
    let it = idx.chunks_exact(k).zip(wts.chunks_exact(k)).zip(pos.iter().zip(nrm.iter()).zip(tan.iter().zip(out_t)));
    let mut it = it.zip(cells_p.iter().zip(cells_n.iter()));
    // Each vertex but the last, with the next one's cells for `store_over`.
    let Some(mut cur) = it.next() else { return };
    for next in it {
        let (((i, w), ((p, nv), (t, ot))), (cp, cn)) = cur;
        let m = blend.blend(i, w);
        store_over([cp, next.1 .0], m.point_lanes(*p));
        store_over([cn, next.1 .1], m.linear(*nv));
        *ot = tangent(&m, t);
        cur = next;
    }
    let (((i, w), ((p, nv), (t, ot))), (cp, cn)) = cur;
    let m = blend.blend(i, w);
    cp.set(m.point(*p));
    cn.set(m.direction(*nv));
    *ot = tangent(&m, t);
}

/// [`lbs`]'s loop as a kernel called out of line.
struct Lbs<'j, 'a, 'p, R: Real, const K: usize, const UNIT: bool> {
    job: &'j mut SkinningJob<'a, R>,
    palette: &'p [Mat4<R>],
}

impl<R: Real, const K: usize, const UNIT: bool> Here for Lbs<'_, '_, '_, R, K, UNIT> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        lbs_here::<R, K, UNIT>(self.job, self.palette);
    }
}

/// [`points_and_normals`] as a kernel called out of line
/// (its inputs; the outputs are [`Here2`]'s arguments).
struct PointsAndNormals<'b, 'd, R: Real, I, B, const UNIT: bool> {
    blend: &'b B,
    k: usize,
    idx: &'d [I],
    wts: &'d [R],
    pos: &'d [Vec3<R>],
    nrm: &'d [Vec3<R>],
}

impl<R: Real, I, B: BlendInfluences<I, R>, const UNIT: bool> Here2<Vec3<R>, Vec3<R>>
    for PointsAndNormals<'_, '_, R, I, B, UNIT>
{
    #[inline(always)]
    fn run(self, out_p: &mut [Vec3<R>], out_n: &mut [Vec3<R>]) {
        let PointsAndNormals { blend, k, idx, wts, pos, nrm } = self;
        points_and_normals_here::<R, I, UNIT>(blend, k, (idx, wts), (pos, out_p), (nrm, out_n));
    }
}

/// [`points_normals_tangents`] as a kernel called out of line.
struct PointsNormalsTangents<'b, 'd, R: Real, I, B> {
    blend: &'b B,
    k: usize,
    idx: &'d [I],
    wts: &'d [R],
    pos: &'d [Vec3<R>],
    out_p: &'d mut [Vec3<R>],
    nrm: &'d [Vec3<R>],
    out_n: &'d mut [Vec3<R>],
    tan: &'d [Vec4<R>],
    out_t: &'d mut [Vec4<R>],
}

impl<R: Real, I, B: BlendInfluences<I, R>> Here for PointsNormalsTangents<'_, '_, R, I, B> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let PointsNormalsTangents { blend, k, idx, wts, pos, out_p, nrm, out_n, tan, out_t } = self;
        points_normals_tangents_here::<R, I>(blend, k, (idx, wts), (pos, out_p), (nrm, out_n), (tan, out_t));
    }
}

/// One vertex of [`points_and_normals`]' four-lane path: its matrix from its indices and
/// weights, then its position and normal each [`store_over`] its output cell and the next one.
#[inline(always)]
pub(crate) fn skin_over<R: Real, I>(
    blend: &impl BlendInfluences<I, R>,
    (idx, w): (&[I], &[R]),
    (p, nv): (&Vec3<R>, &Vec3<R>),
    (cp, cn): (Over<'_, R>, Over<'_, R>),
) {
    let m = blend.blend(idx, w);
    store_over(cp, m.point_lanes(*p));
    store_over(cn, m.linear(*nv));
}

/// An output cell and the next one, which a [`store_over`] into the first runs over.
pub(crate) type Over<'c, R> = [&'c Cell<Vec3<R>>; 2];

/// Each pair of `c`'s elements with the pair after it (for two vertices' [`store_over`]).
#[inline(always)]
pub(crate) fn pair_cells<T>(c: &[T]) -> impl Iterator<Item = (&[T], &[T])> {
    c.chunks_exact(2).zip(c.chunks_exact(2).skip(1))
}

/// Lanes 0 to 2 of `v` into `cur`, and lane 3 into `next.x`, which the next vertex's results
/// overwrite: the four lanes are one store.
#[inline(always)]
pub(crate) fn store_over<R: Real>([cur, next]: Over<'_, R>, v: V<R>) {
    let a = v.to_array();
    cur.set(Vec3::new(a[0], a[1], a[2]));
    let mut n = next.get();
    n.x = a[3];
    next.set(n);
}

/// Palette entries the packed table holds: one per value of a byte, so that validated indices,
/// all below the palette length, index it by their low byte without a bounds check.
pub(crate) const PACKED_JOINTS: usize = 1 << u8::BITS;

/// Fewest vertices for which packing the palette (a 16 KiB table for `f32`) pays off.
pub(crate) const PACKED_MIN_VERTICES: usize = 256;

/// A palette without its matrices' last rows, which only reach the discarded fourth output
/// lane, one 64-byte entry per joint (an entry's address is the joint index shifted), in one
/// of two layouts ([`pack`]). Four-lane: `table[j]` holds, for joint `j`, the first three rows
/// of each of its columns 0 to 2 and, in their fourth lanes, the rows of its translation
/// (three lane vectors per joint instead of four). Wide: the four columns as they are, so that
/// columns 0 and 1, then column 2 and the translation, are two eight-lane operations, and the
/// translation needs no gathering from the fourth lanes. An AVX2 build takes the wide layout;
/// the dispatched x86-64-v3 kernels too, but for the loop with tangents
/// ([`lbs`]); the SSE2 and narrow builds the four-lane one. Both give the same bits.
pub(crate) type PackedPalette<R> = [PackedJoint<R>; PACKED_JOINTS];

/// One joint of a [`PackedPalette`] on a 64-byte boundary (one cache line; SSE and AVX
/// arithmetic read the columns from memory directly).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct PackedJoint<R>(pub(crate) [[R; 4]; 4]);

/// True when this copy's kernel set blends [`PackedPalette`] entries eight lanes at a
/// time ([`blend_pairs`]): in an AVX2 build, and in the dispatched x86-64-v3 kernels.
#[inline(always)]
const fn eight_lanes() -> bool {
    AVX2 || (V3 && cfg!(sinew_dispatch))
}

/// `palette` (at most [`PACKED_JOINTS`] entries) into `table`'s first entries, in the wide
/// layout when `WIDE`, the four-lane one otherwise ([`PackedPalette`]).
pub(crate) fn pack<R: Real, const WIDE: bool>(table: &mut PackedPalette<R>, palette: &[Mat4<R>]) {
    for (entry, m) in table.iter_mut().zip(palette) {
        if WIDE {
            entry.0 = m.cols;
        } else {
            let t = m.cols[3];
            for (c, col) in entry.0.iter_mut().take(3).enumerate() {
                *col = [m.cols[c][0], m.cols[c][1], m.cols[c][2], t[c]];
            }
        }
    }
}

/// `Σ wᵢ·vᵢ` over the influences, accumulated in order from the first product: the same
/// lane-wise sums whatever lane vectors `load` gives for a palette entry (validated indices:
/// a missing entry, or an empty influence list, reads as zero instead of panicking).
///
/// Every influence is added, zero weights included: the multiply-adds cost less than the
/// mispredicted branch that skipping them would take on meshes with mixed influence counts.
/// A zero weight adds exact zeros, so it leaves every sum unchanged.
#[inline(always)]
pub(crate) fn blend_with<R: Real, const K: usize, const C: usize, I: Copy>(
    idx: &[I],
    w: &[R],
    load: impl Fn(I) -> Option<[V<R>; C]>,
) -> [V<R>; C] {
    let k = if K == 0 { idx.len().min(w.len()) } else { K };
    let (Some(idx), Some(w)) = (idx.get(..k), w.get(..k)) else { return [V::<R>::splat(R::ZERO); C] };
    // Four weights: one load, then a broadcast of each lane.
    let w4 = <&[R; 4]>::try_from(w).ok().map(|a| V::<R>::load(a).to_array());
    let mut sum = [V::<R>::splat(R::ZERO); C];
    for (i, (&j, &wj)) in idx.iter().zip(w.iter()).enumerate() {
        let Some(m) = load(j) else { continue };
        let ws = V::<R>::splat(match w4 {
            Some(a) if K == 4 => a[i & 3],
            _ => wj,
        });
        for c in 0..C {
            sum[c] = if i == 0 { m[c] * ws } else { m[c].mul_add_whole_on::<V3>(ws, sum[c]) };
        }
    }
    sum
}

/// A vertex's influences — its entries of the joint indices (as `I`) and of the weights —
/// blended into its matrix: what the skinning loops call once per vertex. Closures implement
/// it.
///
/// The wide layout's blend is a type of its own, [`FromPacked`], whose method is `#[inline]`:
/// as a closure LLVM does not inline it into the loops, and the v3 kernels' eight-lane
/// operations, which inline only into functions compiled with the v3 features, become calls.
/// (Marked `#[inline(always)]`, or with the other blends made types too, the loops run more
/// instructions.)
pub(crate) trait BlendInfluences<I, R: Real> {
    /// The blended matrix of the influences `idx` weighted by `w`.
    fn blend(&self, idx: &[I], w: &[R]) -> Blended<R>;
}

impl<I, R: Real, F: Fn(&[I], &[R]) -> Blended<R>> BlendInfluences<I, R> for F {
    #[inline(always)]
    fn blend(&self, idx: &[I], w: &[R]) -> Blended<R> {
        self(idx, w)
    }
}

/// Influences blended from a [`PackedPalette`] in the wide layout ([`pack`], [`blend_packed`]).
pub(crate) struct FromPacked<'t, R, const K: usize>(pub(crate) &'t PackedPalette<R>);

impl<R: Real, const K: usize> BlendInfluences<[u8; 2], R> for FromPacked<'_, R, K> {
    #[inline]
    fn blend(&self, idx: &[[u8; 2]], w: &[R]) -> Blended<R> {
        blend_packed::<R, K, true>(self.0, idx, w)
    }
}

/// The weighted sum of the influences' matrices.
#[inline(always)]
pub(crate) fn blend_matrices<R: Real, const K: usize>(palette: &[Mat4<R>], idx: &[u16], w: &[R]) -> Blended<R> {
    let [c0, c1, c2, t] =
        blend_with::<R, K, 4, _>(idx, w, |j| palette.get(usize::from(j)).map(|m| m.cols.map(|c| V::<R>::load(&c))));
    Blended { cols: [c0, c1, c2], translation: t }
}

/// The weighted sum of the influences' [`PackedPalette`] entries. In the four-lane layout,
/// three columns with the translation in their fourth lanes, moved out afterwards; in the wide
/// one (`WIDE`), columns 0 and 1 and column 2 and the translation as two pairs of lanes
/// ([`Lanes::mul_add_pair`], eight lanes at a time in an AVX2 build and the v3 kernels):
/// the same operations in the same order for every lane that matters, so the same bits.
#[inline(always)]
pub(crate) fn blend_packed<R: Real, const K: usize, const WIDE: bool>(
    table: &PackedPalette<R>,
    idx: &[[u8; 2]],
    w: &[R],
) -> Blended<R> {
    // Validated indices are below the palette length, at most PACKED_JOINTS (256): the low
    // byte is the index, and a byte indexes the table without a bounds check.
    const LOW: usize = if cfg!(target_endian = "little") { 0 } else { 1 };
    let entry = |j: [u8; 2]| &table[usize::from(j[LOW])].0;
    if WIDE {
        let k = if K == 0 { idx.len().min(w.len()) } else { K };
        let (idx, w) = (idx.get(..k).unwrap_or(&[]), w.get(..k).unwrap_or(&[]));
        let [c0, c1, c2, t] = blend_pairs::<R>(idx.iter().map(|&j| entry(j)), w);
        return Blended { cols: [c0, c1, c2], translation: t };
    }
    let cols = blend_with::<R, K, 3, _>(idx, w, |j| {
        let e = entry(j);
        Some([V::<R>::load(&e[0]), V::<R>::load(&e[1]), V::<R>::load(&e[2])])
    });
    let [c0, c1, c2] = cols;
    let (t0, t1, t2) = (c0.to_array()[3], c1.to_array()[3], c2.to_array()[3]);
    // Lane 3 is never read as a result; [`store_over`] stores it, and t2 there takes one
    // shuffle less than a zero would.
    Blended { cols, translation: V::<R>::load(&[t0, t1, t2, t2]) }
}

/// [`blend_with`] of four columns as two pairs of lanes: `Σ wᵢ·vᵢ`, accumulated in order from
/// the first product, for each column of the `entries`, one per weight.
#[inline(always)]
pub(crate) fn blend_pairs<'t, R: Real + 't>(entries: impl Iterator<Item = &'t [[R; 4]; 4]>, w: &[R]) -> [V<R>; 4] {
    let zero = V::<R>::splat(R::ZERO);
    let (mut s01, mut s23) = ([zero; 2], [zero; 2]);
    for (i, (e, &wj)) in entries.zip(w.iter()).enumerate() {
        let [c0, c1, c2, c3] = e;
        let (c01, c23) = ([V::<R>::load(c0), V::<R>::load(c1)], [V::<R>::load(c2), V::<R>::load(c3)]);
        if i == 0 {
            s01 = V::<R>::mul_pair_on::<V3>(c01, wj);
            s23 = V::<R>::mul_pair_on::<V3>(c23, wj);
        } else {
            s01 = V::<R>::mul_add_pair_on::<V3>(c01, wj, s01);
            s23 = V::<R>::mul_add_pair_on::<V3>(c23, wj, s23);
        }
    }
    [s01[0], s01[1], s23[0], s23[1]]
}
