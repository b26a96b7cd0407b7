//! User-declared, typed attributes on vertices, edges and faces (RXMesh
//! section 4; per patch in the dynamic paper, section 5.1).
//!
//! An [`AttributeLayout`] declares them before the mesh is built: each
//! declaration names the attribute, its element kind, scalar type (`f32`,
//! `f64`, `u32`) and component count (1 to 4), and returns the
//! [`Attr`] handle that host code and kernels use. The dynamic mesh
//! (`DynamicMesh::with_attributes`) lays the attributes out per patch slot
//! after the core's words (`cavity_device::attribute`), carries them through
//! migration, ownership changes and slicing, and uploads and downloads them
//! in the input's element order (`DynamicMesh::set_attribute`,
//! `DynamicMesh::attribute`); reductions run on either backend
//! (`rounds::Rounds::dot` and the others).
//!
//! ```
//! use cavity::attributes::AttributeLayout;
//!
//! let mut layout = AttributeLayout::new();
//! let velocity = layout.vertex::<f32, 3>("velocity").unwrap();
//! let label = layout.face::<u32, 1>("label").unwrap();
//! assert_eq!(layout.find::<f32, 3>("velocity").unwrap(), velocity);
//! assert!(layout.face::<f64, 2>("label").is_err(), "names are unique per kind");
//! # let _ = label;
//! ```

use cavity_device::attribute::{AttrWords, MAX_COMPONENTS, Reduction};
use cavity_device::dynamic::layout::{Capacity, core_attrs};
use cavity_device::dynamic::reduce;
use cavity_device::layout::Kind;

pub use cavity_device::attribute::{Attr, ReduceOp, Scalar, ScalarType};

/// Most words of user attributes per element of one kind (an `f64` of
/// four components takes eight).
pub const MAX_USER_WORDS: u32 = 64;

/// One declared attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeInfo {
    /// Its name, unique among the attributes of its kind.
    pub name: String,
    /// The element kind it is on.
    pub kind: Kind,
    /// Its scalar type.
    pub scalar: ScalarType,
    /// Its components (1 to 4).
    pub components: u32,
    /// Its first word among an element's attribute words.
    pub offset: u32,
}

/// The attributes a mesh carries, in declaration order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttributeLayout {
    entries: Vec<AttributeInfo>,
}

impl AttributeLayout {
    /// No attributes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares attribute `name` of `N` components of type `T` on the
    /// elements of `kind`; its values start at zero.
    ///
    /// # Errors
    /// [`AttributeError::Duplicate`] when `kind` has an attribute of that
    /// name; [`AttributeError::TooMany`] past [`MAX_USER_WORDS`] words per
    /// element of `kind`.
    pub fn add<T: Scalar, const N: usize>(
        &mut self,
        kind: Kind,
        name: &str,
    ) -> Result<Attr<T, N>, AttributeError> {
        if self
            .entries
            .iter()
            .any(|e| e.kind == kind && e.name == name)
        {
            return Err(AttributeError::Duplicate {
                name: name.to_string(),
                kind,
            });
        }
        let words = N as u32 * T::WORDS;
        let used = self.user_words(kind);
        if used + words > MAX_USER_WORDS {
            return Err(AttributeError::TooMany {
                name: name.to_string(),
                kind,
                words: used + words,
            });
        }
        let offset = core_attrs(kind) + used;
        self.entries.push(AttributeInfo {
            name: name.to_string(),
            kind,
            scalar: T::TYPE,
            components: N as u32,
            offset,
        });
        Ok(Attr::new(kind, offset))
    }

    /// [`AttributeLayout::add`] on vertices.
    ///
    /// # Errors
    /// As [`AttributeLayout::add`].
    pub fn vertex<T: Scalar, const N: usize>(
        &mut self,
        name: &str,
    ) -> Result<Attr<T, N>, AttributeError> {
        self.add(Kind::Vertex, name)
    }

    /// [`AttributeLayout::add`] on edges.
    ///
    /// # Errors
    /// As [`AttributeLayout::add`].
    pub fn edge<T: Scalar, const N: usize>(
        &mut self,
        name: &str,
    ) -> Result<Attr<T, N>, AttributeError> {
        self.add(Kind::Edge, name)
    }

    /// [`AttributeLayout::add`] on faces.
    ///
    /// # Errors
    /// As [`AttributeLayout::add`].
    pub fn face<T: Scalar, const N: usize>(
        &mut self,
        name: &str,
    ) -> Result<Attr<T, N>, AttributeError> {
        self.add(Kind::Face, name)
    }

