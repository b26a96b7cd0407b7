//! Stanford PLY through ply-rs: `vertex` elements with `x y z` (any
//! numeric type), `face` elements with a `vertex_indices` (or
//! `vertex_index`) list of any integer type. Other elements and properties
//! are ignored.

use std::io::{BufRead, Write};

use ply_rs::parser::Parser;
use ply_rs::ply::{
    Addable, DefaultElement, ElementDef, Encoding, Ply, Property, PropertyDef, PropertyType,
    ScalarType,
};
use ply_rs::writer::Writer;

use super::{MeshIoError, PlyEncoding, push_polygon};
use crate::TriMesh;

fn scalar(p: &Property) -> Option<f64> {
    Some(match *p {
        Property::Char(x) => x as f64,
        Property::UChar(x) => x as f64,
        Property::Short(x) => x as f64,
        Property::UShort(x) => x as f64,
        Property::Int(x) => x as f64,
        Property::UInt(x) => x as f64,
        Property::Float(x) => x as f64,
        Property::Double(x) => x,
        _ => return None,
    })
}

fn list(p: &Property) -> Option<Vec<i64>> {
    Some(match p {
        Property::ListChar(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListUChar(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListShort(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListUShort(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListInt(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListUInt(v) => v.iter().map(|&x| x as i64).collect(),
        _ => return None,
    })
}

pub(super) fn read(
    mut reader: impl BufRead,
    name: &str,
    polygons: &mut usize,
) -> Result<TriMesh, MeshIoError> {
    let invalid = |message: String| MeshIoError::Invalid {
        file: name.to_string(),
        message,
    };
    // ply-rs may panic on some malformed headers: report that as an error.
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Parser::<DefaultElement>::new().read_ply(&mut reader)
    }));
    let ply = match parsed {
        Err(_) => return Err(invalid("malformed PLY file".into())),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(invalid("file ends early (truncated)".into()));
        }
        Ok(Err(e)) => return Err(invalid(format!("not a valid PLY file: {e}"))),
        Ok(Ok(ply)) => ply,
    };
    let element = |element, index, message: String| MeshIoError::Element {
        file: name.to_string(),
        element,
        index,
        message,
    };
    let mut mesh = TriMesh::default();
    let vertices = ply
        .payload
        .get("vertex")
        .ok_or_else(|| invalid("no vertex element".into()))?;
    if let Some(def) = ply.header.elements.get("vertex")
        && vertices.len() < def.count
    {
        return Err(invalid(format!(
            "file ends after {} of {} vertices (truncated)",
            vertices.len(),
            def.count
        )));
    }
    for (v, e) in vertices.iter().enumerate() {
        let mut p = [0f32; 3];
        for (c, key) in ["x", "y", "z"].iter().enumerate() {
            let x = e
                .get(*key)
                .and_then(scalar)
                .ok_or_else(|| element("vertex", v, format!("missing numeric property {key}")))?;
            p[c] = x as f32;
        }
        mesh.positions.push(p);
    }
    let nv = mesh.positions.len() as i64;
    if let Some(faces) = ply.payload.get("face") {
        if let Some(def) = ply.header.elements.get("face")
            && faces.len() < def.count
        {
            return Err(invalid(format!(
                "file ends after {} of {} faces (truncated)",
                faces.len(),
                def.count
            )));
        }
        for (f, e) in faces.iter().enumerate() {
            let idx = e
                .get("vertex_indices")
                .or_else(|| e.get("vertex_index"))
                .and_then(list)
                .ok_or_else(|| element("face", f, "missing vertex_indices list".into()))?;
            let mut poly = Vec::with_capacity(idx.len());
            for i in idx {
                if i < 0 || i >= nv {
                    return Err(element(
                        "face",
                        f,
                        format!("index {i} out of range (mesh has {nv} vertices)"),
                    ));
                }
                poly.push(i as u32);
            }
            push_polygon(&mut mesh.faces, &poly, polygons).map_err(|m| element("face", f, m))?;
        }
    }
    Ok(mesh)
}

pub(super) fn write(
    out: &mut impl Write,
    mesh: &TriMesh,
    normals: Option<&[[f32; 3]]>,
    encoding: PlyEncoding,
) -> std::io::Result<()> {
    let mut ply = Ply::<DefaultElement>::new();
    ply.header.encoding = match encoding {
        PlyEncoding::Ascii => Encoding::Ascii,
        PlyEncoding::BinaryLittleEndian => Encoding::BinaryLittleEndian,
        PlyEncoding::BinaryBigEndian => Encoding::BinaryBigEndian,
    };
    let float = PropertyType::Scalar(ScalarType::Float);
    let mut vertex = ElementDef::new("vertex".into());
    let mut keys = vec!["x", "y", "z"];
    if normals.is_some() {
        keys.extend(["nx", "ny", "nz"]);
    }
    for k in &keys {
        vertex
            .properties
            .add(PropertyDef::new(k.to_string(), float.clone()));
    }
    vertex.count = mesh.positions.len();
    ply.header.elements.add(vertex);
    let mut face = ElementDef::new("face".into());
    face.properties.add(PropertyDef::new(
        "vertex_indices".into(),
        PropertyType::List(ScalarType::UChar, ScalarType::Int),
    ));
    face.count = mesh.faces.len();
    ply.header.elements.add(face);
    if encoding != PlyEncoding::Ascii {
        // ply-rs 0.1.3 writes a binary list's length as the element count
        // (its `write_binary_property`), so binary payloads are written here
        // after ply-rs's header.
        Writer::<DefaultElement>::new().write_header(out, &ply.header)?;
        let big = encoding == PlyEncoding::BinaryBigEndian;
        let f32_bytes = |x: f32| {
            if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            }
        };
        for (v, p) in mesh.positions.iter().enumerate() {
            for x in p {
                out.write_all(&f32_bytes(*x))?;
            }
            if let Some(n) = normals {
                for x in n[v] {
                    out.write_all(&f32_bytes(x))?;
                }
            }
        }
        for f in &mesh.faces {
            out.write_all(&[3u8])?;
            for &i in f {
                let i = i as i32;
                out.write_all(&if big {
                    i.to_be_bytes()
                } else {
                    i.to_le_bytes()
                })?;
            }
        }
        return Ok(());
    }
    let vertices = mesh
        .positions
        .iter()
        .enumerate()
        .map(|(v, p)| {
            let mut e = DefaultElement::new();
            let values = normals.map_or([p[0], p[1], p[2], 0.0, 0.0, 0.0], |n| {
                [p[0], p[1], p[2], n[v][0], n[v][1], n[v][2]]
            });
            for (k, x) in keys.iter().zip(values) {
                e.insert(k.to_string(), Property::Float(x));
            }
            e
        })
        .collect();
    let faces = mesh
        .faces
        .iter()
        .map(|f| {
            let mut e = DefaultElement::new();
            e.insert(
                "vertex_indices".into(),
                Property::ListInt(f.iter().map(|&i| i as i32).collect()),
            );
            e
        })
        .collect();
    ply.payload.insert("vertex".into(), vertices);
    ply.payload.insert("face".into(), faces);
    Writer::new().write_ply(out, &mut ply)?;
    Ok(())
}
