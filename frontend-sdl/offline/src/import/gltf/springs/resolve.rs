//! From the file's springs to [`ResolvedSpringJoint`]s: each head joint's tail at rest, its
//! spring's colliders, and the run order of three-vrm's `VRMSpringBoneManager._sortJoints`.

use crate::rig::RigJoint;

use super::model::{ResolvedSpringJoint, Spring, SpringCollider, SpringColliderGroup, SpringParams};

/// Most steps (nodes walked and joints listed) [`run_order`] takes before it gives up: real
/// models take thousands; a file whose springs collide with colliders deep in long chains can
/// ask for joints × depth.
pub(super) const ORDER_BUDGET: usize = 1 << 24;

/// Length of the virtual tail of a VRM 0.x leaf joint (three-vrm's `setInitState`: 7 cm along
/// the joint's own rest translation).
pub(super) const VIRTUAL_TAIL: f64 = 0.07;

/// The rig's hierarchy: children in joint order, a depth-first numbering for ancestor tests.
pub(super) struct Tree<'a> {
    pub(super) joints: &'a [RigJoint],
    /// Children of each joint, in joint order (file order for glTF).
    pub(super) children: Vec<Vec<usize>>,
    /// Position of each joint in a depth-first walk.
    pre: Vec<usize>,
    /// One past the last position of each joint's subtree in that walk.
    end: Vec<usize>,
}

impl<'a> Tree<'a> {
    /// The hierarchy of `joints` (parents before children).
    pub(super) fn new(joints: &'a [RigJoint]) -> Self {
        let n = joints.len();
        let mut children = vec![Vec::new(); n];
        for (j, joint) in joints.iter().enumerate() {
            if let Some(c) = joint.parent.and_then(|p| children.get_mut(p)) {
                c.push(j);
            }
        }
        let mut pre = vec![0; n];
        let mut end = vec![0; n];
        let mut next = 0;
        for root in (0..n).filter(|&j| joints.get(j).is_some_and(|r| r.parent.is_none_or(|p| p >= n))) {
            // Depth-first: a joint's position when it is first met, its end when it is left.
            let mut stack = vec![(root, false)];
            while let Some((j, left)) = stack.pop() {
                if left {
                    if let Some(e) = end.get_mut(j) {
                        *e = next;
                    }
                    continue;
                }
                if let Some(p) = pre.get_mut(j) {
                    *p = next;
                }
                next += 1;
                stack.push((j, true));
                if let Some(c) = children.get(j) {
                    stack.extend(c.iter().rev().map(|&k| (k, false)));
                }
            }
        }
        Tree { joints, children, pre, end }
    }

    /// True when `a` is `b` or one of its ancestors.
    pub(super) fn is_ancestor_or_self(&self, a: usize, b: usize) -> bool {
        match (self.pre.get(a), self.end.get(a), self.pre.get(b)) {
            (Some(&pa), Some(&ea), Some(&pb)) => pa <= pb && pb < ea,
            _ => false,
        }
    }

    /// The parent of `j`.
    pub(super) fn parent(&self, j: usize) -> Option<usize> {
        self.joints.get(j).and_then(|r| r.parent)
    }

    /// `j`'s subtree depth-first, children in order, `j` first.
    pub(super) fn subtree(&self, j: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![j];
        while let Some(k) = stack.pop() {
            out.push(k);
            if let Some(c) = self.children.get(k) {
                stack.extend(c.iter().rev());
            }
        }
        out
    }
}

/// A joint that sways, before resolution: its tail joint (if any), parameters and spring.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    pub(super) joint: usize,
    pub(super) child: Option<usize>,
    pub(super) params: SpringParams,
    pub(super) spring: usize,
}

