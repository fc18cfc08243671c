//! The viewer's spring bones: their set-up from the model's file, the switch, the counts and
//! frame report the HUD shows, and their colliders as lines.

use sinew_host::character::colliders::ColliderLines;
use sinew_host::{CharacterError, SpringFrame, SpringSettings};

use super::Viewer;

impl Viewer {
    /// Sets up the model's spring bones (when its file has any) on the character, on, at the
    /// host layer's default rate; returns whether it has springs. A set-up in place is
    /// replaced (the springs start at rest).
    ///
    /// # Errors
    ///
    /// What the character's validation refuses (not expected for a file that loaded); the
    /// viewer then runs without springs.
    pub fn setup_springs(&mut self) -> Result<bool, CharacterError> {
        let Some(set) = self.host.springs().filter(|s| !s.joints.is_empty()) else {
            self.character.clear_springs();
            return Ok(false);
        };
        self.character.set_world(self.world());
        self.character.set_springs(set, SpringSettings::default(), true)?;
        self.settle();
        Ok(true)
    }

    /// Whether spring bones are set up ([`Viewer::setup_springs`] on a model with springs).
    #[must_use]
    pub fn has_springs(&self) -> bool {
        self.character.spring_set().is_some()
    }

    /// Whether the springs are set up and on.
    #[must_use]
    pub fn springs_enabled(&self) -> bool {
        self.character.springs_enabled()
    }

    /// Turns the springs on (at rest in the next pose) or off (the clips' pose); nothing
    /// without springs.
    pub fn set_springs_enabled(&mut self, enabled: bool) {
        if self.character.set_springs_enabled(enabled).is_ok() {
            self.settle();
        }
    }

    /// Number of spring joints (0 without springs).
    #[must_use]
    pub fn spring_joints(&self) -> usize {
        self.character.spring_set().map_or(0, |s| s.joints.len())
    }

    /// Number of spring colliders (0 without springs).
    #[must_use]
    pub fn spring_colliders(&self) -> usize {
        self.character.spring_set().map_or(0, |s| s.colliders.len())
    }

    /// What the springs did in the last update (a reset, steps, contacts); `None` without
    /// springs.
    #[must_use]
    pub fn spring_frame(&self) -> Option<SpringFrame> {
        self.character.spring_frame()
    }

    /// The spring colliders in the current pose and world as wire lines
    /// ([`Character::collider_lines`](sinew_host::Character::collider_lines)): spheres and
    /// capsules as circles, planes as a square sized to the model with their normal; `inside`
    /// colliders apart. Empty without springs.
    #[must_use]
    pub fn collider_lines(&self) -> ColliderLines {
        self.character.collider_lines(ColliderLines::plane_size(self.radius))
    }
}
