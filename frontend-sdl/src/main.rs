//! The `sinew` command line.

fn main() {
    println!("sinew {}", env!("CARGO_PKG_VERSION"));
}
