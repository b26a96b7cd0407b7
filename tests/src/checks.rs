//! The query checker: every first-order query of a backend against the
//! CPU reference mesh, and the patching's invariants.

use cavity::attributes::AttributeLayout;
use cavity::backend::Backend;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::{Kind, PatchedMesh, Query, TriMesh};
use cavity_reference::ReferenceMesh;

/// The reference mesh's result of `query` for element `src` (input numbering).
pub fn reference_row(reference: &ReferenceMesh, query: Query, src: u32) -> Vec<u32> {
    match query {
        Query::VV => reference.vv(src),
        Query::VE => reference.ve(src),
        Query::VF => reference.vf(src),
        Query::EV => reference.ev(src),
        Query::EF => reference.ef(src),
        Query::FV => reference.fv(src).to_vec(),
        Query::FE => reference.fe(src).to_vec(),
        Query::FF => reference.ff(src),
    }
}

fn set(v: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = v.into_iter().collect();
    v.sort_unstable();
    v
}

/// Runs every query of `backend` on `mesh` patched with `patch_size` and
/// compares it with the reference mesh: as sets, and in rotational order
/// around manifold interior vertices (VV; VE and VF consistent with VV).
/// Returns a description of the first mismatch.
pub fn check_queries(mesh: &TriMesh, patch_size: u32, backend: &Backend) -> Result<(), String> {
    let patched = PatchedMesh::new(mesh, patch_size).map_err(|e| e.to_string())?;
    check_patched_queries(mesh, &patched, backend)
}

/// [`check_queries`] on `mesh` patched by the device's patcher
/// (`Backend::partition`) on `backend`.
pub fn check_device_patched_queries(
    mesh: &TriMesh,
    patch_size: u32,
    backend: &Backend,
) -> Result<(), String> {
    let topo = cavity::topology::Topology::new(mesh);
    let part = backend
        .partition(&topo, mesh.num_faces(), patch_size, 7)
        .map_err(|e| e.to_string())?;
    let patched =
        PatchedMesh::from_partition(mesh, &topo, &part, patch_size).map_err(|e| e.to_string())?;
    check_patched_queries(mesh, &patched, backend)
}

/// [`check_queries`] on `mesh` patched as `backend` patches for the
/// commands (`Backend::patched`: on the GPU its partition and build, or
/// the host's build where a block's shared memory is too small).
pub fn check_patched(mesh: &TriMesh, patch_size: u32, backend: &Backend) -> Result<(), String> {
    let topo = cavity::topology::Topology::new(mesh);
    let patched = backend
        .patched(mesh, &topo, patch_size)
        .map_err(|e| e.to_string())?;
    check_patched_queries(mesh, &patched, backend)
}

