//! Runs the bare-metal firmware images under QEMU (`tests/firmware/run.sh`) and requires every
//! image's report to equal the host's, bit for bit.
//!
//! Needs `qemu-system-arm` and `binutils-arm-none-eabi` (Debian packages); the script names
//! them when they are missing, and this test fails then.

use std::process::Command;

/// The slow tier (`cargo test -- --skip slow::` leaves it out; see the README's Tests table).
mod slow {
    #[test]
    fn firmware_images_match_the_host_under_qemu() {
        super::firmware_images_match_the_host_under_qemu();
    }
}

/// Builds and runs every image, and compares their reports with the host's.
fn firmware_images_match_the_host_under_qemu() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/firmware/run.sh");
    let out = Command::new("bash")
        .arg(script)
        // The firmware crate has its own target directory; don't inherit this build's.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}\n{stderr}");
    assert!(out.status.success(), "tests/firmware/run.sh failed:\n{stdout}\n{stderr}");
    let ok_lines = stdout.lines().filter(|l| l.ends_with(")") && l.contains(" OK ")).count();
    assert!(ok_lines >= 4, "expected 4 matching images, got:\n{stdout}");
}
