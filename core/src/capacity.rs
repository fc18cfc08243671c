//! A character's capacities, spelled once: the [`Capacity`] a
//! [`Controller`](crate::controller::Controller), a [`StateMachine`](crate::graph::StateMachine)
//! or a [`LayeredStateMachine`](crate::graph::LayeredStateMachine) takes its fixed sizes from.
//!
//! # Declaring one
//!
//! [`capacity!`](crate::capacity!) declares a unit struct with its numbers by name:
//!
//! ```
//! use sinew::controller::{Controller, ControllerScratch};
//! use sinew::math::Mat4;
//! use sinew::skeleton::Skeleton;
//!
//! sinew::capacity! {
//!     /// The hero: 24 joints, two clips crossfading, one upper-body layer, four parameters.
//!     pub struct Hero { joints: 24, slots: 2, layers: 2, params: 4 }
//! }
//!
//! let character = Controller::<f32, Hero>::new();
//! let scratch = ControllerScratch::<f32, Hero>::new();
//! // The numbers are constants of the type, for the buffers the caller owns:
//! let _skeleton: Option<Skeleton<f32, { Hero::SOA }>> = None;
//! let _matrices = [Mat4::<f32>::IDENTITY; Hero::JOINTS];
//! assert_eq!((Hero::SOA, Hero::TRACKS), (6, 72)); // ⌈24 / 4⌉ SoA elements, 3 × 24 tracks
//! # let _ = (character, scratch);
//! ```
//!
//! The fields come in this order: `joints` and `slots` (required), then `layers` (default 1),
//! `tracks` (default 3 × joints: a translation, a rotation and a scale track per joint covers
//! any clip), `params` (default 0: graph parameters, for the state machines), each optional.
//! [`Embedded`], [`Humanoid`] and [`LargeRig`] are ready-made.
//!
//! # What it gives
//!
//! The numbers as associated constants (`JOINTS`, `SOA` = `soa_count(JOINTS)`, `SLOTS`,
//! `LAYERS`, `TRACKS`, `PARAMS`; the macro also makes them inherent, so `Hero::SOA` needs no
//! import), and one storage type per dimension, [`Capacity::PerSoa`], [`Capacity::PerSlot`],
//! [`Capacity::PerLayer`], [`Capacity::PerTrack`], [`Capacity::PerParam`]: a plain array
//! `[T; N]` of that length, as a generic associated type. Stable Rust cannot write
//! `[T; C::SOA]` in a type generic over `C`; it can name `C::PerSoa<T>`, which the capacity's
//! own `impl` defines as `[T; 6]`. The containers' fields are these arrays, so their memory is
//! that of the arrays a positional `Controller<R, 6, 2, 1, 72>` held, and
//! [`Element::INIT`] (`[T::INIT; N]`) keeps their constructors `const fn`: a firmware's
//! `static mut MACHINE: Machine = Machine::empty()` is built at compile time.
//!
//! A hand-written `impl Capacity` is possible; its containers check at compile time, when a
//! constructor is instantiated, that each storage type's [`Buf::LEN`] is its constant, that
//! `SOA` is `soa_count(JOINTS)` and at most [`MAX_SOA_JOINTS`], and that `LAYERS ≥ 1`
//! ([`check`]).
//!
//! # Memory of the ready-made capacities
//!
//! On x86_64 (`ready_made_capacity_memory` in the controller's tests asserts these sizes);
//! `Q16` is the same size as `f32`:
//!
//! | capacity      | joints | slots | layers | params | `Controller<f32, _>` | `ControllerScratch<f32, _>` | `StateMachine<f32, _>` |
//! |---------------|--------|-------|--------|--------|----------------------|-----------------------------|------------------------|
//! | [`Embedded`]  | 24     | 3     | 1      | 4      | 1 184 B              | 2 976 B                     | 4 128 B                |
//! | [`Humanoid`]  | 80     | 4     | 2      | 8      | 3 432 B              | 13 440 B                    | 12 688 B               |
//! | [`LargeRig`]  | 256    | 8     | 4      | 32     | 18 072 B             | 86 016 B                    | 47 232 B               |
//!
//! (`StateMachine<f32, C>` holds a `Controller<f32, C>`: its extra layers are unused by a
//! single-graph machine; a [`LayeredStateMachine`](crate::graph::LayeredStateMachine) gives each
//! of its layers a one-layer machine, [`OneLayer<C>`].)

use core::fmt::Debug;
use core::marker::PhantomData;

use crate::limits::{soa_count, MAX_SOA_JOINTS};

/// A value the fixed-capacity containers store: [`Clone`], [`Debug`] and a constant initial
/// value, [`Element::INIT`], which a fresh [`Buf`] holds in every element.
///
/// Implemented for the integers and `bool` (0, `false`), `Option<T>` (`None`), arrays of
/// elements (each element's `INIT`), every [`Real`](crate::Real) (0) and the runtime's stored
/// types (a [`SoaTransform`](crate::math::SoaTransform) is the identity).
pub trait Element: Clone + Debug {
    /// The value a fresh buffer holds.
    const INIT: Self;
}

