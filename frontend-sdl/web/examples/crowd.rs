//! The crowd of `bench.html`, natively: N characters of MODEL, each at its own time, playing
//! two clips blended at 0.5 each (default: Walk and Run), advanced and updated to their skin
//! palettes every frame. Prints the best of five rounds in ns per character, the figure to set
//! beside the wasm module's (`node frontend-sdl/web/test/bench.mjs`).
//!
//! ```text
//! cargo run --release -p sinew-web --example crowd -- Fox.sinew 1000 Walk Run
//! ```

use std::process::ExitCode;
use std::rc::Rc;
use std::time::Instant;

use sinew_host::character::outputs;
use sinew_web::{WebCharacter as Character, WebWork as Work};

fn run(args: &[String]) -> Result<String, String> {
    let path = args.first().ok_or("usage: crowd MODEL [N] [CLIP CLIP]")?;
    let n: usize = args.get(1).map_or(Ok(1000), |s| s.parse()).map_err(|_| "N is a count")?;
    let (a, b) = (args.get(2).map_or("Walk", String::as_str), args.get(3).map_or("Run", String::as_str));
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let model =
        Rc::new(sinew_web::model::open(bytes.into_boxed_slice(), usize::MAX).map_err(|e| format!("{path}: {e}"))?);
    let clip = |name: &str| model.clips.iter().position(|c| c.clip.name() == name).ok_or(format!("no clip '{name}'"));
    let (a, b) = (clip(a)?, clip(b)?);
    let mut work = Work::default();
    let mut crowd = Vec::with_capacity(n);
    for i in 0..n {
        let mut c = Character::new(Rc::clone(&model)).map_err(|e| e.to_string())?;
        c.play(a).map_err(|e| e.to_string())?;
        c.blend(b, 0.5).map_err(|e| e.to_string())?;
        c.advance((i as f32 * 0.37) % 1.0, &mut work).map_err(|e| e.to_string())?;
        crowd.push(c);
    }
    let mut frame = |crowd: &mut Vec<Character>| -> Result<(), String> {
        for c in crowd.iter_mut() {
            c.advance(1.0 / 60.0, &mut work).map_err(|e| e.to_string())?;
            c.update(outputs::PALETTES, &mut work).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    for _ in 0..30 {
        frame(&mut crowd)?;
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..50 {
            frame(&mut crowd)?;
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / (50 * n.max(1)) as f64);
    }
    let name = std::path::Path::new(path).file_stem().map_or("model".into(), |s| s.to_string_lossy());
    Ok(format!("sinew-native crowd {name} {best:.0} {n}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("crowd: {e}");
            ExitCode::FAILURE
        }
    }
}
