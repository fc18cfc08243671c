//! A build without state machines: no graph can start, so a [`GraphRun`] never exists.

use sinew::math::SoaTransform;

use super::GraphError;
use crate::model::Model;

/// A running graph, of which this build has none.
#[derive(Debug)]
pub enum GraphRun {}

/// The shared scratch of graph updates: nothing in this build.
#[derive(Debug, Default)]
pub struct Scratch;

impl Scratch {
    /// The scratch.
    #[must_use]
    pub const fn new() -> Scratch {
        Scratch
    }
}

impl GraphRun {
    /// Refuses: this build runs no graphs.
    ///
    /// # Errors
    ///
    /// Always, with the message that names the module that does.
    pub fn start(_model: &Model, _index: usize) -> Result<GraphRun, GraphError> {
        Err(GraphError("this module runs no graphs: load sinew_web_graph.wasm".into()))
    }

    /// Never called: no run exists.
    ///
    /// # Errors
    ///
    /// None.
    pub fn set(&mut self, _p: usize, _value: f32) -> Result<(), GraphError> {
        match *self {}
    }

    /// Never called: no run exists.
    #[must_use]
    pub fn value(&self, _p: usize) -> Option<f32> {
        match *self {}
    }

    /// Never called: no run exists.
    #[must_use]
    pub fn state(&self) -> usize {
        match *self {}
    }

    /// Never called: no run exists.
    ///
    /// # Errors
    ///
    /// None.
    pub fn update(
        &mut self,
        _model: &Model,
        _dt: f32,
        _scratch: &mut Scratch,
        _pose: &mut [SoaTransform<f32>],
    ) -> Result<(), GraphError> {
        match *self {}
    }
}
