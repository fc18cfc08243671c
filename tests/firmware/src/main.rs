//! The probe binary.
//!
//! On a bare-metal Cortex-M target (`target_os = "none"`) it is the firmware: it runs the scene
//! of the `sinew_firmware` library, writes the report through semihosting, then the peak stack
//! use, and exits QEMU with the run's status. Anything that pulls in `std` fails to link there.
//!
//! On the host it writes the same report to stdout, so the two can be compared line by line.
//!
//! The scalar is `f32`, or Q16.16 with the `q16` feature.

#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

#[cfg(not(feature = "q16"))]
type Scalar = f32;
#[cfg(feature = "q16")]
type Scalar = sinew::Q16;

#[cfg(target_os = "none")]
mod firmware {
    use core::fmt::Write;
    use core::panic::PanicInfo;

    use cortex_m_rt::{entry, exception, ExceptionFrame};
    use cortex_m_semihosting::{debug, hio};
    use sinew::skeleton::Skeleton;
    use sinew_firmware::{build_skeleton, report, Probe, ProbeError, SOA};

    use super::Scalar;

    /// The word cortex-m-rt's `paint-stack` feature fills the stack with before `main`.
    const STACK_PAINT: u32 = 0xcccc_cccc;

    extern "C" {
        // Bounds of the stack, from cortex-m-rt's link.x: it grows down from `_stack_start`
        // towards `_stack_end`, the end of the statics.
        static _stack_start: u32;
        static _stack_end: u32;
    }

    /// The stack's size and the bytes of it written since reset: the distance from its top to
    /// the lowest word that no longer holds the paint.
    fn stack_use() -> (usize, usize) {
        let lo = core::ptr::addr_of!(_stack_end) as usize;
        let hi = core::ptr::addr_of!(_stack_start) as usize;
        let mut a = lo;
        while a < hi {
            // SAFETY: `a` is a word-aligned address inside the RAM between the statics and the
            // top of the stack, which the runtime painted and which stays mapped.
            let w = unsafe { core::ptr::read_volatile(a as *const u32) };
            if w != STACK_PAINT {
                break;
            }
            a += 4;
        }
        (hi - lo, hi - a)
    }

    /// Exits QEMU with `status` through semihosting; parks the core if that returns.
    fn halt(status: debug::ExitStatus) -> ! {
        debug::exit(status);
        loop {
            cortex_m::asm::wfi();
        }
    }

    /// Builds the skeleton into `slot`. Kept out of line so the temporaries of its
    /// construction leave the stack before the frames run.
    #[inline(never)]
    fn build(slot: &mut Option<Skeleton<Scalar, SOA>>) -> Result<(), ProbeError> {
        *slot = Some(build_skeleton::<Scalar>()?);
        Ok(())
    }

    /// Why the firmware failed.
    enum Failure {
        Probe(ProbeError),
        /// The stack reached the statics below it: it may have overwritten them.
        StackExhausted(usize),
    }

    impl From<ProbeError> for Failure {
        fn from(e: ProbeError) -> Self {
            Failure::Probe(e)
        }
    }

    impl From<core::fmt::Error> for Failure {
        fn from(_: core::fmt::Error) -> Self {
            Failure::Probe(ProbeError::Output)
        }
    }

    impl core::fmt::Display for Failure {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            match self {
                Failure::Probe(e) => write!(f, "{e}"),
                Failure::StackExhausted(size) => {
                    write!(f, "the whole {size}-byte stack was used: it may have overflowed")
                }
            }
        }
    }

    #[inline(never)]
    fn run(
        out: &mut hio::HostStream,
        slot: &mut Option<Skeleton<Scalar, SOA>>,
        probe: &mut Probe<Scalar>,
    ) -> Result<(), Failure> {
        build(slot)?;
        let Some(skeleton) = slot.as_ref() else { return Err(ProbeError::WrongSkeleton.into()) };
        report(out, skeleton.view(), probe)?;
        let (size, peak) = stack_use();
        writeln!(out, "stack peak {peak} of {size} bytes")?;
        if peak >= size {
            return Err(Failure::StackExhausted(size));
        }
        Ok(())
    }

    #[entry]
    fn main() -> ! {
        // The skeleton, the mesh and every output buffer live in .bss; cortex-m-rt turns these
        // into `&'static mut` references that only `main` holds.
        static mut SKELETON: Option<Skeleton<Scalar, SOA>> = None;
        static mut PROBE: Probe<Scalar> = Probe::ZERO;
        let Ok(mut out) = hio::hstdout() else { halt(debug::EXIT_FAILURE) };
        match run(&mut out, SKELETON, PROBE) {
            Ok(()) => halt(debug::EXIT_SUCCESS),
            Err(e) => {
                let _ = writeln!(out, "error: {e}");
                halt(debug::EXIT_FAILURE)
            }
        }
    }

    #[exception]
    unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
        if let Ok(mut err) = hio::hstderr() {
            let _ = writeln!(err, "hard fault at pc {:#010x}", frame.pc());
        }
        halt(debug::EXIT_FAILURE)
    }

    #[exception]
    unsafe fn DefaultHandler(irqn: i16) {
        if let Ok(mut err) = hio::hstderr() {
            let _ = writeln!(err, "unexpected exception {irqn}");
        }
        halt(debug::EXIT_FAILURE)
    }

    #[panic_handler]
    fn panic(info: &PanicInfo) -> ! {
        if let Ok(mut err) = hio::hstderr() {
            let _ = writeln!(err, "panic: {info}");
        }
        halt(debug::EXIT_FAILURE)
    }
}

#[cfg(not(target_os = "none"))]
fn main() -> std::process::ExitCode {
    let mut out = String::new();
    let result = sinew_firmware::build_skeleton::<Scalar>().map_err(sinew_firmware::ProbeError::from).and_then(|s| {
        let mut probe = Box::new(sinew_firmware::Probe::<Scalar>::ZERO);
        sinew_firmware::report(&mut out, s.view(), &mut probe)
    });
    print!("{out}");
    match result {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
