//! The user's attributes on the host copy of a dynamic mesh: written and
//! read in element order ([`DynamicMesh::sources`]: the input's order for
//! the input's elements), stored per patch slot (see
//! `cavity_device::attribute`).

use rayon::prelude::*;

use cavity_device::attribute::{Attr, Scalar};
use cavity_device::layout::Kind;

use crate::attributes::{AttributeError, AttributeLayout};

use super::DynamicMesh;

impl DynamicMesh {
    /// The attributes the mesh carries.
    pub fn attributes(&self) -> &AttributeLayout {
        &self.attributes
    }

    /// Elements of `kind` in the input mesh (edges numbered as the patcher
    /// numbers them, `PatchedMesh::input_edges`): the input indices
    /// [`DynamicMesh::sources`] lists are below it.
    pub fn input_count(&self, kind: Kind) -> u32 {
        match kind {
            Kind::Vertex => self.input_vertices,
            Kind::Edge => self.input_edges,
            Kind::Face => self.input_faces,
        }
    }

    /// The attribute words of `kind` (`cap.attr_stride(kind)` per element
    /// slot, every patch slot).
    pub fn attr_words(&self, kind: Kind) -> &[u32] {
        match kind {
            Kind::Vertex => &self.vertex_attrs,
            Kind::Edge => &self.edge_attrs,
            Kind::Face => &self.face_attrs,
        }
    }

    /// The values of `attr`, one per active owned element of its kind, in
    /// element order ([`DynamicMesh::sources`]; for an unchanged mesh, the
    /// input's order). Elements that fill-ins added read zero unless their
    /// fill-in set them.
    ///
    /// # Errors
    /// [`AttributeError::Unknown`] or [`AttributeError::Type`] for a handle
    /// that is not one of this mesh's attributes.
    pub fn attribute<T: Scalar, const N: usize>(
        &self,
        attr: &Attr<T, N>,
    ) -> Result<Vec<[T; N]>, AttributeError> {
        self.attributes.info(attr)?;
        let words = self.attr_words(attr.kind());
        Ok(self
            .elements(attr.kind())
            .par_iter()
            .map(|&((p, l), _)| {
                let at = self.attr_start(attr, p, l);
                std::array::from_fn(|c| read(words, at + c * T::WORDS as usize))
            })
            .collect())
    }

    /// Sets `attr` of every active owned element of its kind to `values`,
    /// given in element order ([`DynamicMesh::sources`]; for an unchanged
    /// mesh, the input's order); ribbon copies of the elements get the
    /// same values.
    ///
    /// # Errors
    /// [`AttributeError::Unknown`] or [`AttributeError::Type`] for a handle
    /// that is not one of this mesh's attributes, and
    /// [`AttributeError::Length`] unless there is one value per element.
    pub fn set_attribute<T: Scalar, const N: usize>(
        &mut self,
        attr: &Attr<T, N>,
        values: &[[T; N]],
    ) -> Result<(), AttributeError> {
        let info = self.attributes.info(attr)?;
        let kind = attr.kind();
        let elements = self.elements(kind);
        if values.len() != elements.len() {
            return Err(AttributeError::Length {
                name: info.name.clone(),
                expected: elements.len(),
                got: values.len(),
            });
        }
        let writes: Vec<(usize, [T; N])> = elements
            .par_iter()
            .zip(values)
            .map(|(&((p, l), _), &v)| (self.attr_start(attr, p, l), v))
            .collect();
        // Ribbon copies: their owner's words, copied once the owners'
        // values are in place.
        let mesh = &*self;
        let copies: Vec<(usize, usize)> = (0..self.num_patches)
            .into_par_iter()
            .flat_map_iter(|p| {
                let table = mesh.frozen_table(p, kind);
                mesh.active(p, kind)
                    .filter(|&l| !mesh.is_owned(p, kind, l))
                    .filter_map(|l| {
                        let (q, owner) = mesh.owner_in(&table, p, kind, l)?;
                        // An owned element's words are written above.
                        mesh.is_owned(q, kind, owner)
                            .then(|| (mesh.attr_start(attr, p, l), mesh.attr_start(attr, q, owner)))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let words = match kind {
            Kind::Vertex => &mut self.vertex_attrs,
            Kind::Edge => &mut self.edge_attrs,
            Kind::Face => &mut self.face_attrs,
        };
        let len = N * T::WORDS as usize;
        for (at, value) in writes {
            for (c, x) in value.into_iter().enumerate() {
                let w = x.to_words();
                let i = at + c * T::WORDS as usize;
                words[i..i + T::WORDS as usize].copy_from_slice(&w[..T::WORDS as usize]);
            }
        }
        for (at, owner) in copies {
            words.copy_within(owner..owner + len, at);
        }
        Ok(())
    }

    /// Index of the first word of `attr` of local element `l` of patch `p`.
    fn attr_start<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, p: u32, l: u32) -> usize {
        let kind = attr.kind();
        ((p * self.cap.of(kind) + l) * self.cap.attr_stride(kind) + attr.offset()) as usize
    }
}

/// The value of type `T` stored at `words[at..]`.
fn read<T: Scalar>(words: &[u32], at: usize) -> T {
    let hi = if T::WORDS == 2 { words[at + 1] } else { 0 };
    T::from_words([words[at], hi])
}
