//! Typed attributes on vertices, edges and faces (RXMesh section 4,
//! "attributes"; the dynamic paper stores them per patch, section 5.1): a
//! value of `N` components (1 to 4) of a [`Scalar`] type (`f32`, `f64` or
//! `u32`) per element.
//!
//! Values live in 32-bit words, per patch slot and element kind like
//! every array of the dynamic layout: each element of kind `k` has
//! `stride(k)` words (`dynamic::layout::Capacity::attr_stride`), and an
//! attribute is a fixed run of them, from word [`Attr::offset`]. An `f64`
//! takes two words (low word first). Within a patch slot the words are
//! stored word by word: word `i` of local element `l` of patch slot `p`
//! lies at `p × cap(k) × stride(k) + i × cap(k) + l`
//! (`dynamic::layout::Capacity::attr_index`), so that a warp's threads,
//! taking consecutive elements, read one word of each in one transaction. The dynamic core moves every word of an element with
//! it (migration, ownership changes, slicing), so an attribute stays with
//! its element whatever patch holds it.
//!
//! An [`Attr`] is a handle the host's attribute layout hands out
//! (`cavity::attributes::AttributeLayout`); it is plain data, passed to
//! kernels as a parameter.

use core::marker::PhantomData;

use crate::layout::Kind;

/// The scalar types of attribute components.
pub trait Scalar: Copy + Default + PartialEq + core::fmt::Debug + Send + Sync + 'static {
    /// 32-bit words of one value (1, or 2 for `f64`).
    const WORDS: u32;
    /// The type's code in a [`Reduction`].
    const TYPE: ScalarType;
    /// The value stored in `words` (`words[1]` unused for one-word types).
    fn from_words(words: [u32; 2]) -> Self;
    /// The words that store the value.
    fn to_words(self) -> [u32; 2];
    /// The value as an `f64` (exact for `f32` and `u32`).
    fn to_f64(self) -> f64;
    /// The `f64` rounded to this type (saturating for `u32`).
    fn from_f64(x: f64) -> Self;
}

/// Codes of the [`Scalar`] types.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    /// `f32`.
    F32 = 0,
    /// `f64`.
    F64 = 1,
    /// `u32`.
    U32 = 2,
}

impl ScalarType {
    /// The type of `code` (`u32` for an unknown code).
    #[inline(always)]
    pub fn from_code(code: u32) -> Self {
        match code {
            0 => ScalarType::F32,
            1 => ScalarType::F64,
            _ => ScalarType::U32,
        }
    }

    /// Words of one value.
    #[inline(always)]
    pub fn words(self) -> u32 {
        match self {
            ScalarType::F64 => 2,
            ScalarType::F32 | ScalarType::U32 => 1,
        }
    }

    /// The value stored in `words`, as an `f64`.
    #[inline(always)]
    pub fn load_f64(self, words: [u32; 2]) -> f64 {
        match self {
            ScalarType::F32 => f32::from_words(words).to_f64(),
            ScalarType::F64 => f64::from_words(words),
            ScalarType::U32 => words[0] as f64,
        }
    }

    /// The words that store `x` rounded to this type.
    #[inline(always)]
    pub fn store_f64(self, x: f64) -> [u32; 2] {
        match self {
            ScalarType::F32 => f32::from_f64(x).to_words(),
            ScalarType::F64 => x.to_words(),
            ScalarType::U32 => u32::from_f64(x).to_words(),
        }
    }
}

impl Scalar for f32 {
    const WORDS: u32 = 1;
    const TYPE: ScalarType = ScalarType::F32;
    #[inline(always)]
    fn from_words(words: [u32; 2]) -> Self {
        f32::from_bits(words[0])
    }
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        [self.to_bits(), 0]
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Scalar for f64 {
    const WORDS: u32 = 2;
    const TYPE: ScalarType = ScalarType::F64;
    #[inline(always)]
    fn from_words(words: [u32; 2]) -> Self {
        f64::from_bits(words[0] as u64 | (words[1] as u64) << 32)
    }
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        let b = self.to_bits();
        [b as u32, (b >> 32) as u32]
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
}

impl Scalar for u32 {
    const WORDS: u32 = 1;
    const TYPE: ScalarType = ScalarType::U32;
    #[inline(always)]
    fn from_words(words: [u32; 2]) -> Self {
        words[0]
    }
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        [self, 0]
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as u32
    }
}