/// Builds the patch structures of `mesh` (partitioned by the host's
/// patcher at `patch_size`) on `backend` (`Backend::build_patches`) and
/// compares them array for array with the host's build
/// (`PatchedMesh::from_partition`): both must fail, or both give the same
/// headers, FE, EV, ribbon tables, stashes, bitmasks and handle maps; then
/// every query on the device's build is checked against the reference.
pub fn check_device_built_patches(
    mesh: &TriMesh,
    patch_size: u32,
    backend: &Backend,
) -> Result<(), String> {
    let topo = cavity::topology::Topology::new(mesh);
    let part = cavity::patcher::partition(&topo, mesh.num_faces(), patch_size, 7)
        .map_err(|e| e.to_string())?;
    let host = PatchedMesh::from_partition(mesh, &topo, &part, patch_size);
    let device = backend.build_patches(mesh, &topo, &part, patch_size);
    let (host, device) = match (host, device) {
        (Ok(h), Ok(d)) => (h, d),
        (Err(_), Err(cavity::backend::PartitionError::Patch(_))) => return Ok(()),
        (h, d) => {
            return Err(format!(
                "host build {:?}, device build {:?}",
                h.err(),
                d.err()
            ));
        }
    };
    let same = |what: &str, a: &[u32], b: &[u32]| {
        if a == b {
            Ok(())
        } else {
            let at = a.iter().zip(b).position(|(x, y)| x != y);
            Err(format!(
                "{what}: host {} entries, device {}; first difference at {at:?}",
                a.len(),
                b.len()
            ))
        }
    };
    if host.patches() != device.patches() {
        let p = host
            .patches()
            .iter()
            .zip(device.patches())
            .position(|(a, b)| a != b);
        return Err(format!(
            "headers differ ({} and {} patches), first at {p:?}: host {:?}, device {:?}",
            host.num_patches(),
            device.num_patches(),
            p.map(|p| host.patches()[p]),
            p.map(|p| device.patches()[p])
        ));
    }
    let widen = |v: &[u16]| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
    same("FE", &widen(host.fe()), &widen(device.fe()))?;
    same("EV", &widen(host.ev()), &widen(device.ev()))?;
    same("ribbon", host.ribbon(), device.ribbon())?;
    same("stash", host.stash(), device.stash())?;
    same("masks", host.masks(), device.masks())?;
    for kind in Kind::ALL {
        same(
            &format!("{kind:?} → input"),
            host.to_input(kind),
            device.to_input(kind),
        )?;
        same(
            &format!("input → {kind:?}"),
            host.to_handle(kind),
            device.to_handle(kind),
        )?;
    }
    check_patched_queries(mesh, &device, backend)
}

/// [`check_queries`] on the patches `patched` of `mesh`.
fn check_patched_queries(
    mesh: &TriMesh,
    patched: &PatchedMesh,
    backend: &Backend,
) -> Result<(), String> {
    let reference = ReferenceMesh::new(mesh).map_err(|e| e.to_string())?;
    check_patching(mesh, patched)?;
    let to_in = |k: Kind, h: u32| patched.to_input(k)[h as usize];
    // Patched edge ids are input edges as vertex pairs; map to the reference's.
    let ref_edge = |h: u32| {
        let [a, b] = patched.input_edges()[to_in(Kind::Edge, h) as usize];
        reference
            .edge_index(a, b)
            .expect("edge exists in reference")
    };
    let map = |k: Kind, h: u32| match k {
        Kind::Edge => ref_edge(h),
        _ => to_in(k, h),
    };
    for query in Query::ALL {
        let result = backend.query(patched, query).map_err(|e| e.to_string())?;
        let n = patched.count(query.source());
        if result.offsets.len() != n + 1 {
            return Err(format!(
                "{}: {} rows for {n} sources",
                query.name(),
                result.offsets.len() - 1
            ));
        }
        for h in 0..n as u32 {
            let row: Vec<u32> = result
                .row(h)
                .iter()
                .map(|&x| map(query.target(), x))
                .collect();
            let src = map(query.source(), h);
            let expected = reference_row(&reference, query, src);
            let ordered = matches!(query, Query::FV | Query::FE);
            let same = if ordered {
                row == expected
            } else {
                set(row.clone()) == set(expected.clone())
            };
            if !same {
                return Err(format!(
                    "{} of {:?} {src}: got {row:?}, expected {expected:?}",
                    query.name(),
                    query.source()
                ));
            }
            if query == Query::VV
                && reference.is_manifold_interior_vertex(src)
                && !reference.is_rotational_order(src, &row)
            {
                return Err(format!(
                    "VV of vertex {src} not in rotational order: {row:?}"
                ));
            }
        }
    }
    check_ring_consistency(patched, backend, &reference)
}

