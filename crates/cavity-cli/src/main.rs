//! `cavity`: the command-line tool of the cavity GPU mesh library.
//!
//! Commands: `remesh` (isotropic remeshing on the dynamic core), `track`
//! (surface tracking of a curl-noise-advected sheet), `info` (counts,
//! topology defects, patch statistics), `normals` (area-weighted vertex
//! normals), `smooth` (implicit mean curvature flow), `geodesic` (geodesic
//! distance from source vertices), `denoise` (bilateral denoising),
//! `delaunay` (Delaunay edge flips on the dynamic core), `tet` (volumetric
//! meshes: info, boundary, smoothing, subdivision, conversion,
//! simplification by edge collapse), `polylla`
//! (polygonal meshes from triangulations) and `bench` (the benchmark of
//! the queries and of each application). With no mesh argument a real
//! mesh bundled in `assets/` is used and named.
//!
//! The commands and their options are declared in `args` (clap's
//! derive), each command runs in its module of `commands/`, and this file
//! dispatches and prints an error with the options that change it.

/// The host stages (reading, patching, export, statistics) allocate and
/// fill arrays of tens of megabytes from every rayon worker: mimalloc
/// serves them faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod args;
mod commands;
mod device;
mod input;
mod output;
mod stages;

use std::process::ExitCode;

use cavity::settings::Setting;
use cavity_denoise::DenoiseSettings;
use cavity_geodesic::GeodesicSettings;
use cavity_mcf::McfSettings;
use cavity_remesh::RemeshSettings;
use cavity_track::TrackSettings;
use clap::{CommandFactory, FromArgMatches};

use crate::args::{BenchWhat, Cli, Command, DYNAMIC_PATCH_SIZE, TetCommand};
use crate::commands::{
    bench, delaunay, denoise, geodesic, info, normals, polylla, remesh, smooth, tet, track,
};
use crate::output::Stdout;

fn main() -> ExitCode {
    device::one_work_queue();
    remove_temporary_files_on_signals();
    let cli = Cli::from_arg_matches(&args::command().get_matches()).unwrap_or_else(|e| e.exit());
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e)
            if e.downcast_ref::<Stdout>()
                .is_some_and(|e| e.0.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            let options = options(e.as_ref());
            if options.is_empty() {
                eprintln!("error: {e}");
            } else {
                eprintln!("error: {e} ({})", options.join(", "));
            }
            ExitCode::FAILURE
        }
    }
}

/// On SIGINT, SIGTERM or SIGHUP: removes the temporary files of the
/// writes under way (`cavity::io::remove_temporary_files`: an interrupted
/// write leaves neither a hidden `.tmp*` file nor a partial output) and
/// exits with 128 plus the signal's number, as the signal would have.
fn remove_temporary_files_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        eprintln!("warning: no signal handler: an interrupted write may leave a temporary file");
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let _removed = cavity::io::remove_temporary_files();
            std::process::exit(128 + signal);
        }
    });
}

/// The command-line options of the settings that `e` (or an error it
/// wraps) asks to change (`cavity::settings::settings_of`: every library
/// error that names settings registers itself).
fn options(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    cavity::settings::settings_of(e)
        .into_iter()
        .map(option)
        .collect()
}