macro_rules! zero_element {
    ($($t:ty),*) => {
        $(impl Element for $t {
            const INIT: Self = 0;
        })*
    };
}
zero_element!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl Element for bool {
    const INIT: Self = false;
}

impl<T: Clone + Debug> Element for Option<T> {
    const INIT: Self = None;
}

impl<T: Element, const N: usize> Element for [T; N] {
    const INIT: Self = [const { T::INIT }; N];
}

/// A fixed-length buffer of `T`: what a [`Capacity`]'s storage types are. Implemented once,
/// for the arrays `[T; N]`; its constant initial value is [`Element::INIT`] (every element
/// `T::INIT`), for `const fn` constructors.
pub trait Buf<T>: Element + AsRef<[T]> + AsMut<[T]> {
    /// Its length.
    const LEN: usize;
    /// The buffer whose element `i` is `f(i)`.
    fn from_fn(f: impl FnMut(usize) -> T) -> Self;
}

impl<T: Element, const N: usize> Buf<T> for [T; N] {
    const LEN: usize = N;
    fn from_fn(f: impl FnMut(usize) -> T) -> Self {
        core::array::from_fn(f)
    }
}

/// A character's fixed capacities and the buffers they size. Declare one with
/// [`capacity!`](crate::capacity!) (see the [module documentation](self)).
pub trait Capacity: Copy + Debug + Default + Eq + Send + Sync + 'static {
    /// Most joints of the skeleton.
    const JOINTS: usize;
    /// Pose capacity in SoA elements of four joints: `soa_count(JOINTS)`, at most
    /// [`MAX_SOA_JOINTS`].
    const SOA: usize;
    /// Clip slots (each plays one clip).
    const SLOTS: usize;
    /// Layers, the base included (at least 1).
    const LAYERS: usize;
    /// Most tracks of a clip (a slot's key cursors; 3 × joints covers any clip).
    const TRACKS: usize;
    /// Most graph parameters.
    const PARAMS: usize;
    /// Whether controllers of this capacity extract root motion
    /// ([`Controller::set_root_motion`](crate::controller::Controller::set_root_motion)).
    /// Without it the extraction is not compiled into their updates, and turning it on is
    /// refused.
    const ROOT_MOTION: bool = true;
    /// Whether controllers of this capacity have additive layers
    /// ([`LayerMode::Additive`](crate::controller::LayerMode::Additive)). Without it their
    /// updates blend override layers only, and an additive layer is refused.
    const ADDITIVE: bool = true;

    /// `[T; SOA]`.
    type PerSoa<T: Element>: Buf<T>;
    /// `[T; SLOTS]`.
    type PerSlot<T: Element>: Buf<T>;
    /// `[T; LAYERS]`.
    type PerLayer<T: Element>: Buf<T>;
    /// `[T; TRACKS]`.
    type PerTrack<T: Element>: Buf<T>;
    /// `[T; PARAMS]`.
    type PerParam<T: Element>: Buf<T>;
}

/// Panics (at compile time when called in a `const` block) unless `C` is consistent: `SOA` is
/// `soa_count(JOINTS)` and at most [`MAX_SOA_JOINTS`], `LAYERS ≥ 1`, and each storage type's
/// length is its constant. Every container's constructor checks its capacity with it; the
/// [`capacity!`](crate::capacity!) macro also checks at the declaration.
pub const fn check<C: Capacity>() {
    assert!(C::SOA == soa_count(C::JOINTS), "Capacity: SOA must be soa_count(JOINTS)");
    assert!(C::SOA <= MAX_SOA_JOINTS, "Capacity: SOA exceeds limits::MAX_SOA_JOINTS");
    assert!(C::LAYERS >= 1, "Capacity: at least one layer is needed");
    assert!(<C::PerSoa<u8> as Buf<u8>>::LEN == C::SOA, "Capacity: PerSoa's length is not SOA");
    assert!(<C::PerSlot<u8> as Buf<u8>>::LEN == C::SLOTS, "Capacity: PerSlot's length is not SLOTS");
    assert!(<C::PerLayer<u8> as Buf<u8>>::LEN == C::LAYERS, "Capacity: PerLayer's length is not LAYERS");
    assert!(<C::PerTrack<u8> as Buf<u8>>::LEN == C::TRACKS, "Capacity: PerTrack's length is not TRACKS");
    assert!(<C::PerParam<u8> as Buf<u8>>::LEN == C::PARAMS, "Capacity: PerParam's length is not PARAMS");
}

/// `C` with a single layer: the capacity of each layer's [`StateMachine`] in a
/// [`LayeredStateMachine<R, C>`](crate::graph::LayeredStateMachine) (a state machine plays on
/// its controller's base layer only).
///
/// [`StateMachine`]: crate::graph::StateMachine
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct OneLayer<C>(PhantomData<C>);

