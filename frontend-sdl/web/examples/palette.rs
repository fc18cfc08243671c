//! The browser runtime's palette computed natively: the reference the browser tests compare
//! the wasm modules' bits with. Plays clip CLIP of MODEL from its start for T seconds, as the
//! viewer's `?clip=CLIP&time=T` does, and prints skin 0's palette as JSON (16 floats per skin
//! joint, column-major, each in its shortest round-trip form).
//!
//! ```text
//! cargo run -p sinew-web --example palette -- Fox.sinew Run 0.3
//! ```

use std::process::ExitCode;
use std::rc::Rc;

use sinew_host::character::outputs;
use sinew_web::{WebCharacter as Character, WebWork as Work};

fn run(args: &[String]) -> Result<String, String> {
    let [path, clip, time] = args else { return Err("usage: palette MODEL CLIP SECONDS".into()) };
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let model =
        Rc::new(sinew_web::model::open(bytes.into_boxed_slice(), usize::MAX).map_err(|e| format!("{path}: {e}"))?);
    let index = model.clips.iter().position(|c| c.clip.name() == clip).ok_or(format!("no clip named '{clip}'"))?;
    let t: f32 = time.parse().map_err(|_| format!("'{time}' is not a time"))?;
    let mut c = Character::new(Rc::clone(&model)).map_err(|e| e.to_string())?;
    c.play(index).map_err(|e| e.to_string())?;
    let mut work = Work::default();
    c.advance(t, &mut work).map_err(|e| e.to_string())?;
    c.update(outputs::PALETTES, &mut work).map_err(|e| e.to_string())?;
    let floats: Vec<String> =
        c.palettes.first().into_iter().flatten().flat_map(|m| m.to_cols_array()).map(|x| x.to_string()).collect();
    Ok(format!("{{\"palette\":[{}]}}", floats.join(",")))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("palette: {e}");
            ExitCode::FAILURE
        }
    }
}