/// Most components of an attribute.
pub const MAX_COMPONENTS: usize = 4;

/// An attribute of `N` components of type `T` on the elements of one
/// kind: where its words lie among an element's attribute words. Plain
/// data (a kernel parameter); made by the host's attribute layout. A
/// handle whose words do not fit the mesh's stride reads defaults and
/// writes nothing (see `DynMesh::load_attr`).
#[repr(C)]
pub struct Attr<T: Scalar, const N: usize> {
    kind: u32,
    offset: u32,
    _scalar: PhantomData<T>,
}

impl<T: Scalar, const N: usize> Attr<T, N> {
    /// The attribute on elements of `kind` whose words start at word
    /// `offset` of each element's attribute words. `N` must be 1 to
    /// [`MAX_COMPONENTS`] (checked at compile time).
    #[inline(always)]
    pub const fn new(kind: Kind, offset: u32) -> Self {
        const { assert!(N >= 1 && N <= MAX_COMPONENTS, "1 to 4 components") };
        Attr {
            kind: kind as u32,
            offset,
            _scalar: PhantomData,
        }
    }

    /// The kind of element the attribute is on.
    #[inline(always)]
    pub fn kind(&self) -> Kind {
        Kind::from_u32(self.kind)
    }

    /// The first of its words among an element's attribute words.
    #[inline(always)]
    pub const fn offset(&self) -> u32 {
        self.offset
    }

    /// Words of one value: `N × T::WORDS`.
    #[inline(always)]
    pub const fn words(&self) -> u32 {
        N as u32 * T::WORDS
    }

    /// The attribute as a run of words of a type, for [`Reduction`]s.
    #[inline(always)]
    pub fn words_of(&self) -> AttrWords {
        AttrWords {
            kind: self.kind,
            offset: self.offset,
            scalar: T::TYPE as u32,
            components: N as u32,
        }
    }
}

impl<T: Scalar, const N: usize> Clone for Attr<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Scalar, const N: usize> Copy for Attr<T, N> {}

impl<T: Scalar, const N: usize> PartialEq for Attr<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.offset == other.offset
    }
}
impl<T: Scalar, const N: usize> Eq for Attr<T, N> {}

impl<T: Scalar, const N: usize> core::fmt::Debug for Attr<T, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "Attr<{:?}, {N}>({:?} words {}..{})",
            T::TYPE,
            self.kind(),
            self.offset,
            self.offset + self.words()
        )
    }
}

// SAFETY: `repr(C)` of two `u32`s and a zero-sized marker: no padding, and
// every bit pattern is a valid value (an out-of-range handle is harmless,
// see `Attr`).
#[cfg(not(target_arch = "nvptx64"))]
unsafe impl<T: Scalar, const N: usize> bytemuck::Zeroable for Attr<T, N> {}
// SAFETY: as above.
#[cfg(not(target_arch = "nvptx64"))]
unsafe impl<T: Scalar, const N: usize> bytemuck::Pod for Attr<T, N> {}

/// An attribute without its static type: kind, first word, scalar type
/// ([`ScalarType`] code) and component count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct AttrWords {
    /// [`Kind`] as a number.
    pub kind: u32,
    /// First word.
    pub offset: u32,
    /// [`ScalarType`] code.
    pub scalar: u32,
    /// Components.
    pub components: u32,
}

impl AttrWords {
    /// Words of one value.
    #[inline(always)]
    pub fn words(&self) -> u32 {
        self.components * ScalarType::from_code(self.scalar).words()
    }