/// The command-line option of `setting`: the option whose argument is
/// named by the setting's key (clap's id of the field, `smoothing_steps`
/// for `--smoothing-steps`) in any command; the setting's name in words
/// when no option sets it.
fn option(setting: Setting) -> String {
    fn find(command: &clap::Command, key: &str) -> Option<String> {
        command
            .get_arguments()
            .find(|a| a.get_id().as_str() == key)
            .and_then(|a| a.get_long())
            .map(|long| format!("--{long}"))
            .or_else(|| command.get_subcommands().find_map(|c| find(c, key)))
    }
    find(&Cli::command(), setting.key()).unwrap_or_else(|| setting.name().to_string())
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Remesh {
            input,
            output,
            length,
            iterations,
            feature_angle,
            smoothing_steps,
            keep_boundary,
            dynamic,
        } => {
            let settings = RemeshSettings {
                length,
                iterations,
                feature_angle,
                smoothing_steps,
                keep_boundary,
            };
            remesh::remesh(input.as_deref(), output.as_deref(), &settings, &dynamic)
        }
        Command::Track {
            grid,
            frames,
            dt,
            output,
            every,
            dynamic,
        } => {
            let settings = TrackSettings { grid, frames, dt };
            track::track(&settings, &output, every, &dynamic)
        }
        Command::Info {
            mesh,
            patch_size,
            device,
        } => info::info(mesh.as_deref(), patch_size, device),
        Command::Tet { what } => match what {
            TetCommand::Info { mesh, device } => tet::info(&mesh, device),
            TetCommand::Boundary {
                mesh,
                output,
                device,
            } => tet::boundary_surface(&mesh, &output, device),
            TetCommand::Smooth {
                mesh,
                output,
                iterations,
                plain,
                device,
                encoding,
            } => tet::smooth_inner(
                &mesh,
                &output,
                iterations,
                plain,
                device,
                encoding.options(),
            ),
            TetCommand::Subdivide {
                mesh,
                output,
                levels,
                plain,
                device,
                encoding,
            } => tet::subdivide(&mesh, &output, levels, plain, device, encoding.options()),
            TetCommand::Convert {
                mesh,
                output,
                encoding,
            } => tet::convert(&mesh, &output, encoding.options()),
            TetCommand::Simplify {
                mesh,
                output,
                ratio,
                cells,
                length,
                criterion,
                field,
                max_error,
                placement,
                epsilon_c,
                conflicts,
                device,
                encoding,
            } => {
                let settings = tet::simplify_settings(
                    [ratio, length],
                    cells,
                    criterion,
                    max_error,
                    placement,
                    (epsilon_c, conflicts),
                )?;
                tet::simplify(
                    &mesh,
                    &output,
                    &settings,
                    field.as_deref(),
                    device,
                    encoding.options(),
                )
            }
        },
        Command::Polylla {
            input,
            output,
            random,
            grid,
            seed,
            svg,
            device,
        } => {
            let source = match (input, random, grid) {
                (Some(path), _, _) => polylla::Source::File(path),
                (None, Some(n), _) => polylla::Source::Random(n, seed),
                (None, None, Some(n)) => polylla::Source::Grid(n),
                (None, None, None) => unreachable!("clap requires an input"),
            };
            polylla::polylla_command(&source, &output, svg.as_deref(), device)
        }
        Command::Normals {
            input,
            output,
            common,
        } => normals::normals(input.as_deref(), &output, &common),
        Command::Smooth {
            input,
            output,
            steps,
            dt,
            tolerance,
            max_iterations,
            laplacian,
            preconditioner,
            common,
        } => {
            let settings = McfSettings {
                steps,
                dt,
                tolerance,
                max_iterations,
                patch_size: common.patch_size,
                laplacian,
                preconditioner,
            };
            smooth::smooth(input.as_deref(), &output, &settings, &common)
        }
        Command::Geodesic {
            input,
            sources,
            output,
            tolerance,
            sweeps,
            common,
        } => {
            let settings = GeodesicSettings {
                tolerance,
                patch_size: common.patch_size,
                sweeps,
            };
            geodesic::geodesic(input.as_deref(), &output, &sources, &settings, &common)
        }
        Command::Denoise {
            input,
            output,
            iterations,
            max_hops,
            common,
        } => {
            let settings = DenoiseSettings {
                iterations,
                max_hops: max_hops.unwrap_or(u32::MAX),
                patch_size: common.patch_size,
            };
            denoise::denoise(input.as_deref(), &output, &settings, &common)
        }
        Command::Delaunay {
            input,
            output,
            dynamic,
        } => delaunay::delaunay(input.as_deref(), &output, &dynamic),
        Command::Bench {
            what:
                BenchWhat::Polylla {
                    random,
                    grid,
                    reps,
                    device,
                },
        } => polylla::bench(&random, &grid, reps, device),
        Command::Bench {
            what:
                BenchWhat::Tet {
                    meshes,
                    reps,
                    device,
                },
        } => tet::bench(&meshes, reps, device),
        Command::Bench {
            what:
                BenchWhat::TetSimplify {
                    meshes,
                    reps,
                    length_factor,
                    device,
                    python,
                    peer_script,
                    peer_timeout,
                },
        } => {
            let settings = cavity_tet_collapse::bench::TetSimplifySettings {
                reps,
                length_factor,
                peers: python.map(|python| cavity_tet_collapse::bench::PeerSettings {
                    python,
                    script: peer_script,
                    timeout: peer_timeout,
                    peers: None,
                }),
            };
            tet::bench_simplify(&meshes, device, &settings)
        }
        Command::Bench {
            what:
                BenchWhat::Io {
                    meshes,
                    subdivide,
                    reps,
                    dir,
                    volume_grid,
                },
        } => bench::bench_io(&meshes, subdivide, reps, dir.as_deref(), volume_grid),
        Command::Bench {
            what:
                BenchWhat::Patching {
                    meshes,
                    subdivisions,
                    reps,
                    common,
                },
        } => {
            let bench = cavity_bench::patching::PatchingBench {
                patch_size: common.patch_size,
                reps: reps.max(1),
            };
            bench::bench_meshes(&meshes, &subdivisions, common.device, &bench)
        }
        Command::Bench {
            what:
                BenchWhat::Queries {
                    mesh,
                    min_faces,
                    reps,
                    common,
                },
        } => bench::bench_queries(mesh.as_deref(), min_faces, reps.max(1), &common),
        Command::Bench {
            what:
                BenchWhat::Remesh {
                    meshes,
                    subdivisions,
                    length,
                    iterations,
                    smoothing_steps,
                    reps,
                    cpu_max_faces,
                    python,
                    peer_script,
                    dynamic,
                },
        } => {
            let settings = cavity_remesh::bench::RemeshBenchSettings {
                settings: RemeshSettings {
                    length,
                    iterations,
                    smoothing_steps,
                    ..RemeshSettings::default()
                },
                layout: dynamic.remesh_layout(),
                reps,
                cpu_max_faces,
                peers: python.map(|p| (p, peer_script)),
            };
            bench::bench_meshes(&meshes, &subdivisions, dynamic.device, &settings)
        }
        Command::Bench {
            what:
                BenchWhat::Delaunay {
                    meshes,
                    subdivisions,
                    reps,
                    cpu_max_faces,
                    dynamic,
                },
        } => {
            let settings = cavity_delaunay::bench::DelaunaySettings {
                patch_size: dynamic.patch_size(DYNAMIC_PATCH_SIZE),
                factors: dynamic.factors(),
                reps,
                cpu_max_faces,
            };
            bench::bench_meshes(&meshes, &subdivisions, dynamic.device, &settings)
        }
        Command::Bench {
            what:
                BenchWhat::Smooth {
                    meshes,
                    subdivisions,
                    dt,
                    laplacian,
                    preconditioner,
                    iterations,
                    cpu_iterations,
                    reps,
                    cpu_max_faces,
                    delaunay,
                    python,
                    peer_script,
                    common,
                },
        } => {
            let settings = cavity_mcf::bench::McfBenchSettings {
                dt,
                laplacian,
                preconditioner,
                iterations,
                cpu_iterations,
                reps,
                cpu_max_faces,
                patch_size: common.patch_size,
                delaunay,
                peers: python.map(|p| (p, peer_script)),
            };
            bench::bench_meshes(&meshes, &subdivisions, common.device, &settings)
        }
        Command::Bench {
            what:
                BenchWhat::Geodesic {
                    meshes,
                    subdivisions,
                    source,
                    tolerance,
                    sweeps,
                    reps,
                    cpu_max_faces,
                    exact_max_faces,
                    python,
                    peer_script,
                    common,
                },
        } => {
            let settings = cavity_geodesic::bench::GeodesicBenchSettings {
                source,
                settings: GeodesicSettings {
                    tolerance,
                    patch_size: common.patch_size,
                    sweeps,
                },
                reps,
                cpu_max_faces,
                exact_max_faces,
                peers: python.map(|p| (p, peer_script)),
            };
            bench::bench_meshes(&meshes, &subdivisions, common.device, &settings)
        }
        Command::Bench {
            what:
                BenchWhat::Denoise {
                    meshes,
                    subdivisions,
                    iterations,
                    reps,
                    cpu_max_faces,
                    serial_max_faces,
                    common,
                },
        } => {
            let settings = cavity_denoise::bench::DenoiseBenchSettings {
                iterations,
                reps,
                cpu_max_faces,
                serial_max_faces,
                patch_size: common.patch_size,
            };
            bench::bench_meshes(&meshes, &subdivisions, common.device, &settings)
        }
        Command::Bench {
            what:
                BenchWhat::Track {
                    grids,
                    frames,
                    dt,
                    reps,
                    cpu_max_faces,
                    dynamic,
                },
        } => {
            let settings = TrackSettings {
                frames,
                dt,
                ..TrackSettings::default()
            };
            bench::bench_track(&grids, &settings, reps, cpu_max_faces, &dynamic)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setting an error of the library or an application names has
    /// an option of its own, found from its key.
    #[test]
    fn every_setting_has_its_option() {
        use cavity_denoise::setting as denoise;
        use cavity_geodesic::setting as geodesic;
        use cavity_mcf::setting as mcf;
        use cavity_remesh::setting as remesh;
        use cavity_tet_collapse::setting as tet_collapse;
        use cavity_track::setting as track;
        for (setting, flag) in [
            (Setting::PATCH_SIZE, "--patch-size"),
            (Setting::CAPACITY_FACTOR, "--capacity-factor"),
            (Setting::PATCH_FACTOR, "--patch-factor"),
            (remesh::TARGET_LENGTH, "--length"),
            (remesh::ITERATIONS, "--iterations"),
            (remesh::FEATURE_ANGLE, "--feature-angle"),
            (remesh::SMOOTHING_STEPS, "--smoothing-steps"),
            (track::GRID, "--grid"),
            (track::FRAMES, "--frames"),
            (track::TIME_STEP, "--dt"),
            (mcf::STEPS, "--steps"),
            (mcf::TIME_STEP, "--dt"),
            (mcf::TOLERANCE, "--tolerance"),
            (mcf::MAX_ITERATIONS, "--max-iterations"),
            (geodesic::TOLERANCE, "--tolerance"),
            (geodesic::SWEEPS, "--sweeps"),
            (denoise::ITERATIONS, "--iterations"),
            (denoise::MAX_HOPS, "--max-hops"),
            (tet_collapse::RATIO, "--ratio"),
            (tet_collapse::CELLS, "--cells"),
            (tet_collapse::LENGTH, "--length"),
            (tet_collapse::MAX_ERROR, "--max-error"),
            (tet_collapse::FIELD, "--field"),
            (tet_collapse::CRITERION, "--criterion"),
        ] {
            assert_eq!(option(setting), flag, "{}", setting.name());
        }
        let unknown = Setting::new("no_such_option", "a setting no option sets");
        assert_eq!(option(unknown), "a setting no option sets");
    }

    /// An error deep in a chain still names its settings' options.
    #[test]
    fn wrapped_errors_name_their_options() {
        let run = cavity::rounds::RunError::Fatal("out of room", &[Setting::PATCH_FACTOR]);
        let e: Box<dyn std::error::Error> = Box::new(cavity_remesh::RemeshError::Run {
            phase: cavity_remesh::Phase::Split,
            iteration: 0,
            source: run,
        });
        assert_eq!(options(e.as_ref()), ["--patch-factor"]);
    }
}