/// VE[i] joins v and VV[i]; VF[i] holds v, VV[i] and VV[i+1] around
/// manifold interior vertices.
fn check_ring_consistency(
    patched: &PatchedMesh,
    backend: &Backend,
    reference: &ReferenceMesh,
) -> Result<(), String> {
    let vv = backend
        .query(patched, Query::VV)
        .map_err(|e| e.to_string())?;
    let ve = backend
        .query(patched, Query::VE)
        .map_err(|e| e.to_string())?;
    let vf = backend
        .query(patched, Query::VF)
        .map_err(|e| e.to_string())?;
    let fv = backend
        .query(patched, Query::FV)
        .map_err(|e| e.to_string())?;
    let ev = backend
        .query(patched, Query::EV)
        .map_err(|e| e.to_string())?;
    for v in 0..patched.count(Kind::Vertex) as u32 {
        let input = patched.to_input(Kind::Vertex)[v as usize];
        if !reference.is_manifold_interior_vertex(input) {
            continue;
        }
        let ring = vv.row(v);
        let k = ring.len();
        for i in 0..k {
            let e = ev.row(ve.row(v)[i]);
            if !(e.contains(&v) && e.contains(&ring[i])) {
                return Err(format!(
                    "VE[{i}] of vertex {input} does not join it to VV[{i}]"
                ));
            }
            let f = fv.row(vf.row(v)[i]);
            if !(f.contains(&v) && f.contains(&ring[i]) && f.contains(&ring[(i + 1) % k])) {
                return Err(format!(
                    "VF[{i}] of vertex {input} is not between VV[{i}] and VV[{}]",
                    (i + 1) % k
                ));
            }
        }
    }
    Ok(())
}

/// Patching invariants: handles are bijections; every patch's owned faces
/// are one connected component; masks agree with the owned counts.
pub fn check_patching(mesh: &TriMesh, patched: &PatchedMesh) -> Result<(), String> {
    for kind in [Kind::Vertex, Kind::Edge, Kind::Face] {
        let mut seen = vec![false; patched.count(kind)];
        for &h in patched.to_handle(kind) {
            if std::mem::replace(&mut seen[h as usize], true) {
                return Err(format!("{kind:?} handle {h} owned twice"));
            }
        }
        if seen.iter().any(|s| !s) {
            return Err(format!("a {kind:?} handle is owned by no element"));
        }
    }
    if patched.count(Kind::Vertex) != mesh.positions.len()
        || patched.count(Kind::Face) != mesh.faces.len()
    {
        return Err("element counts differ from the input".into());
    }
    let view = patched.view();
    for (p, info) in patched.patches().iter().enumerate() {
        for kind in [Kind::Vertex, Kind::Edge, Kind::Face] {
            for l in 0..info.count(kind) {
                if view.mask_bit(info, kind, false, l) != (l < info.owned(kind)) {
                    return Err(format!("patch {p}: owned mask of {kind:?} {l} is wrong"));
                }
                if !view.mask_bit(info, kind, true, l) {
                    return Err(format!("patch {p}: {kind:?} {l} inactive"));
                }
            }
        }
        if info.owned_faces > patched.patch_size() {
            return Err(format!(
                "patch {p} has {} faces > {}",
                info.owned_faces,
                patched.patch_size()
            ));
        }
        // Connectivity of owned faces through shared local edges.
        let fe = &patched.fe()[info.fe_offset as usize..][..3 * info.num_faces as usize];
        let nf = info.owned_faces as usize;
        if nf == 0 {
            continue;
        }
        let mut reached = vec![false; nf];
        reached[0] = true;
        let mut stack = vec![0usize];
        while let Some(f) = stack.pop() {
            for g in 0..nf {
                if !reached[g]
                    && (0..3).any(|a| (0..3).any(|b| fe[3 * f + a] >> 1 == fe[3 * g + b] >> 1))
                {
                    reached[g] = true;
                    stack.push(g);
                }
            }
        }
        if reached.iter().any(|r| !r) {
            return Err(format!("patch {p} is not connected"));
        }
    }
    Ok(())
}

