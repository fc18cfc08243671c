//! The work budget of one bake (see [`BakeOptions::max_work`](super::BakeOptions::max_work)),
//! shared by its clips' reduction and measurement.

/// What is left of a bake's work budget.
#[derive(Debug)]
pub(super) struct Work {
    pub(super) left: u64,
}

impl Work {
    /// Takes `steps` from the budget; false (and nothing taken) when they do not fit.
    pub(super) fn spend(&mut self, steps: u64) -> bool {
        match self.left.checked_sub(steps) {
            Some(rest) => {
                self.left = rest;
                true
            }
            None => false,
        }
    }
}
