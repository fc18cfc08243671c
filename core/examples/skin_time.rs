//! Wall-clock time of the benchmark kit's skinning workload alone (`../shared/bench`: 3,934
//! vertices of 4 influences on a 54-matrix palette, positions and normals, not renormalized),
//! on data of the kit's shapes made up here as `job_cost` makes them. It times batches of 100
//! calls for `SECONDS` (default 5) and prints the fastest batch and the quartiles in ns per
//! vertex: on a shared machine whose speed moves with its neighbours, the fastest batch is what
//! the loop costs on a quiet core, and the spread shows how far the neighbours move it.
//!
//! ```sh
//! cargo run --release -p sinew --example skin_time -- 5
//! RUSTFLAGS="-C target-cpu=x86-64-v3" cargo run --release -p sinew --example skin_time --target-dir target/v3 -- 5
//! ```
//!
//! An optional second argument skins only that many of the vertices (at least 1).

use std::hint::black_box;
use std::time::Instant;

use sinew::job::{Palette, SkinningJob};
use sinew::math::{Mat4, Quat, Transform, Vec3};

/// The kit's mesh: vertices and palette matrices (4 influences per vertex).
const VERTICES: usize = 3934;
const PALETTE: usize = 54;
/// Calls per timed batch.
const BATCH: usize = 100;

/// A xorshift generator of values in [-1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    fn vec3(&mut self) -> Vec3<f32> {
        Vec3::new(self.next(), self.next(), self.next())
    }
    fn transform(&mut self) -> Transform<f32> {
        let axis = Vec3::new(self.next(), self.next(), 1.0).normalize_or_zero();
        let scale = Vec3::ONE + self.vec3() * 0.1;
        Transform::new(self.vec3(), Quat::from_axis_angle(axis, self.next() * 3.0), scale)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5.0);
    let n: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(VERTICES).clamp(1, VERTICES);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let palette: Vec<Mat4<f32>> = (0..PALETTE).map(|_| rng.transform().to_mat4()).collect();
    let positions: Vec<Vec3<f32>> = (0..n).map(|_| rng.vec3()).collect();
    let normals: Vec<Vec3<f32>> = (0..n).map(|_| rng.vec3().normalize_or_zero()).collect();
    let joints: Vec<u16> = (0..n * 4).map(|_| ((rng.next() + 1.0) * 0.5 * PALETTE as f32) as u16 % 54).collect();
    let weights: Vec<f32> = (0..n)
        .flat_map(|_| {
            let w: [f32; 4] = core::array::from_fn(|_| rng.next().abs() + 0.01);
            let sum: f32 = w.iter().sum();
            w.map(|x| x / sum)
        })
        .collect();
    let (mut out_p, mut out_n) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    let start = Instant::now();
    let mut batches = Vec::new();
    while start.elapsed().as_secs_f64() < seconds || batches.is_empty() {
        let t = Instant::now();
        for _ in 0..BATCH {
            SkinningJob::new(Palette::Matrices(&palette), 4, &joints, &weights, &positions, &mut out_p)
                .with_normals(&normals, &mut out_n)
                .run_unnormalized()?;
            black_box((&out_p, &out_n));
        }
        batches.push(t.elapsed().as_secs_f64() * 1e9 / (BATCH * n) as f64);
    }
    batches.sort_by(f64::total_cmp);
    let q = |f: usize| batches[(batches.len() - 1) * f / 4];
    println!(
        "skin {n} vertices, ns per vertex over {} batches of {BATCH} calls: fastest {:.2}, quartiles {:.2} {:.2} {:.2}",
        batches.len(),
        q(0),
        q(1),
        q(2),
        q(3)
    );
    Ok(())
}
