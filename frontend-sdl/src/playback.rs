//! What both model viewers (`sinew demo` and `sinew soft`) play and how: [`PlaybackOptions`]
//! (the model, its md5 animation, the first clip, an animation graph with its parameter
//! changes, or another model's clips retargeted onto it), their checks, and [`load_viewer`],
//! the one way a viewer's [`Viewer`] is built from them.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::demo::viewer::{PaletteSizes, Viewer};
use crate::retarget::SetupError;
use sinew_offline::graph_run::SetSpec;
use sinew_offline::retarget::RetargetOptions;

/// The model a viewer shows and what drives its pose.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlaybackOptions {
    /// A model to view instead of the built-in scene.
    pub model: Option<PathBuf>,
    /// md5 animation for an `.md5mesh` model.
    pub anim: Option<PathBuf>,
    /// The first clip, by name or index (the retarget source's while retargeting; default:
    /// the first).
    pub clip: Option<String>,
    /// An animation graph file (JSON) driving the model instead of its clips.
    pub graph: Option<PathBuf>,
    /// Scheduled changes of the graph's parameters (`NAME=VALUE@SECONDS` of graph time).
    pub sets: Vec<SetSpec>,
    /// A model (the source) whose clips drive the viewed model through retargeting.
    pub retarget_from: Option<PathBuf>,
    /// The joint map file of the retargeting (default: the automatic humanoid mapping).
    pub retarget_map: Option<PathBuf>,
    /// The retargeting's hips options.
    pub retarget: RetargetOptions,
    /// Start with the retarget source hidden (it is drawn beside the model otherwise).
    pub hide_source: bool,
}

impl PlaybackOptions {
    /// Checks the combinations no viewer can play: a graph, a retarget source or a clip
    /// without a model, a graph with a retarget source or a clip, `--set` without a graph.
    ///
    /// # Errors
    ///
    /// One line naming the options at fault.
    pub fn validate(&self) -> Result<(), String> {
        let model = self.model.is_some();
        if self.graph.is_some() && !model {
            return Err("--graph needs a model to drive".into());
        }
        if self.retarget_from.is_some() && !model {
            return Err("--retarget-from needs a model to drive".into());
        }
        if self.clip.is_some() && !model {
            return Err("--clip needs a model".into());
        }
        if self.retarget_from.is_some() && self.graph.is_some() {
            return Err("--retarget-from and --graph cannot be used together".into());
        }
        if self.clip.is_some() && self.graph.is_some() {
            return Err("--clip and --graph cannot be used together".into());
        }
        if !self.sets.is_empty() && self.graph.is_none() {
            return Err("--set needs --graph".into());
        }
        Ok(())
    }

    /// These options for another model file (one dropped on a viewer's window): the same
    /// graph or retarget source, from the first clip.
    #[must_use]
    pub fn with_model(&self, model: &Path, anim: Option<&Path>) -> PlaybackOptions {
        PlaybackOptions {
            model: Some(model.to_path_buf()),
            anim: anim.map(Path::to_path_buf),
            clip: None,
            ..self.clone()
        }
    }
}

/// Why [`load_viewer`] failed: one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaybackError {
    /// The model cannot be loaded.
    Load {
        /// The model file.
        file: PathBuf,
        /// Why.
        message: String,
    },
    /// The graph file cannot be read, parsed or validated against the model.
    Graph {
        /// The graph file.
        file: PathBuf,
        /// Why.
        message: String,
    },
    /// The retarget source cannot be loaded, or the mapping cannot be set up.
    Retarget(SetupError),
    /// The model whose clips play has no such clip.
    Clip {
        /// That model's file (the retarget source's while retargeting).
        file: PathBuf,
        /// The clip asked for.
        key: String,
    },
}

impl fmt::Display for PlaybackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Load { file, message } => write!(f, "cannot load {}: {message}", file.display()),
            Self::Graph { file, message } => write!(f, "{}: {message}", file.display()),
            Self::Retarget(e) => write!(f, "{e}"),
            Self::Clip { file, key } => write!(f, "{}: no clip named or numbered '{key}'", file.display()),
        }
    }
}

impl std::error::Error for PlaybackError {}

