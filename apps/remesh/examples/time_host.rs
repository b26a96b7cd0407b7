use cavity::defects::{
    Keeps, check_output_with, count_zero_area, remove_duplicate_faces_with_topology,
};
use cavity::io::{Format, read_mesh, stage_mesh};
use cavity::stats::{Survey, topology_stats_with};
use cavity::topology::Topology;
use cavity_remesh::{Quality, mean_edge_length_with};
use std::time::Instant;

fn t<R>(what: &str, f: impl Fn() -> R) -> R {
    let mut times = vec![];
    let mut r = None;
    for _ in 0..3 {
        let s = Instant::now();
        r = Some(f());
        times.push(s.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    eprintln!("{what:<24} {:.4} s (min {:.4})", times[1], times[0]);
    r.unwrap()
}

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let read = t("read", || read_mesh(path.as_ref()).unwrap());
    let mesh = read.mesh;
    eprintln!(
        "{} faces, {} threads",
        mesh.faces.len(),
        rayon::current_num_threads()
    );
    let topo = t("topology", || Topology::new(&mesh));
    t("dup+topology", || {
        let mut m = mesh.clone();
        remove_duplicate_faces_with_topology(&mut m).0
    });
    let len = t("mean edge", || mean_edge_length_with(&mesh, &topo));
    let survey = t("survey", || Survey::new(&mesh));
    t("survey of topology", || {
        Survey::with_topology(&mesh, &topo).ev.len()
    });
    let q1 = t("quality (topology)", || {
        Quality::with_topology(&mesh, &topo, len)
    });
    let q2 = t("quality (survey)", || {
        Quality::with_survey(&mesh, &survey, len)
    });
    assert_eq!(q1, q2);
    let stats = t("topology stats", || topology_stats_with(&mesh, &topo));
    assert_eq!(stats, survey.stats(&mesh));
    t("zero area", || count_zero_area(&mesh));
    t("check (survey given)", || {
        check_output_with(
            &stats,
            &mesh,
            &survey,
            Keeps {
                topology: true,
                no_zero_area: true,
            },
        )
        .is_ok()
    });
    t("survey+quality+check", || {
        let s = Survey::new(&mesh);
        rayon::join(
            || Quality::with_survey(&mesh, &s, len),
            || {
                check_output_with(
                    &stats,
                    &mesh,
                    &s,
                    Keeps {
                        topology: true,
                        no_zero_area: true,
                    },
                )
                .is_ok()
            },
        )
    });
    t("write ply", || {
        stage_mesh(
            "/tmp/time_host_out.ply".as_ref(),
            &mesh,
            None,
            Format::from_path("x.ply".as_ref()).unwrap(),
        )
        .unwrap()
        .commit()
        .unwrap()
    });
}