    /// The handle of the attribute `name` on elements of `kind`.
    ///
    /// # Errors
    /// [`AttributeError::Unknown`] when there is none, and
    /// [`AttributeError::Type`] when it has another type or component
    /// count.
    pub fn find_on<T: Scalar, const N: usize>(
        &self,
        kind: Kind,
        name: &str,
    ) -> Result<Attr<T, N>, AttributeError> {
        let info = self
            .entries
            .iter()
            .find(|e| e.kind == kind && e.name == name)
            .ok_or_else(|| AttributeError::Unknown {
                attribute: format!("{} attribute {name:?}", kind_name(kind)),
            })?;
        check_type::<T, N>(info)?;
        Ok(Attr::new(kind, info.offset))
    }

    /// The handle of the attribute `name` (of whatever kind; the first
    /// declared when several kinds use the name).
    ///
    /// # Errors
    /// As [`AttributeLayout::find_on`].
    pub fn find<T: Scalar, const N: usize>(
        &self,
        name: &str,
    ) -> Result<Attr<T, N>, AttributeError> {
        let kind = self
            .entries
            .iter()
            .find(|e| e.name == name)
            .map_or(Kind::Vertex, |e| e.kind);
        self.find_on(kind, name)
    }

    /// The declaration `attr` was made by.
    ///
    /// # Errors
    /// [`AttributeError::Unknown`] for a handle of no declaration of this
    /// layout, [`AttributeError::Type`] for one of another type.
    pub fn info<T: Scalar, const N: usize>(
        &self,
        attr: &Attr<T, N>,
    ) -> Result<&AttributeInfo, AttributeError> {
        let info = self
            .entries
            .iter()
            .find(|e| e.kind == attr.kind() && e.offset == attr.offset())
            .ok_or_else(|| AttributeError::Unknown {
                attribute: format!("{attr:?}"),
            })?;
        check_type::<T, N>(info)?;
        Ok(info)
    }

    /// The declared attributes, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = &AttributeInfo> {
        self.entries.iter()
    }

    /// Words of user attributes per element of `kind`.
    pub fn user_words(&self, kind: Kind) -> u32 {
        self.entries
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.components * e.scalar.words())
            .sum()
    }

    /// Attribute words per element of `kind` in the dynamic layout
    /// (`Capacity::attr_stride`): the core's and the user's; none for
    /// edges and faces without user attributes.
    pub fn stride(&self, kind: Kind) -> u32 {
        let user = self.user_words(kind);
        if kind != Kind::Vertex && user == 0 {
            0
        } else {
            core_attrs(kind) + user
        }
    }
}

/// The reduction `op` of `x` (and `y` for `Dot`, `Axpy` and `Xpay`;
/// `alpha` for `Axpy` and `Xpay`), checked against `layout`: the kernel's parameters
/// (`cavity_device::dynamic::reduce`).
///
/// # Errors
/// [`AttributeError::Unknown`] or [`AttributeError::Type`] for a handle not
/// in `layout`; [`AttributeError::Operands`] for `Axpy` or `Xpay` on an
/// integer attribute.
pub fn reduction<T: Scalar, const N: usize>(
    layout: &AttributeLayout,
    op: ReduceOp,
    x: &Attr<T, N>,
    y: &Attr<T, N>,
    alpha: f64,
) -> Result<Reduction, AttributeError> {
    let info = layout.info(x)?;
    layout.info(y)?;
    if x.kind() != y.kind() {
        return Err(AttributeError::Operands(format!(
            "{:?} of {:?} needs two attributes of one kind, got {} and {} attributes",
            op,
            info.name,
            kind_name(x.kind()),
            kind_name(y.kind())
        )));
    }
    let writes = matches!(
        op,
        ReduceOp::Axpy | ReduceOp::Xpay | ReduceOp::WeightedAxpy | ReduceOp::WeightedXpay
    );
    if writes && T::TYPE == ScalarType::U32 {
        return Err(AttributeError::Operands(format!(
            "{op:?} needs floating-point attributes; {:?} holds u32 values",
            info.name
        )));
    }
    Ok(Reduction {
        op: op as u32,
        reserved: 0,
        x: x.words_of(),
        y: y.words_of(),
        alpha,
        w: AttrWords::default(),
    })
}

/// The weighted reduction `op` (`WeightedAxpy` or `WeightedXpay`) of `x`
/// and `y` with the weight `w` (one component per element of their kind)
/// and `alpha`, checked against `layout` as [`reduction`].
///
/// # Errors
/// As [`reduction`], and [`AttributeError::Operands`] for another
/// operation or a weight of another kind.
pub fn weighted_reduction<T: Scalar, const N: usize>(
    layout: &AttributeLayout,
    op: ReduceOp,
    x: &Attr<T, N>,
    y: &Attr<T, N>,
    w: &Attr<T, 1>,
    alpha: f64,
) -> Result<Reduction, AttributeError> {
    let info = layout.info(w)?;
    if !matches!(op, ReduceOp::WeightedAxpy | ReduceOp::WeightedXpay) {
        return Err(AttributeError::Operands(format!(
            "{op:?} takes no weight ({:?} given)",
            info.name
        )));
    }
    if w.kind() != x.kind() {
        return Err(AttributeError::Operands(format!(
            "{op:?} needs a weight of its operands' kind, got {} attribute {:?}",
            kind_name(w.kind()),
            info.name
        )));
    }
    Ok(Reduction {
        w: w.words_of(),
        ..reduction(layout, op, x, y, alpha)?
    })
}