/// The heads, in the order they were made (springs in file order, joints in order), resolved and
/// put in run order. Zero-length tails and circular dependencies are noted.
pub(super) fn resolve(
    tree: &Tree<'_>,
    heads: &[Head],
    springs: &[Spring],
    groups: &[SpringColliderGroup],
    colliders: &[SpringCollider],
    notes: &mut Vec<String>,
    source: &str,
) -> Vec<ResolvedSpringJoint> {
    let joint_name = |j: usize| tree.joints.get(j).map_or("?", |r| r.name.as_str());
    let mut resolved: Vec<ResolvedSpringJoint> = Vec::with_capacity(heads.len());
    for h in heads {
        let tail = match h.child {
            Some(c) => child_position(tree, h.joint, c),
            None => virtual_tail(tree, h.joint),
        };
        if tail == [0.0; 3] {
            notes.push(format!(
                "{source}: joint '{}' has its tail at its own position; a runtime cannot aim it",
                joint_name(h.joint)
            ));
        }
        let spring = springs.get(h.spring);
        let colliders_of_spring = spring
            .map(|s| s.collider_groups.iter().filter_map(|&g| groups.get(g)).flat_map(|g| g.colliders.iter().copied()))
            .into_iter()
            .flatten()
            .collect();
        resolved.push(ResolvedSpringJoint {
            joint: h.joint,
            child: h.child,
            tail,
            params: h.params,
            center: spring.and_then(|s| s.center),
            colliders: colliders_of_spring,
            spring: h.spring,
        });
    }
    let (order, circular) = match run_order(tree, &resolved, colliders) {
        Some(found) => found,
        None => {
            notes.push(format!(
                "{source}: the joints' dependencies take more than {ORDER_BUDGET} steps to sort; they \
                 run parents first, in joint order, and not after their colliders' spring joints"
            ));
            let mut by_joint: Vec<usize> = (0..resolved.len()).collect();
            by_joint.sort_by_key(|&i| resolved.get(i).map(|r| r.joint));
            (by_joint, false)
        }
    };
    if circular {
        notes.push(format!(
            "{source}: the joints depend on each other in a circle (a collider on a joint of its own \
             spring or below one); they run in three-vrm's order"
        ));
    }
    let mut slots: Vec<Option<ResolvedSpringJoint>> = resolved.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots.get_mut(i).and_then(Option::take)).collect()
}

/// Position of `child`, a descendant of `joint`, in `joint`'s space at rest: the rest transforms
/// from `child` up to (not including) `joint` applied to the origin, in `f64`.
fn child_position(tree: &Tree<'_>, joint: usize, child: usize) -> [f32; 3] {
    let mut p = [0.0f64; 3];
    let mut cur = Some(child);
    while let Some(k) = cur {
        if k == joint {
            break;
        }
        let Some(j) = tree.joints.get(k) else { break };
        p = apply(&j.rest, p);
        cur = j.parent;
    }
    p.map(|v| v as f32)
}

/// `t.translation + t.rotation × (t.scale ⊙ p)`, in `f64`.
fn apply(t: &sinew::math::Transform<f32>, p: [f64; 3]) -> [f64; 3] {
    let s = [f64::from(t.scale.x), f64::from(t.scale.y), f64::from(t.scale.z)];
    let v = [p[0] * s[0], p[1] * s[1], p[2] * s[2]];
    let (x, y, z, w) =
        (f64::from(t.rotation.x), f64::from(t.rotation.y), f64::from(t.rotation.z), f64::from(t.rotation.w));
    // v + 2w (q × v) + 2 q × (q × v), q = (x, y, z).
    let c1 = [y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]];
    let c2 = [y * c1[2] - z * c1[1], z * c1[0] - x * c1[2], x * c1[1] - y * c1[0]];
    let r = [v[0] + 2.0 * (w * c1[0] + c2[0]), v[1] + 2.0 * (w * c1[1] + c2[1]), v[2] + 2.0 * (w * c1[2] + c2[2])];
    [r[0] + f64::from(t.translation.x), r[1] + f64::from(t.translation.y), r[2] + f64::from(t.translation.z)]
}

/// The virtual tail of a VRM 0.x leaf: its rest translation normalized and scaled to
/// [`VIRTUAL_TAIL`] (zero for a zero translation, as three.js normalizes one).
fn virtual_tail(tree: &Tree<'_>, joint: usize) -> [f32; 3] {
    let Some(j) = tree.joints.get(joint) else { return [0.0; 3] };
    let t = [f64::from(j.rest.translation.x), f64::from(j.rest.translation.y), f64::from(j.rest.translation.z)];
    let len = (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]).sqrt();
    if len == 0.0 {
        return [0.0; 3];
    }
    t.map(|v| (v / len * VIRTUAL_TAIL) as f32)
}

