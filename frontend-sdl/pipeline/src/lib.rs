//! sinew's offline pipeline, with no GUI dependency: the glTF 2.0 and Doom 3 md5 importers
//! ([`import`]) into the host [`rig::Rig`], the baker ([`bake`]) that writes `.sinew` files,
//! the host [`model::Model`] that loads any of them and runs the core's jobs (with [`morph`]
//! for morph targets), the built-in
//! procedural rigs ([`builtin`]), and the `dump` and `bench` commands' work.

pub mod bake;
pub mod bench;
pub mod builtin;
pub mod dump;
pub mod eval;
pub mod import;
pub mod model;
pub mod morph;
pub mod rig;