/// Checks a reduction given to `Rounds::reduce` against the mesh's
/// capacity: the kernel would run nothing else.
///
/// # Errors
/// [`AttributeError::Operands`] for an unknown operation, a kind, type or
/// component count out of range, words past the kind's stride, or two
/// operands that disagree.
pub fn check_reduction(r: &Reduction, cap: &Capacity) -> Result<(), AttributeError> {
    if r.fits(|kind| cap.attr_stride(kind)) {
        Ok(())
    } else {
        Err(AttributeError::Operands(format!(
            "the reduction {r:?} does not fit the mesh's attributes: make it with attributes::reduction"
        )))
    }
}

/// Combines the per-patch partials of reduction `r` in patch order.
pub fn combine_partials(r: &Reduction, partials: &[f64]) -> f64 {
    let op = reduce::op_of(r.op);
    partials
        .iter()
        .fold(reduce::identity(op), |a, &b| reduce::combine(op, a, b))
}

/// Checks that `info` declares `N` components of `T`.
fn check_type<T: Scalar, const N: usize>(info: &AttributeInfo) -> Result<(), AttributeError> {
    const { assert!(N >= 1 && N <= MAX_COMPONENTS) };
    if info.scalar == T::TYPE && info.components == N as u32 {
        Ok(())
    } else {
        Err(AttributeError::Type {
            name: info.name.clone(),
            declared: format!("{:?} x {}", info.scalar, info.components),
            requested: format!("{:?} x {N}", T::TYPE),
        })
    }
}

/// The singular name of `kind`, for messages.
pub(crate) fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Vertex => "vertex",
        Kind::Edge => "edge",
        Kind::Face => "face",
    }
}

/// A set of attribute handles declared together in a layout: a struct of
/// `Attr` fields, each an attribute of one element kind. Derive it
/// (`#[derive(AttributeSet)]`, with `#[attributes(prefix = "..", kind =
/// "vertex")]` on the struct and `#[attribute(kind = "..", name = "..")]`
/// on a field) instead of declaring each handle by hand.
pub trait AttributeSet: Sized {
    /// Declares every attribute of the set in `layout`.
    ///
    /// # Errors
    /// [`AttributeError`] when a name is taken or the words of a kind run
    /// out.
    fn declare(layout: &mut AttributeLayout) -> Result<Self, AttributeError>;
}

/// Derives [`AttributeSet`] (crate `cavity-derive`).
pub use cavity_derive::AttributeSet;

/// Errors of declaring, reading, writing and reducing attributes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AttributeError {
    /// An attribute of that name is already declared on that kind: pick
    /// another name.
    #[error("a {} attribute named {name:?} is already declared", kind_name(*.kind))]
    Duplicate {
        /// The name.
        name: String,
        /// The element kind.
        kind: Kind,
    },
    /// The attributes of one kind need more than [`MAX_USER_WORDS`] words
    /// per element: declare fewer or smaller ones.
    #[error(
        "declaring {name:?} gives each {} {words} words of attributes, more than the {MAX_USER_WORDS} allowed",
        kind_name(*.kind)
    )]
    TooMany {
        /// The attribute that did not fit.
        name: String,
        /// The element kind.
        kind: Kind,
        /// Words it would have taken.
        words: u32,
    },
    /// No attribute of that name or handle is declared in the mesh's
    /// layout: declare it before building the mesh, and use the handle
    /// that layout returned.
    #[error("no {attribute} is declared in the mesh's attribute layout")]
    Unknown {
        /// The name or handle asked for.
        attribute: String,
    },
    /// The attribute is declared with another type or component count: use
    /// the declared one.
    #[error("attribute {name:?} is declared as {declared}, not {requested}")]
    Type {
        /// The attribute.
        name: String,
        /// Its declared type.
        declared: String,
        /// The type asked for.
        requested: String,
    },
    /// The values given are not one per element: give one per element, in
    /// the order `DynamicMesh::sources` lists them.
    #[error("attribute {name:?} takes {expected} values (one per element), got {got}")]
    Length {
        /// The attribute.
        name: String,
        /// Elements of its kind.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// The operands of a reduction are on different kinds, or `axpy` was
    /// asked of an integer attribute: use two attributes of one kind, and
    /// floating-point ones for `axpy`.
    #[error("{0}")]
    Operands(String),
}