/// Places `mesh` (patched along the host patcher's partition with seed 7,
/// at most `patch_size` faces a patch) on `backend` through the device's
/// patches (`PatchBuffers::to_dynamic`, with the room of `factors` and the
/// attributes of `layout`) and compares the layout, copied back, with the
/// host's `DynamicMesh::from_patched_with` of the same patches array for
/// array (the host's layout is the oracle). Inputs that both refuse
/// (over a local limit, a stash or a capacity) must be refused with the
/// same message.
pub fn check_placed(
    mesh: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    layout: &AttributeLayout,
    backend: &Backend,
) -> Result<(), String> {
    let topo = cavity::topology::Topology::new(mesh);
    let part = cavity::patcher::partition(&topo, mesh.num_faces(), patch_size, 7)
        .map_err(|e| e.to_string())?;
    let buffers = match backend.patch_buffers(mesh, &topo, &part, patch_size) {
        Ok(buffers) => buffers,
        Err(cavity::backend::PartitionError::Patch(_)) => return Ok(()),
        Err(e) => return Err(format!("the device's patches: {e}")),
    };
    let placed = buffers.to_dynamic(backend, mesh, factors, layout);
    let patched = buffers
        .download(backend, &topo)
        .map_err(|e| e.to_string())?;
    let host = DynamicMesh::from_patched_with(mesh, &patched, factors, layout);
    let (host, placed) = match (host, placed) {
        (Ok(h), Ok(p)) => (h, p),
        (Err(h), Err(p)) if h.to_string() == p.to_string() => return Ok(()),
        (h, p) => {
            return Err(format!(
                "host layout {:?}, placed layout {:?}",
                h.err(),
                p.err()
            ));
        }
    };
    if !placed.is_resident() {
        return Err("the device's patches were placed on the host".into());
    }
    let device = placed.into_host(backend).map_err(|e| e.to_string())?;
    same_layout(&host, &device)
}

/// Whether two dynamic meshes have the same arrays, word for word (the
/// first difference named when not).
pub fn same_layout(host: &DynamicMesh, other: &DynamicMesh) -> Result<(), String> {
    if host.cap() != other.cap() {
        return Err(format!(
            "capacities differ: {:?} and {:?}",
            host.cap(),
            other.cap()
        ));
    }
    let shape = |m: &DynamicMesh| {
        (
            m.num_patches(),
            m.patch_size(),
            Kind::ALL.map(|k| m.input_count(k)),
        )
    };
    if shape(host) != shape(other) {
        return Err(format!(
            "patches, patch size or input counts differ: {:?} and {:?}",
            shape(host),
            shape(other)
        ));
    }
    let (a, b) = (host.storage(), other.storage());
    let words = [
        ("counts", a.counts, b.counts),
        ("masks", a.masks, b.masks),
        ("hash", a.hash, b.hash),
        ("stash", a.stash, b.stash),
        ("locks", a.locks, b.locks),
        ("flags", a.flags, b.flags),
        ("declined", a.declined, b.declined),
        ("vertex_attrs", a.vertex_attrs, b.vertex_attrs),
        ("edge_attrs", a.edge_attrs, b.edge_attrs),
        ("face_attrs", a.face_attrs, b.face_attrs),
        ("queue", a.queue, b.queue),
        ("queue_state", a.queue_state, b.queue_state),
        ("stats", a.stats, b.stats),
    ];
    let halves = [("fe", a.fe, b.fe), ("ev", a.ev, b.ev)];
    let differ = |what: &str, n: (usize, usize), at: Option<usize>| {
        Err(format!(
            "{what}: {} and {} entries; first difference at {at:?}",
            n.0, n.1
        ))
    };
    for (what, x, y) in words {
        if x != y {
            return differ(
                what,
                (x.len(), y.len()),
                x.iter().zip(y).position(|(p, q)| p != q),
            );
        }
    }
    for (what, x, y) in halves {
        if x != y {
            return differ(
                what,
                (x.len(), y.len()),
                x.iter().zip(y).position(|(p, q)| p != q),
            );
        }
    }
    Ok(())
}