    /// Whether the fields name a kind, a scalar type and 1 to
    /// [`MAX_COMPONENTS`] components whose words lie within `stride(kind)`
    /// words (in `u64`: no offset wraps around).
    #[inline(always)]
    pub fn fits(&self, stride: impl Fn(Kind) -> u32) -> bool {
        self.kind < 3
            && self.scalar < 3
            && (1..=MAX_COMPONENTS as u32).contains(&self.components)
            && self.offset as u64 + self.words() as u64 <= stride(Kind::from_u32(self.kind)) as u64
    }
}

impl Reduction {
    /// Whether the reduction is one the kernel may run on a mesh of
    /// attribute strides `stride`: a known operation, operands that
    /// [`AttrWords::fits`], for `Dot`, `Axpy` and `Xpay` two operands of one
    /// kind, type and component count, and for `WeightedAxpy` and
    /// `WeightedXpay` also a weight of one component of that kind and type.
    #[inline(always)]
    pub fn fits(&self, stride: impl Fn(Kind) -> u32 + Copy) -> bool {
        let unary = self.op == ReduceOp::Max as u32 || self.op == ReduceOp::Sum as u32;
        let weighted =
            self.op == ReduceOp::WeightedAxpy as u32 || self.op == ReduceOp::WeightedXpay as u32;
        let binary = weighted
            || self.op == ReduceOp::Dot as u32
            || self.op == ReduceOp::Axpy as u32
            || self.op == ReduceOp::Xpay as u32;
        let same = self.x.kind == self.y.kind
            && self.x.scalar == self.y.scalar
            && self.x.components == self.y.components;
        let weight = !weighted
            || (self.w.kind == self.x.kind
                && self.w.scalar == self.x.scalar
                && self.w.components == 1
                && self.w.fits(stride));
        self.x.fits(stride) && (unary || (binary && same && weight && self.y.fits(stride)))
    }
}

/// What a reduction kernel computes over the active owned elements of one
/// kind (`dynamic::reduce`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `Σ x·y` over all components.
    Dot = 0,
    /// The largest component of `x` (NaN ignored; `-inf` when empty).
    Max = 1,
    /// `y ← alpha x + y` (floating-point attributes).
    Axpy = 2,
    /// `Σ x` over all components.
    Sum = 3,
    /// `y ← x + alpha y` (floating-point attributes): conjugate gradients'
    /// direction update (Shewchuk 1994, B2: `d ← r + β d`); a copy with
    /// `alpha = 0`.
    Xpay = 4,
    /// `y ← alpha x + y` (floating-point attributes), giving `Σ w |y|²`
    /// of the new `y` with the weight `w`: preconditioned conjugate
    /// gradients' residual update and `rᵀ D⁻¹ r` (Shewchuk 1994, B3: `r ←
    /// r - α q`, with `w = D⁻¹` the inverse of a diagonal preconditioner).
    WeightedAxpy = 5,
    /// `y ← w x + alpha y` (floating-point attributes), giving `y · y` of
    /// the new `y` as `Xpay`: preconditioned conjugate gradients' direction
    /// update (Shewchuk 1994, B3: `d ← D⁻¹ r + β d`); with `alpha = 0` the
    /// first direction.
    WeightedXpay = 6,
}

/// A reduction's parameters (plain data, a kernel parameter): the
/// operation ([`ReduceOp`] code), the attributes `x` and `y` (same kind,
/// type and components; `y` unused by `Max` and `Sum`), `alpha` and the
/// weight `w` (one component of `x`'s kind and type; read by
/// `WeightedAxpy` and `WeightedXpay` only).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Reduction {
    /// [`ReduceOp`] code.
    pub op: u32,
    /// Padding.
    pub reserved: u32,
    /// First operand.
    pub x: AttrWords,
    /// Second operand (written by `Axpy` and `Xpay`).
    pub y: AttrWords,
    /// `Axpy`'s and `Xpay`'s factor.
    pub alpha: f64,
    /// The weight of `WeightedAxpy` and `WeightedXpay` (zero otherwise).
    pub w: AttrWords,
}
