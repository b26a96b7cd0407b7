//! The settings an error asks to change. Errors of the library name them
//! in its own words ("raise the patch size") and list them through
//! [`NamesSettings`]; a front end maps each [`Setting`] to its own option
//! (the CLI adds `--patch-size`).

/// A setting that an error may ask to change: the library's own (the
/// constants below) or an application's, which its crate declares with
/// [`Setting::new`] (remeshing's target length, tracking's frame count).
/// Compared by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Setting(&'static str);

impl Setting {
    /// Faces per patch (`PatchedMesh::new`, `DynamicMesh::new`).
    pub const PATCH_SIZE: Setting = Setting::new("the patch size");
    /// Element slots per patch over the static count
    /// (`CapacityFactors::elements`).
    pub const CAPACITY_FACTOR: Setting = Setting::new("the capacity factor");
    /// Patch slots over the static patches (`CapacityFactors::patches`).
    pub const PATCH_FACTOR: Setting = Setting::new("the patch factor");

    /// The setting named `name` in words, as messages name it ("the
    /// target edge length"): an application's settings are its crate's
    /// constants made with it.
    pub const fn new(name: &'static str) -> Setting {
        Setting(name)
    }

    /// In words, as the messages name it.
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// An error that can ask for settings to change.
pub trait NamesSettings {
    /// The settings the error's message asks to change, in its order
    /// (empty when none would help).
    fn settings(&self) -> Vec<Setting>;
}

/// A setting out of range: change [`OutOfRange::setting`] to what
/// [`OutOfRange::message`] says (the applications' settings checks, e.g.
/// `cavity_mcf::McfSettings::check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} {message}", setting.name())]
pub struct OutOfRange {
    /// The setting.
    pub setting: Setting,
    /// What its value must be ("must be at least 1").
    pub message: &'static str,
}

impl OutOfRange {
    /// `setting` out of range: its value `message`.
    pub const fn new(setting: Setting, message: &'static str) -> OutOfRange {
        OutOfRange { setting, message }
    }
}

impl NamesSettings for OutOfRange {
    fn settings(&self) -> Vec<Setting> {
        vec![self.setting]
    }
}
