//! The browser runtime's spring bones computed natively: the reference the browser tests
//! compare the full module's bits with. Opens MODEL, sets up its spring bones (60 Hz, on) and
//! runs one update per line of WORLDS: the line's world placement (`tx ty tz qx qy qz qw
//! scale`, as `sinew_character_set_world` takes it) set first, then, from the second line on,
//! the clock advanced by 1/60 s. The first update puts the springs at rest; each later one
//! steps them once. Prints every joint's position (the translation of its model matrix) after
//! each update as JSON, each float in its shortest round-trip form.
//!
//! ```text
//! cargo run -p sinew-web --example springs -- model.sinew worlds.txt
//! ```
//!
//! With `--colliders` after WORLDS, the JSON also holds the model's spring colliders as the
//! file defines them (`colliders`: each one's joint, shape, points in the joint's space,
//! radius, inside) and the collider lines after the last update (`lines`: `outside` and
//! `inside`, x y z per point, two points per line), as `sinew_character_collider_lines` gives
//! them.
//!
//! With `--time N FRAMES` in place of WORLDS: N characters of MODEL, with spring bones and
//! without, each placed on a sway and a turn and advanced 1/60 s a frame for FRAMES frames,
//! and prints the nanoseconds of `update` per character per frame for both (what the browser's
//! springs benchmark subtracts), for a profiler to run on:
//!
//! ```text
//! cargo build --release -p sinew-web --example springs
//! perf record -g target/release/examples/springs model.sinew --time 200 3000
//! ```

use std::process::ExitCode;
use std::rc::Rc;

use sinew::job::spring::ColliderShape;
use sinew::math::{Mat4, Quat, Vec3};
use sinew_host::character::colliders::ColliderLines;
use sinew_host::{SpringSet, SpringSettings};
use sinew_web::{WebCharacter as Character, WebWork as Work};

