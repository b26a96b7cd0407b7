//! The settings an error asks to change. Errors of the library name them
//! in its own words ("raise the patch size") and list them through
//! [`NamesSettings`]; each such error type registers itself
//! ([`names_settings!`](crate::names_settings)), so that a front end finds
//! the settings of any error chain ([`settings_of`]) without a list of
//! types, and maps each [`Setting`] to its own option by the setting's
//! [`key`](Setting::key) (the CLI's `--patch-size` for `patch_size`).

use std::error::Error;

/// A setting that an error may ask to change: the library's own (the
/// constants below) or an application's, which its crate declares with
/// [`Setting::new`] (remeshing's target length, tracking's frame count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Setting {
    key: &'static str,
    name: &'static str,
}

impl Setting {
    /// Faces per patch (`PatchedMesh::new`, `DynamicMesh::new`).
    pub const PATCH_SIZE: Setting = Setting::new("patch_size", "the patch size");
    /// Element slots per patch over the static count
    /// (`CapacityFactors::elements`).
    pub const CAPACITY_FACTOR: Setting = Setting::new("capacity_factor", "the capacity factor");
    /// Patch slots over the static patches (`CapacityFactors::patches`).
    pub const PATCH_FACTOR: Setting = Setting::new("patch_factor", "the patch factor");

    /// The setting `key` (the name of the field that holds it in the
    /// application's settings, `snake_case`: `"smoothing_steps"`), named
    /// `name` in words as messages name it ("the smoothing steps"): an
    /// application's settings are its crate's constants made with it.
    pub const fn new(key: &'static str, name: &'static str) -> Setting {
        Setting { key, name }
    }

    /// Its key, the settings field's name (`"patch_size"`): a front end's
    /// option for it derives from it (`--patch-size`).
    pub fn key(self) -> &'static str {
        self.key
    }

    /// In words, as the messages name it.
    pub fn name(self) -> &'static str {
        self.name
    }
}

/// An error that can ask for settings to change. Register the type with
/// [`names_settings!`](crate::names_settings) beside the implementation,
/// so that [`settings_of`] finds it in any error chain.
pub trait NamesSettings {
    /// The settings the error's message asks to change, in its order
    /// (empty when none would help).
    fn settings(&self) -> Vec<Setting>;
}

/// A registered error type's settings, if `e` is of that type (the
/// registry's entries, made by [`names_settings!`](crate::names_settings)).
pub struct SettingsOf(pub fn(&(dyn Error + 'static)) -> Option<Vec<Setting>>);

inventory::collect!(SettingsOf);

/// Registers error types that implement [`NamesSettings`], so that
/// [`settings_of`] reads their settings through a `dyn Error`.
#[macro_export]
macro_rules! names_settings {
    ($($t:ty),+ $(,)?) => {$(
        $crate::settings::__inventory::submit! {
            $crate::settings::SettingsOf(|e| {
                e.downcast_ref::<$t>()
                    .map($crate::settings::NamesSettings::settings)
            })
        }
    )+};
}

#[doc(hidden)]
pub use inventory as __inventory;

/// The settings that `e`, or the first error of its chain
/// ([`Error::source`]) of a registered type, asks to change; empty when
/// none does.
pub fn settings_of(e: &(dyn Error + 'static)) -> Vec<Setting> {
    let mut at = Some(e);
    while let Some(e) = at {
        if let Some(settings) = inventory::iter::<SettingsOf>
            .into_iter()
            .find_map(|of| (of.0)(e))
        {
            return settings;
        }
        at = e.source();
    }
    Vec::new()
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

crate::names_settings!(OutOfRange);
