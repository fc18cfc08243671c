//! sinew's offline pipeline, with no GUI dependency: the glTF 2.0, FBX, BVH and Doom 3 md5 importers
//! ([`import`]) into the host [`rig::Rig`], the baker ([`bake`]) that writes `.sinew` files,
//! materials and images ([`material`]), the host [`model::Model`] that loads any of them and
//! runs the core's jobs (with [`morph`] for morph targets), the built-in procedural rigs
//! ([`builtin`]), animation graph files ([`graph_file`], run by [`graph_run`], baked into `.sinew`
//! files by [`graph_bake`]), the `dump` and `bench` commands' work, the independent measurement
//! of baked clips' errors ([`clip_error`], with the shell distances of [`shells`]) and the
//! compression benchmark ([`compression`]), and retargeting one model's poses onto another
//! ([`retarget`]).

pub mod bake;
pub mod bench;
pub mod builtin;
pub mod clip_error;
pub mod compression;
pub mod dump;
pub mod eval;
pub mod graph_bake;
pub mod graph_file;
pub mod graph_run;
pub mod import;
pub mod material;
pub mod model;
pub mod morph;
pub mod retarget;
pub mod rig;
pub mod shells;