/// The viewer of `opts.model` (`None` without a model: the built-in scene), its parts split
/// by `palette`: loaded with `opts.anim`, driven by `opts.graph` with `opts.sets`, or by the
/// clips of `opts.retarget_from` retargeted onto it (the source shown beside it unless
/// `opts.hide_source`), and playing `opts.clip` when given.
///
/// # Errors
///
/// The first [`PlaybackError`]: the model, the graph, the retarget source or its mapping, or
/// the clip.
pub fn load_viewer(opts: &PlaybackOptions, palette: PaletteSizes) -> Result<Option<Viewer>, PlaybackError> {
    let Some(path) = &opts.model else { return Ok(None) };
    let mut v = Viewer::load(path, opts.anim.as_deref(), palette)
        .map_err(|e| PlaybackError::Load { file: path.clone(), message: e.to_string() })?;
    if let Some(graph) = &opts.graph {
        v.attach_graph(graph, &opts.sets).map_err(|message| PlaybackError::Graph { file: graph.clone(), message })?;
    }
    if let Some(source) = &opts.retarget_from {
        v.attach_retarget(source, opts.retarget_map.as_deref(), opts.retarget, palette)
            .map_err(PlaybackError::Retarget)?;
        if let Some(d) = v.retarget.as_mut() {
            d.show_source = !opts.hide_source;
        }
    }
    if let Some(key) = &opts.clip {
        let Some(clip) = v.clip_model().find_clip(key) else {
            let file = v.retarget.as_ref().map_or(&v.path, |d| &d.path).clone();
            return Err(PlaybackError::Clip { file, key: key.clone() });
        };
        v.select(clip);
    }
    Ok(Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_without_a_model_drive_nothing() {
        let model = || Some(PathBuf::from("fox.glb"));
        let ok = |o: PlaybackOptions| o.validate();
        assert_eq!(ok(PlaybackOptions::default()), Ok(()));
        assert!(ok(PlaybackOptions { graph: Some("g.json".into()), ..Default::default() })
            .is_err_and(|e| e.contains("--graph")));
        assert!(ok(PlaybackOptions { clip: Some("Walk".into()), ..Default::default() })
            .is_err_and(|e| e.contains("--clip")));
        assert!(ok(PlaybackOptions { retarget_from: Some("src.glb".into()), ..Default::default() })
            .is_err_and(|e| e.contains("--retarget-from")));
        let both = PlaybackOptions {
            model: model(),
            graph: Some("g.json".into()),
            retarget_from: Some("src.glb".into()),
            ..Default::default()
        };
        assert!(ok(both).is_err_and(|e| e.contains("together")));
        let clip = PlaybackOptions { model: model(), clip: Some("1".into()), ..Default::default() };
        assert_eq!(ok(clip), Ok(()));
        // Without a model, loading is the built-in scene's: no viewer.
        assert!(load_viewer(&PlaybackOptions::default(), PaletteSizes::same(64)).unwrap().is_none());
    }

    #[test]
    fn another_model_keeps_the_drive_but_not_the_clip() {
        let opts = PlaybackOptions {
            model: Some("a.glb".into()),
            clip: Some("Run".into()),
            retarget_from: Some("src.glb".into()),
            hide_source: true,
            ..Default::default()
        };
        let other = opts.with_model(Path::new("b.md5mesh"), Some(Path::new("b.md5anim")));
        assert_eq!(other.model.as_deref(), Some(Path::new("b.md5mesh")));
        assert_eq!(other.anim.as_deref(), Some(Path::new("b.md5anim")));
        assert_eq!((other.clip, other.retarget_from, other.hide_source), (None, opts.retarget_from, true));
    }

    /// The baked character of the examples (clips walk and run).
    fn character() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/fixtures/character.sinew")
    }

    #[test]
    fn the_viewer_plays_the_clip_asked_for_or_names_the_file_without_it() {
        let sizes = PaletteSizes::same(usize::MAX);
        let opts = PlaybackOptions { model: Some(character()), clip: Some("run".into()), ..Default::default() };
        let v = load_viewer(&opts, sizes).unwrap().unwrap();
        assert_eq!(v.primary().map(|p| p.0), v.model.find_clip("run"));
        assert!(v.graph.is_none() && v.retarget.is_none());
        let missing = PlaybackOptions { clip: Some("jump".into()), ..opts.clone() };
        let e = load_viewer(&missing, sizes).unwrap_err();
        assert_eq!(e, PlaybackError::Clip { file: character(), key: "jump".into() });
        assert!(e.to_string().ends_with("character.sinew: no clip named or numbered 'jump'"), "{e}");
        let unloadable = PlaybackOptions { model: Some(character().with_extension("glb")), ..Default::default() };
        let e = load_viewer(&unloadable, sizes).unwrap_err();
        assert!(matches!(e, PlaybackError::Load { .. }) && e.to_string().starts_with("cannot load "), "{e}");
    }

    #[test]
    fn a_retarget_source_plays_its_clip_hidden_when_asked() {
        let sizes = PaletteSizes::same(usize::MAX);
        let opts = PlaybackOptions {
            model: Some(character()),
            clip: Some("walk".into()),
            retarget_from: Some(character()),
            hide_source: true,
            ..Default::default()
        };
        let v = load_viewer(&opts, sizes).unwrap().unwrap();
        let d = v.retarget.as_ref().expect("retarget drive");
        assert!(!d.show_source);
        assert_eq!(v.primary().map(|p| p.0), d.source.find_clip("walk"));
        let shown = load_viewer(&PlaybackOptions { hide_source: false, ..opts.clone() }, sizes).unwrap().unwrap();
        assert!(shown.retarget.as_ref().is_some_and(|d| d.show_source));
        let missing = std::env::temp_dir().join("sinew_playback_no_such_source.sinew");
        let e = load_viewer(&PlaybackOptions { retarget_from: Some(missing.clone()), ..opts }, sizes).unwrap_err();
        assert!(matches!(&e, PlaybackError::Retarget(s) if s.file == missing), "{e}");
    }
}