/// The run order of `joints` (indices into it), as three-vrm's `_sortJoints` makes it from the
/// same joints added in the same order, and whether it met a circular dependency; `None` past
/// [`ORDER_BUDGET`] steps.
///
/// three-vrm visits the joints in the order they were added; a joint first visits its
/// dependencies (its parent's chain from the root down, then each of its colliders' node chains
/// from the root down) and every spring joint on those nodes (in the order added), then takes
/// the next place. A joint met again while its own visit is open is a circle: it is skipped there
/// and placed when its visit ends.
///
/// Here a node whose joints and whose ancestors' joints are all placed is marked settled, and the
/// walk up a chain stops at a settled node: visiting the nodes above it would place nothing. The
/// order is the same, and the work about linear in the joints where no collider sits below a
/// joint still to be placed; where many do (circles of colliders deep in long chains), three-vrm's
/// walk is joints × depth, and [`ORDER_BUDGET`] bounds it.
pub(super) fn run_order(
    tree: &Tree<'_>,
    joints: &[ResolvedSpringJoint],
    colliders: &[SpringCollider],
) -> Option<(Vec<usize>, bool)> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Placed,
    }
    let n = tree.joints.len();
    let mut on_node: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, j) in joints.iter().enumerate() {
        if let Some(v) = on_node.get_mut(j.joint) {
            v.push(i);
        }
    }
    let mut state = vec![State::New; joints.len()];
    let mut settled = vec![false; n];
    let mut circular = false;
    let mut order = Vec::with_capacity(joints.len());
    let mut steps = 0usize;

    // The joints a joint visits, in order: its dependencies' chains root first, each node's
    // joints in the order added, without the settled nodes.
    let deps = |i: usize, state: &[State], settled: &mut [bool], steps: &mut usize| -> Vec<usize> {
        let Some(j) = joints.get(i) else { return Vec::new() };
        let mut starts: Vec<usize> = Vec::new();
        if let Some(p) = tree.parent(j.joint) {
            starts.push(p);
        }
        for c in &j.colliders {
            if let Some(col) = colliders.get(*c) {
                // Two colliders on one node walk the same chain; the second walk places nothing.
                if !starts.contains(&col.joint) {
                    starts.push(col.joint);
                }
            }
        }
        let placed = |k: usize, state: &[State]| {
            on_node.get(k).is_none_or(|v| v.iter().all(|&x| state.get(x) == Some(&State::Placed)))
        };
        let mut out = Vec::new();
        let mut path = Vec::new();
        for start in starts {
            path.clear();
            let mut cur = Some(start);
            while let Some(k) = cur {
                if settled.get(k).copied().unwrap_or(true) || *steps > ORDER_BUDGET {
                    break;
                }
                *steps += 1;
                path.push(k);
                cur = tree.parent(k);
            }
            // Root first; mark what is settled now from the top down.
            path.reverse();
            let mut above_settled = true;
            for &k in &path {
                if above_settled && placed(k, state) {
                    if let Some(s) = settled.get_mut(k) {
                        *s = true;
                    }
                    continue;
                }
                above_settled = false;
                if let Some(v) = on_node.get(k) {
                    *steps += v.len();
                    out.extend(v.iter().copied());
                }
            }
        }
        out
    };

    for first in 0..joints.len() {
        if state.get(first) != Some(&State::New) {
            if state.get(first) == Some(&State::Open) {
                circular = true;
            }
            continue;
        }
        if let Some(s) = state.get_mut(first) {
            *s = State::Open;
        }
        let mut stack: Vec<(usize, Vec<usize>, usize)> =
            vec![(first, deps(first, &state, &mut settled, &mut steps), 0)];
        while let Some(top) = stack.last_mut() {
            if steps > ORDER_BUDGET {
                return None;
            }
            let i = top.0;
            let next = top.1.get(top.2).copied();
            top.2 += 1;
            match next {
                Some(k) => match state.get(k) {
                    Some(State::New) => {
                        if let Some(s) = state.get_mut(k) {
                            *s = State::Open;
                        }
                        let d = deps(k, &state, &mut settled, &mut steps);
                        stack.push((k, d, 0));
                    }
                    Some(State::Open) => circular = true,
                    _ => {}
                },
                None => {
                    stack.pop();
                    if let Some(s) = state.get_mut(i) {
                        *s = State::Placed;
                    }
                    order.push(i);
                }
            }
        }
    }
    Some((order, circular))
}
