//! The kit's crowd stage (`sinew bench`'s `crowd` line) on one thread and on N threads,
//! alternately in one process, so that both see the same machine:
//!
//! ```sh
//! cargo run --release -p sinew-offline --example crowd_threads -- MODEL [THREADS] [ROUNDS]
//! ```
//!
//! Prints one line per round: ns per character on 1 and on THREADS (default 2) threads and
//! their ratio. On Linux it adds the share of a core that other processes used during the
//! round (from `/proc/stat` and `/proc/self/stat`), which tells a quiet round from a busy one.

use std::path::PathBuf;
use std::time::Instant;

use sinew_offline::bake::BakeOptions;
use sinew_offline::bench;
use sinew_offline::model::Model;

/// Clock ticks all processes and this process have run, when `/proc` has them.
fn ticks() -> Option<(u64, u64)> {
    let all = std::fs::read_to_string("/proc/stat").ok()?;
    let v: Vec<u64> = all.lines().next()?.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user, nice, system, irq, softirq, steal
    let busy = [0, 1, 2, 5, 6, 7].iter().filter_map(|&i| v.get(i)).sum();
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = own.get(own.rfind(')')? + 2..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((busy, f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().ok_or("usage: crowd_threads MODEL [THREADS] [ROUNDS]")?);
    let threads: usize = args.next().map_or(Ok(2), |s| s.parse())?;
    let rounds: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let model = Model::load(&path, None, &BakeOptions::default())?;
    for round in 1..=rounds {
        let (t0, w0) = (ticks(), Instant::now());
        let one = bench::crowd_stage(&model, 0, bench::CROWD, 1)?.ns_per_unit;
        let many = bench::crowd_stage(&model, 0, bench::CROWD, threads)?.ns_per_unit;
        let (t1, wall) = (ticks(), w0.elapsed().as_secs_f64());
        let others = match (t0, t1) {
            // Ticks are 1/100 s on Linux.
            (Some((b0, o0)), Some((b1, o1))) => {
                let other = (b1 - b0) as f64 - (o1 - o0) as f64;
                format!(", others {:.0} % of a core", other.max(0.0) / 100.0 / wall * 100.0)
            }
            _ => String::new(),
        };
        println!(
            "round {round}: 1 thread {one:.0} ns/character, {threads} threads {many:.0}: {:.2} ×{others}",
            one / many
        );
    }
    Ok(())
}