/// `update` of `n` characters of `model` (with spring bones when `springs`) over `frames`
/// frames: nanoseconds per character per frame.
fn time(model: &Rc<sinew_host::Model>, springs: bool, n: usize, frames: usize) -> Result<f64, String> {
    let mut crowd = (0..n)
        .map(|_| {
            let mut c = Character::new(Rc::clone(model)).map_err(|e| e.to_string())?;
            if springs {
                let set = model.springs().ok_or("the model has no spring bones")?;
                c.set_springs(set, SpringSettings::default(), true).map_err(|e| e.to_string())?;
            }
            Ok(c)
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut work = Work::default();
    let mut spent = std::time::Duration::ZERO;
    for f in 0..frames {
        for (i, c) in crowd.iter_mut().enumerate() {
            let t = i as f32 * 0.618 + f as f32 / 60.0;
            let turn = Quat::from_axis_angle(Vec3::new(0.0, 1.0, 0.0), 0.6 * (1.9 * t).sin());
            c.set_world(Mat4::from_trs(Vec3::new(0.4 * (3.1 * t).sin(), 0.0, 0.2 * (5.0 * t).sin()), turn, Vec3::ONE));
            c.advance(1.0 / 60.0, &mut work).map_err(|e| e.to_string())?;
        }
        let start = std::time::Instant::now();
        for c in &mut crowd {
            c.update(0, &mut work).map_err(|e| e.to_string())?;
        }
        spent += start.elapsed();
    }
    Ok(spent.as_nanos() as f64 / (n * frames).max(1) as f64)
}

fn run(args: &[String]) -> Result<String, String> {
    if let [path, flag, n, frames] = args {
        if flag == "--time" {
            let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
            let model = Rc::new(
                sinew_web::model::open(bytes.into_boxed_slice(), usize::MAX).map_err(|e| format!("{path}: {e}"))?,
            );
            let n: usize = n.parse().map_err(|_| format!("'{n}' is not a count"))?;
            let frames: usize = frames.parse().map_err(|_| format!("'{frames}' is not a count"))?;
            let (with, without) = (time(&model, true, n, frames)?, time(&model, false, n, frames)?);
            return Ok(format!("update with springs {with:.0} ns, without {without:.0} ns per character per frame"));
        }
    }
    let (path, worlds, colliders) = match args {
        [path, worlds] => (path, worlds, false),
        [path, worlds, flag] if flag == "--colliders" => (path, worlds, true),
        _ => return Err("usage: springs MODEL WORLDS [--colliders] | springs MODEL --time N FRAMES".into()),
    };
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let model =
        Rc::new(sinew_web::model::open(bytes.into_boxed_slice(), usize::MAX).map_err(|e| format!("{path}: {e}"))?);
    let text = std::fs::read_to_string(worlds).map_err(|e| format!("{worlds}: {e}"))?;
    let mut c = Character::new(Rc::clone(&model)).map_err(|e| e.to_string())?;
    let set = model.springs().ok_or(format!("{path}: the model has no spring bones"))?;
    let defined = colliders.then(|| definitions(&set));
    c.set_springs(set, SpringSettings::default(), true).map_err(|e| e.to_string())?;
    let mut work = Work::default();
    let mut steps = Vec::new();
    for (k, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let v: Vec<f32> = line
            .split_whitespace()
            .map(|x| x.parse().map_err(|_| format!("{worlds}: line {}: '{x}' is not a number", k + 1)))
            .collect::<Result<_, _>>()?;
        let [tx, ty, tz, qx, qy, qz, qw, s] = v[..] else {
            return Err(format!("{worlds}: line {}: 8 numbers (tx ty tz qx qy qz qw scale)", k + 1));
        };
        // As sinew_character_set_world builds it.
        let r = Quat::new(qx, qy, qz, qw).normalize();
        c.set_world(Mat4::from_trs(Vec3::new(tx, ty, tz), r, Vec3::new(s, s, s)));
        if k > 0 {
            c.advance(1.0 / 60.0, &mut work).map_err(|e| e.to_string())?;
        }
        c.update(0, &mut work).map_err(|e| e.to_string())?;
        let positions: Vec<String> = c
            .joints
            .iter()
            .flat_map(|m| {
                let t = m.to_cols_array();
                [t[12], t[13], t[14]]
            })
            .map(|x| x.to_string())
            .collect();
        steps.push(format!("[{}]", positions.join(",")));
    }
    let steps = steps.join(",");
    let Some(defined) = defined else { return Ok(format!("{{\"steps\":[{steps}]}}")) };
    // As sinew_character_collider_lines computes them.
    let lines = c.collider_lines(ColliderLines::plane_size(model.bounds.radius));
    let flat = |set: &[[Vec3<f32>; 2]]| floats(set.iter().flatten().flat_map(|p| [p.x, p.y, p.z]));
    Ok(format!(
        "{{\"steps\":[{steps}],\"colliders\":[{defined}],\"lines\":{{\"outside\":[{}],\"inside\":[{}]}}}}",
        flat(&lines.outside),
        flat(&lines.inside)
    ))
}

/// Floats as JSON numbers, each in its shortest round-trip form, comma-separated.
fn floats(v: impl IntoIterator<Item = f32>) -> String {
    v.into_iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// The colliders of `set` as JSON objects, comma-separated: `joint`, `shape` (`sphere`,
/// `capsule` or `plane`), `offset`, a capsule's `tail`, a plane's `normal` (points and the
/// normal in the joint's space), `radius` and `inside` (0 for a plane).
fn definitions(set: &SpringSet) -> String {
    let point = |p: Vec3<f32>| format!("[{}]", floats([p.x, p.y, p.z]));
    let one = |joint: u16, shape: &ColliderShape<f32>| {
        match *shape {
        ColliderShape::Sphere { offset, radius, inside } => format!(
            "{{\"joint\":{joint},\"shape\":\"sphere\",\"offset\":{},\"radius\":{radius},\"inside\":{inside}}}",
            point(offset)
        ),
        ColliderShape::Capsule { offset, tail, radius, inside } => format!(
            "{{\"joint\":{joint},\"shape\":\"capsule\",\"offset\":{},\"tail\":{},\"radius\":{radius},\"inside\":{inside}}}",
            point(offset),
            point(tail)
        ),
        ColliderShape::Plane { offset, normal } => format!(
            "{{\"joint\":{joint},\"shape\":\"plane\",\"offset\":{},\"normal\":{},\"radius\":0,\"inside\":false}}",
            point(offset),
            point(normal)
        ),
    }
    };
    set.colliders.iter().map(|c| one(c.joint, &c.shape)).collect::<Vec<_>>().join(",")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("springs: {e}");
            ExitCode::FAILURE
        }
    }
}
