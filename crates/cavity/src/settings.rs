//! The settings an error asks to change. Errors of the library name them
//! in its own words ("raise the patch size") and list them through
//! [`NamesSettings`]; a front end maps each [`Setting`] to its own option
//! (the CLI adds `--patch-size`).

/// A setting of the library that an error may ask to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// Faces per patch (`PatchedMesh::new`, `DynamicMesh::new`).
    PatchSize,
    /// Element slots per patch over the static count
    /// (`CapacityFactors::elements`).
    CapacityFactor,
    /// Patch slots over the static patches (`CapacityFactors::patches`).
    PatchFactor,
    /// Remeshing's target edge length (`RemeshSettings::length`).
    TargetLength,
    /// Remeshing's iterations (`RemeshSettings::iterations`).
    Iterations,
    /// Remeshing's feature angle (`RemeshSettings::feature_angle`).
    FeatureAngle,
    /// Remeshing's smoothing steps (`RemeshSettings::smoothing_steps`).
    SmoothingSteps,
    /// Tracking's grid side (`TrackSettings::grid`).
    Grid,
    /// Tracking's frames (`TrackSettings::frames`).
    Frames,
    /// Tracking's time step (`TrackSettings::dt`).
    TimeStep,
}

impl Setting {
    /// In words, as the library's messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Setting::PatchSize => "the patch size",
            Setting::CapacityFactor => "the capacity factor",
            Setting::PatchFactor => "the patch factor",
            Setting::TargetLength => "the target edge length",
            Setting::Iterations => "the iteration count",
            Setting::FeatureAngle => "the feature angle",
            Setting::SmoothingSteps => "the smoothing steps",
            Setting::Grid => "the grid side",
            Setting::Frames => "the frame count",
            Setting::TimeStep => "the time step",
        }
    }
}

/// An error that can ask for settings to change.
pub trait NamesSettings {
    /// The settings the error's message asks to change, in its order
    /// (empty when none would help).
    fn settings(&self) -> Vec<Setting>;
}
