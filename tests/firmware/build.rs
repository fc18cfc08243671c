//! Picks the memory map for the bare-metal target and hands cortex-m-rt's linker script to the
//! linker. Host builds need neither.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

/// The QEMU board each Cortex-M target runs on; its memory map is `memory/<board>.x`.
fn board(target: &str) -> Option<&'static str> {
    if target.starts_with("thumbv7em-") {
        Some("mps2-an386")
    } else if target.starts_with("thumbv7m-") {
        Some("lm3s6965evb")
    } else if target.starts_with("thumbv6m-") {
        Some("microbit")
    } else {
        None
    }
}

fn main() -> ExitCode {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=memory");
    let target = env::var("TARGET").unwrap_or_default();
    let Some(board) = board(&target) else {
        if target.contains("-none") {
            eprintln!("sinew-firmware: no memory map for target {target}");
            return ExitCode::FAILURE;
        }
        return ExitCode::SUCCESS;
    };
    let (Some(manifest), Some(out)) = (env::var_os("CARGO_MANIFEST_DIR"), env::var_os("OUT_DIR")) else {
        eprintln!("sinew-firmware: CARGO_MANIFEST_DIR or OUT_DIR is not set");
        return ExitCode::FAILURE;
    };
    let src = PathBuf::from(manifest).join("memory").join(format!("{board}.x"));
    let out = PathBuf::from(out);
    if let Err(e) = fs::copy(&src, out.join("memory.x")) {
        eprintln!("sinew-firmware: cannot copy {}: {e}", src.display());
        return ExitCode::FAILURE;
    }
    // cortex-m-rt's link.x includes memory.x; both are found on this search path. Passing
    // -Tlink.x here rather than in RUSTFLAGS keeps it when RUSTFLAGS is set in the environment.
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo:rustc-env=SINEW_FIRMWARE_BOARD={board}");
    ExitCode::SUCCESS
}
