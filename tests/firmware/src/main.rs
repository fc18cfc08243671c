//! The probe binary.
//!
//! On a bare-metal Cortex-M target (`target_os = "none"`) it is the firmware: it parses the
//! embedded character, builds the skeleton, the graph's lists and the state machine into
//! statics (with the mesh buffers and the spring chain's tails), runs the frames of
//! the `sinew_firmware` library, writes the report through semihosting, then two target-specific
//! lines (`memory …`: the sizes of the character's state and buffers on this target; `stack
//! peak …`: the painted stack's peak during setup and during the frames), and exits QEMU with
//! the run's status. Anything that pulls in `std` or an allocator fails to link there.
//!
//! On the host it writes the same report (without the target-specific lines) to stdout, so the
//! two can be compared line by line.
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
    use core::mem::{size_of, MaybeUninit};
    use core::panic::PanicInfo;

    use cortex_m_rt::{entry, exception, ExceptionFrame};
    use cortex_m_semihosting::{debug, hio};
    use sinew::math::{Mat4, SoaTransform};
    use sinew::raster::CachedVertex;
    use sinew::skeleton::Skeleton;
    use sinew_firmware::{
        report, start, CharacterMachine, CharacterScratch, GraphStorage, MeshBuffers, Probe, ProbeError, Scene,
        SpringState, BAND_LEN, FIXTURE, MAX_VERTICES,
    };

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

    /// Paints the free stack again, from the statics up to a little below the current stack
    /// pointer, so that a later [`stack_use`] measures what ran after this call.
    #[inline(never)]
    fn repaint() {
        let lo = core::ptr::addr_of!(_stack_end) as usize;
        let sp = cortex_m::register::msp::read() as usize;
        let mut a = lo;
        // Leave this function's own frame and a margin alone.
        while a + 256 < sp {
            // SAFETY: `a` is a word-aligned address between the statics and the stack pointer:
            // stack that no live frame uses (no interrupt is enabled).
            unsafe { core::ptr::write_volatile(a as *mut u32, STACK_PAINT) };
            a += 4;
        }
    }

    /// Exits QEMU with `status` through semihosting; parks the core if that returns.
    fn halt(status: debug::ExitStatus) -> ! {
        debug::exit(status);
        loop {
            cortex_m::asm::wfi();
        }
    }

    /// Builds the skeleton into its static. Kept out of line so the temporaries of its
    /// construction leave the stack before the frames run.
    #[inline(never)]
    fn build_skeleton(
        scene: &Scene<'_, Scalar>,
        slot: &'static mut MaybeUninit<Skeleton<Scalar, { Probe::SOA }>>,
    ) -> Result<&'static Skeleton<Scalar, { Probe::SOA }>, ProbeError> {
        Ok(slot.write(scene.skeleton()?))
    }

    /// Reads the graph into the lists of its static and builds the state machine over them in
    /// its static (an empty machine until then), out of line like [`build_skeleton`].
    #[inline(never)]
    fn build_machine(
        scene: &Scene<'static, Scalar>,
        graph: &'static mut MaybeUninit<GraphStorage<'static, Scalar>>,
        machine: &'static mut CharacterMachine<'static, Scalar>,
    ) -> Result<&'static mut CharacterMachine<'static, Scalar>, ProbeError> {
        let graph = graph.write(GraphStorage::new()).load(&scene.graph)?;
        start(machine, scene, graph)?;
        Ok(machine)
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

    /// Runs the frames and writes the report, the memory figures and the peak stack use of the
    /// setup (`setup`, measured by the caller) and of the frames.
    #[inline(never)]
    fn run(
        out: &mut hio::HostStream,
        scene: &Scene<'_, Scalar>,
        skeleton: &Skeleton<Scalar, { Probe::SOA }>,
        machine: &mut CharacterMachine<'_, Scalar>,
        mesh: &mut MeshBuffers<Scalar>,
        springs: &mut SpringState<Scalar>,
        setup: usize,
    ) -> Result<(), Failure> {
        report(out, scene, skeleton.view(), machine, mesh, springs)?;
        let (size, frames) = stack_use();
        // Target-specific figures: run.sh leaves these lines out of the comparison.
        let (machine, pose, palette) = (
            size_of::<CharacterMachine<'_, Scalar>>(),
            size_of::<[SoaTransform<Scalar>; Probe::SOA]>(),
            size_of::<[Mat4<Scalar>; Probe::JOINTS]>(),
        );
        writeln!(
            out,
            "memory character {machine} = state machine {machine}; per frame (shared): pose {pose}, palette \
             {palette}; statics: skeleton {}, graph {}, state machine {machine}, mesh {}, spring tails {}; update \
             stack: controller scratch {}; draw stack: vertex scratch {}, band {}",
            size_of::<Skeleton<Scalar, { Probe::SOA }>>(),
            size_of::<GraphStorage<'_, Scalar>>(),
            size_of::<MeshBuffers<Scalar>>(),
            size_of::<SpringState<Scalar>>(),
            size_of::<CharacterScratch<Scalar>>(),
            size_of::<[CachedVertex; MAX_VERTICES]>(),
            2 * size_of::<[u16; BAND_LEN]>(),
        )?;
        let peak = setup.max(frames);
        writeln!(out, "stack peak {peak} of {size} bytes (setup {setup}, frames {frames})")?;
        if peak >= size {
            return Err(Failure::StackExhausted(size));
        }
        Ok(())
    }

    #[entry]
    fn main() -> ! {
        // Every buffer lives in .bss; cortex-m-rt turns these into `&'static mut` references
        // that only `main` holds.
        static mut SKELETON: MaybeUninit<Skeleton<Scalar, { Probe::SOA }>> = MaybeUninit::uninit();
        static mut GRAPH: MaybeUninit<GraphStorage<'static, Scalar>> = MaybeUninit::uninit();
        static mut MACHINE: CharacterMachine<'static, Scalar> = CharacterMachine::empty();
        static mut MESH: MeshBuffers<Scalar> = MeshBuffers::ZERO;
        static mut SPRINGS: SpringState<Scalar> = SpringState::START;
        let Ok(mut out) = hio::hstdout() else { halt(debug::EXIT_FAILURE) };
        // Setup, then the frames on a freshly painted stack, so each phase's peak is known.
        let result = Scene::<Scalar>::new(FIXTURE).map_err(Failure::from).and_then(|scene| {
            let skeleton = build_skeleton(&scene, SKELETON)?;
            let machine = build_machine(&scene, GRAPH, MACHINE)?;
            let (_, setup) = stack_use();
            repaint();
            run(&mut out, &scene, skeleton, machine, MESH, SPRINGS, setup)
        });
        match result {
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
    use sinew_firmware::{
        report, start, CharacterMachine, GraphStorage, MeshBuffers, ProbeError, Scene, SpringState, FIXTURE,
    };
    let mut out = String::new();
    let mut graph = Box::new(GraphStorage::<Scalar>::new());
    let result = Scene::<Scalar>::new(FIXTURE).and_then(|scene| {
        let skeleton = scene.skeleton()?;
        let mut machine = Box::new(CharacterMachine::empty());
        start(&mut machine, &scene, graph.load(&scene.graph)?)?;
        let mut mesh = Box::new(MeshBuffers::<Scalar>::ZERO);
        let mut springs = SpringState::<Scalar>::START;
        report(&mut out, &scene, skeleton.view(), &mut machine, &mut mesh, &mut springs)?;
        Ok::<(), ProbeError>(())
    });
    print!("{out}");
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
