//! The user's attributes on the host copy of a dynamic mesh: written and
//! read in element order ([`DynamicMesh::sources`]: the input's order for
//! the input's elements), stored per patch slot (see
//! `cavity_device::attribute`).

use rayon::prelude::*;

use cavity_device::attribute::{Attr, Scalar};
use cavity_device::dynamic::layout::{COUNT_WORDS, input_index_word};
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
    /// slot, every patch slot, word by word within a patch slot:
    /// `Capacity::attr_index`).
    pub fn attr_words(&self, kind: Kind) -> &[u32] {
        match kind {
            Kind::Vertex => &self.vertex_attrs,
            Kind::Edge => &self.edge_attrs,
            Kind::Face => &self.face_attrs,
        }
    }

    /// Words `first..first + words` of every active owned element of
    /// `kind`, in element order, with the elements' input indices
    /// ([`DynamicMesh::sources`]): `(sources, words)`, `words` words an
    /// element. What `Rounds::owned_words` reads.
    ///
    /// # Errors
    /// [`AttributeError::Unknown`] past the kind's attribute words.
    pub fn owned_words(
        &self,
        kind: Kind,
        first: u32,
        words: u32,
    ) -> Result<crate::rounds::OwnedWords, AttributeError> {
        check_words(self.cap.attr_stride(kind), kind, first, words)?;
        let all = self.attr_words(kind);
        let elements = self.elements(kind);
        let sources = elements.par_iter().map(|&(_, input)| input).collect();
        let values = elements
            .par_iter()
            .flat_map_iter(|&(at, _)| {
                (first..first + words).map(move |w| all[self.cap.attr_index(kind, at, w) as usize])
            })
            .collect();
        Ok((sources, values))
    }

    /// Sets words `first..first + words` of every local element of `kind`,
    /// owned or not (ribbon copies included), from `values` by input index
    /// (`words` values an input element, [`DynamicMesh::input_count`]
    /// elements); an element without an input index keeps its words. What
    /// `Rounds::set_by_input` writes.
    ///
    /// # Errors
    /// [`AttributeError::Unknown`] past the kind's attribute words or over
    /// its input index word (which places the element in element order),
    /// [`AttributeError::Length`] unless `values` holds `words` words an
    /// input element.
    pub fn set_words_by_input(
        &mut self,
        kind: Kind,
        first: u32,
        words: u32,
        values: &[u32],
    ) -> Result<(), AttributeError> {
        let stride = self.cap.attr_stride(kind);
        check_writable(stride, kind, first, words)?;
        let inputs = self.input_count(kind) as usize;
        check_by_input(kind, inputs, words, values.len())?;
        let cap = self.cap;
        let slot = cap.attr_words(kind) as usize;
        if slot == 0 || words == 0 {
            return Ok(());
        }
        let index_word = input_index_word(kind);
        let counts = &self.counts;
        let all = match kind {
            Kind::Vertex => &mut self.vertex_attrs,
            Kind::Edge => &mut self.edge_attrs,
            Kind::Face => &mut self.face_attrs,
        };
        all.par_chunks_mut(slot)
            .take(self.num_patches as usize)
            .enumerate()
            .for_each(|(p, patch)| {
                let n = counts[COUNT_WORDS as usize * p + kind as usize];
                // Word `i` of local `l` within the patch slot.
                let at = |l: u32, i: u32| cap.attr_index(kind, (0, l), i) as usize;
                for l in 0..n {
                    let input = patch[at(l, index_word)] as usize;
                    if input >= inputs {
                        continue;
                    }
                    for w in 0..words {
                        patch[at(l, first + w)] = values[input * words as usize + w as usize];
                    }
                }
            });
        Ok(())
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
        let words = N as u32 * T::WORDS;
        let (_, all) = self.owned_words(attr.kind(), attr.offset(), words)?;
        Ok(values_of(&all))
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
        self.set_attributes(|w| w.set(attr, values))
    }

    /// Sets several attributes ([`AttributeWriter::set`], each as
    /// [`DynamicMesh::set_attribute`] does) with the element order and the
    /// ribbon's owners worked out once per kind, not once per attribute.
    ///
    /// # Errors
    /// The first error of `write`.
    pub fn set_attributes(
        &mut self,
        write: impl FnOnce(&mut AttributeWriter<'_>) -> Result<(), AttributeError>,
    ) -> Result<(), AttributeError> {
        write(&mut AttributeWriter {
            mesh: self,
            plans: [None, None, None],
        })
    }

    /// Per element slot of `kind` (every patch slot), the element in
    /// element order whose value it holds: an active owned element its
    /// own, a ribbon copy its owner's (`u32::MAX`: neither); and the
    /// number of elements.
    fn slot_sources(&self, kind: Kind) -> (Vec<u32>, usize) {
        let elements = self.elements(kind);
        let cap = self.cap.of(kind);
        let mut source = vec![u32::MAX; (self.cap.patches * cap) as usize];
        for (e, &((p, l), _)) in elements.iter().enumerate() {
            source[(p * cap + l) as usize] = e as u32;
        }
        let mesh = self;
        let copies: Vec<(u32, u32)> = (0..self.num_patches)
            .into_par_iter()
            .flat_map_iter(|p| {
                let table = mesh.frozen_table(p, kind);
                mesh.active(p, kind)
                    .filter(|&l| !mesh.is_owned(p, kind, l))
                    .filter_map(|l| {
                        let (q, owner) = mesh.owner_in(&table, p, kind, l)?;
                        mesh.is_owned(q, kind, owner)
                            .then_some((p * cap + l, q * cap + owner))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        for (slot, owner) in copies {
            source[slot as usize] = source[owner as usize];
        }
        (source, elements.len())
    }
}

/// Writes attributes of a dynamic mesh in element order
/// ([`DynamicMesh::set_attributes`]).
pub struct AttributeWriter<'a> {
    mesh: &'a mut DynamicMesh,
    /// Per kind, once needed: [`DynamicMesh::slot_sources`].
    plans: [Option<(Vec<u32>, usize)>; 3],
}

impl AttributeWriter<'_> {
    /// Sets `attr` of every active owned element of its kind to `values`,
    /// in element order, and of every ribbon copy to its owner's value.
    ///
    /// # Errors
    /// As [`DynamicMesh::set_attribute`].
    pub fn set<T: Scalar, const N: usize>(
        &mut self,
        attr: &Attr<T, N>,
        values: &[[T; N]],
    ) -> Result<(), AttributeError> {
        let info = self.mesh.attributes.info(attr)?;
        let kind = attr.kind();
        let plan = &mut self.plans[kind as usize];
        if plan.is_none() {
            *plan = Some(self.mesh.slot_sources(kind));
        }
        let (source, count) = plan.as_ref().expect("computed above");
        if values.len() != *count {
            return Err(AttributeError::Length {
                name: info.name.clone(),
                expected: *count,
                got: values.len(),
            });
        }
        let cap = self.mesh.cap;
        let words = match kind {
            Kind::Vertex => &mut self.mesh.vertex_attrs,
            Kind::Edge => &mut self.mesh.edge_attrs,
            Kind::Face => &mut self.mesh.face_attrs,
        };
        // One patch slot's words per task, word `i` of local element `l`
        // at `Capacity::attr_index` of patch 0.
        words
            .par_chunks_mut(cap.attr_words(kind).max(1) as usize)
            .zip(source.par_chunks(cap.of(kind).max(1) as usize))
            .for_each(|(slot, sources)| {
                for (l, &e) in (0..).zip(sources) {
                    let Some(value) = values.get(e as usize) else {
                        continue;
                    };
                    for (c, x) in (0..).zip(value) {
                        let w = x.to_words();
                        for k in 0..T::WORDS {
                            let word = attr.offset() + c * T::WORDS + k;
                            slot[cap.attr_index(kind, (0, l), word) as usize] = w[k as usize];
                        }
                    }
                }
            });
        Ok(())
    }
}

/// Checks that words `first..first + words` lie within the `stride`
/// attribute words of an element of `kind`.
///
/// # Errors
/// [`AttributeError::Unknown`] when they do not.
pub(crate) fn check_words(
    stride: u32,
    kind: Kind,
    first: u32,
    words: u32,
) -> Result<(), AttributeError> {
    if first.checked_add(words).is_none_or(|end| end > stride) {
        return Err(AttributeError::Unknown {
            attribute: format!(
                "words {first}..{} of a {kind:?}",
                u64::from(first) + u64::from(words)
            ),
        });
    }
    Ok(())
}

/// Checks that `len` words hold `words` words for each of `inputs` input
/// elements of `kind`.
///
/// # Errors
/// [`AttributeError::Length`] when they do not.
pub(crate) fn check_by_input(
    kind: Kind,
    inputs: usize,
    words: u32,
    len: usize,
) -> Result<(), AttributeError> {
    if len != inputs * words as usize {
        let plural = if words == 1 { "" } else { "s" };
        return Err(AttributeError::Length {
            name: format!("{words} word{plural} a {kind:?} by input index"),
            expected: inputs * words as usize,
            got: len,
        });
    }
    Ok(())
}

/// [`check_words`] for a write: the words must also leave the element's
/// input index word alone.
///
/// # Errors
/// [`AttributeError::Unknown`] when they do not.
pub(crate) fn check_writable(
    stride: u32,
    kind: Kind,
    first: u32,
    words: u32,
) -> Result<(), AttributeError> {
    check_words(stride, kind, first, words)?;
    let index_word = input_index_word(kind);
    if words > 0 && first <= index_word && index_word < first + words {
        return Err(AttributeError::Unknown {
            attribute: format!(
                "words {first}..{} of a {kind:?}, over its input index",
                first + words
            ),
        });
    }
    Ok(())
}

/// Values of `N` components of `T` from their words, value after value
/// (`T::WORDS` words a component, low word first).
pub(crate) fn values_of<T: Scalar, const N: usize>(words: &[u32]) -> Vec<[T; N]> {
    let per = N * T::WORDS as usize;
    words
        .par_chunks_exact(per.max(1))
        .map(|w| {
            std::array::from_fn(|c| {
                let at = c * T::WORDS as usize;
                let hi = if T::WORDS == 2 { w[at + 1] } else { 0 };
                T::from_words([w[at], hi])
            })
        })
        .collect()
}