impl<C: Capacity> Capacity for OneLayer<C> {
    const JOINTS: usize = C::JOINTS;
    const SOA: usize = C::SOA;
    const SLOTS: usize = C::SLOTS;
    const LAYERS: usize = 1;
    const TRACKS: usize = C::TRACKS;
    const PARAMS: usize = C::PARAMS;
    type PerSoa<T: Element> = C::PerSoa<T>;
    type PerSlot<T: Element> = C::PerSlot<T>;
    type PerLayer<T: Element> = [T; 1];
    type PerTrack<T: Element> = C::PerTrack<T>;
    type PerParam<T: Element> = C::PerParam<T>;
}

/// Declares a [`Capacity`]: a unit struct (deriving `Debug`, `Clone`, `Copy`, `Default`,
/// `PartialEq`, `Eq`, `Hash`) with the capacities as inherent and [`Capacity`] constants.
///
/// ```
/// sinew::capacity! {
///     /// A crowd member: 24 joints, two slots, the default single layer and 3 × 24 tracks.
///     pub struct Crowd { joints: 24, slots: 2 }
/// }
/// sinew::capacity! {
///     /// Every field: joints and slots, then layers, tracks and params, each optional.
///     pub struct Boss { joints: 96, slots: 6, layers: 3, tracks: 200, params: 12 }
/// }
/// assert_eq!((Crowd::SOA, Crowd::LAYERS, Crowd::TRACKS, Crowd::PARAMS), (6, 1, 72, 0));
/// assert_eq!((Boss::SOA, Boss::TRACKS), (24, 200));
/// ```
///
/// A capacity past the limits is refused at compile time:
///
/// ```compile_fail
/// sinew::capacity! { pub struct Nobody { joints: 24, slots: 2, layers: 0 } }
/// ```
#[macro_export]
macro_rules! capacity {
    (@or , $default:expr) => {
        $default
    };
    (@or $value:expr, $default:expr) => {
        $value
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            joints: $joints:expr,
            slots: $slots:expr
            $(, layers: $layers:expr)?
            $(, tracks: $tracks:expr)?
            $(, params: $params:expr)?
            $(, root_motion: $root_motion:expr)?
            $(, additive: $additive:expr)?
            $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        $vis struct $name;

        impl $name {
            /// Most joints of the skeleton.
            pub const JOINTS: usize = $joints;
            /// Pose capacity in SoA elements: `soa_count(JOINTS)`.
            pub const SOA: usize = $crate::limits::soa_count($name::JOINTS);
            /// Clip slots.
            pub const SLOTS: usize = $slots;
            /// Layers, the base included.
            pub const LAYERS: usize = $crate::capacity!(@or $($layers)?, 1);
            /// Most tracks of a clip.
            pub const TRACKS: usize = $crate::capacity!(@or $($tracks)?, 3 * $name::JOINTS);
            /// Most graph parameters.
            pub const PARAMS: usize = $crate::capacity!(@or $($params)?, 0);
            /// Whether its controllers extract root motion.
            pub const ROOT_MOTION: bool = $crate::capacity!(@or $($root_motion)?, true);
            /// Whether its controllers have additive layers.
            pub const ADDITIVE: bool = $crate::capacity!(@or $($additive)?, true);
        }

        impl $crate::capacity::Capacity for $name {
            const JOINTS: usize = $name::JOINTS;
            const SOA: usize = $name::SOA;
            const SLOTS: usize = $name::SLOTS;
            const LAYERS: usize = $name::LAYERS;
            const TRACKS: usize = $name::TRACKS;
            const PARAMS: usize = $name::PARAMS;
            const ROOT_MOTION: bool = $name::ROOT_MOTION;
            const ADDITIVE: bool = $name::ADDITIVE;
            type PerSoa<T: $crate::capacity::Element> = [T; $name::SOA];
            type PerSlot<T: $crate::capacity::Element> = [T; $name::SLOTS];
            type PerLayer<T: $crate::capacity::Element> = [T; $name::LAYERS];
            type PerTrack<T: $crate::capacity::Element> = [T; $name::TRACKS];
            type PerParam<T: $crate::capacity::Element> = [T; $name::PARAMS];
        }

        const _: () = $crate::capacity::check::<$name>();
    };
}

capacity! {
    /// A small embedded character (the firmware probe's skeleton and slots): 24 joints, 3 slots
    /// (a two-clip blend space and a crossfade's third clip), one layer, 72 tracks (any clip of
    /// 24 joints), 4 graph parameters.
    pub struct Embedded { joints: 24, slots: 3, params: 4 }
}

capacity! {
    /// A humanoid game character: 80 joints (Mixamo's 65, a VRM humanoid's 55 or so, the UE4
    /// mannequin's 68, with room for a few props), 4 slots, 2 layers (base and an upper-body
    /// override), 240 tracks, 8 graph parameters.
    pub struct Humanoid { joints: 80, slots: 4, layers: 2, params: 8 }
}

capacity! {
    /// A large rig (faces, fingers, cloth joints, the UE5 mannequin's 90-odd bones and more):
    /// 256 joints, 8 slots, 4 layers, 768 tracks, 32 graph parameters.
    pub struct LargeRig { joints: 256, slots: 8, layers: 4, params: 32 }
}
