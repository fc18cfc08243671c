//! The graphs' runtime: the decoded lists and the state machine over them.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;

use sinew::asset::{GraphBuffers, GraphData, LayerBuffers};
use sinew::graph::{
    BlendPoint, Condition, GraphLayer, LayeredScratch, LayeredStateMachine, Parameter, ParameterKind, State, Transition,
};
use sinew::job::mask::Channel;
use sinew::math::SoaTransform;

use super::GraphError;
use crate::model::Model;

sinew::capacity! {
    /// The capacity graphs run at: up to [`RUNTIME_JOINTS`](crate::limits::RUNTIME_JOINTS)
    /// joints, 4 clip slots (a crossfade's, or a blend space's), a base and one more layer, 16
    /// parameters. The state machines and their shared scratch are sized by it.
    pub struct GraphRig { joints: crate::limits::RUNTIME_JOINTS, slots: 4, layers: 2, params: 16 }
}
/// The state machine a [`GraphRun`] holds.
pub type Machine = LayeredStateMachine<'static, f32, GraphRig>;
/// The scratch every graph update of the module shares (one thread).
pub type Scratch = LayeredScratch<f32, GraphRig>;

/// The decoded lists a graph borrows.
struct Store {
    parameters: Vec<Parameter<'static, f32>>,
    states: Vec<State<'static>>,
    transitions: Vec<Transition<f32>>,
    points: Vec<BlendPoint<f32>>,
    conditions: Vec<Condition<f32>>,
    channels: Vec<Channel>,
    layers: Vec<GraphLayer<'static, f32>>,
}

impl Store {
    /// Lists as long as the graph's base and layers need together.
    fn sized_for(data: &GraphData<'_>) -> Store {
        let mut counts = [0usize; 5];
        for k in 0..=data.num_layers() {
            let (m, channels) = match k {
                0 => (*data, 0),
                k => match data.layer(k) {
                    Some(l) => (l.machine(), l.num_channels()),
                    None => continue,
                },
            };
            for (n, c) in counts.iter_mut().zip([
                m.num_states(),
                m.num_transitions(),
                m.num_points(),
                m.num_conditions(),
                channels,
            ]) {
                *n += c;
            }
        }
        Store {
            parameters: vec![Parameter::default(); data.num_parameters()],
            states: vec![State::default(); counts[0]],
            transitions: vec![Transition::default(); counts[1]],
            points: vec![BlendPoint::default(); counts[2]],
            conditions: vec![Condition::default(); counts[3]],
            channels: vec![Channel::subtree(0, 0); counts[4]],
            layers: vec![GraphLayer::default(); data.num_layers()],
        }
    }
}

/// A running graph: the state machine and the buffers its graph borrows.
pub struct GraphRun {
    /// The state machine; dropped before `store` is released.
    machine: ManuallyDrop<Machine>,
    /// The graph's lists, owned here (`Box::into_raw`) and released in `drop`.
    store: NonNull<Store>,
    /// Index of the graph in its file.
    pub index: usize,
}

impl core::fmt::Debug for GraphRun {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GraphRun").field("index", &self.index).finish_non_exhaustive()
    }
}

impl Drop for GraphRun {
    fn drop(&mut self) {
        // SAFETY: the machine borrowing the store goes first; the store came from
        // `Box::into_raw` in `start` and is released once.
        unsafe {
            ManuallyDrop::drop(&mut self.machine);
            drop(Box::from_raw(self.store.as_ptr()));
        }
    }
}

impl GraphRun {
    /// Starts graph `index` of `model` in its initial state.
    ///
    /// # Errors
    ///
    /// A one-line message: no such graph, a model too large for [`GraphRig`], or what the
    /// graph's validation finds.
    pub fn start(model: &Model, index: usize) -> Result<GraphRun, GraphError> {
        let data = model
            .asset
            .graph(index)
            .ok_or_else(|| GraphError(format!("no graph {index} (the file has {})", model.asset.num_graphs())))?;
        if model.skeleton().num_soa_joints() > GraphRig::SOA {
            return Err(GraphError(format!(
                "the model has {} joints; graphs run on at most {}",
                model.num_joints(),
                GraphRig::JOINTS
            )));
        }
        let store = NonNull::from(Box::leak(Box::new(Store::sized_for(&data))));
        // SAFETY: `store` is the leaked box, alive until this run's drop (or the error path
        // below); the graph and machine borrowing it live inside the run.
        let s: &'static mut Store = unsafe { &mut *store.as_ptr() };
        let buffers = GraphBuffers {
            parameters: &mut s.parameters,
            states: &mut s.states,
            transitions: &mut s.transitions,
            points: &mut s.points,
            conditions: &mut s.conditions,
        };
        let layers = LayerBuffers { channels: &mut s.channels, layers: &mut s.layers };
        let machine = data
            .to_layered(buffers, layers, model.clips.len())
            .map_err(|e| e.to_string())
            .and_then(|graph| Machine::new(graph, &model.clips).map_err(|e| e.to_string()));
        match machine {
            Ok(machine) => Ok(GraphRun { machine: ManuallyDrop::new(machine), store, index }),
            Err(e) => {
                let e = GraphError(e);
                // SAFETY: nothing borrows the store on this path.
                drop(unsafe { Box::from_raw(store.as_ptr()) });
                Err(e)
            }
        }
    }

    /// Sets parameter `p` to `value`: a float as is, a bool as `value != 0`, a trigger fired
    /// (`value != 0`) or cleared.
    ///
    /// # Errors
    ///
    /// The machine's message for a parameter it does not have.
    pub fn set(&mut self, p: usize, value: f32) -> Result<(), GraphError> {
        let kind = self.machine.graph().base.parameters.get(p).map(|p| p.kind);
        let r = match kind {
            Some(ParameterKind::Float(_)) => self.machine.set_float(p, value),
            Some(ParameterKind::Bool(_)) => self.machine.set_bool(p, value != 0.0),
            Some(ParameterKind::Trigger) | None => self.machine.fire(p, value != 0.0),
        };
        r.map_err(|e| GraphError(e.to_string()))
    }

    /// The current value of parameter `p` (bools and triggers as 0 or 1).
    #[must_use]
    pub fn value(&self, p: usize) -> Option<f32> {
        self.machine.value(p)
    }

    /// The base layer's current state.
    #[must_use]
    pub fn state(&self) -> usize {
        self.machine.machine(0).map_or(0, sinew::graph::StateMachine::current_state)
    }

    /// Advances the graph by `dt` seconds into `pose`.
    ///
    /// # Errors
    ///
    /// What the machine refuses.
    pub fn update(
        &mut self,
        model: &Model,
        dt: f32,
        scratch: &mut Scratch,
        pose: &mut [SoaTransform<f32>],
    ) -> Result<(), GraphError> {
        self.machine
            .update(dt, &model.clips, model.skeleton(), scratch, pose, |_| {})
            .map_err(|e| GraphError(e.to_string()))
    }
}
