//! `#[derive(AttributeSet)]`: declares a struct of attribute handles
//! (`cavity_device::attribute::Attr<T, N>` fields) in an attribute layout
//! (`cavity::attributes::AttributeLayout`), one attribute per field, named
//! `PREFIX_FIELD`, on the vertices unless the struct or the field says
//! otherwise:
//!
//! ```ignore
//! #[derive(Clone, Copy, Debug, cavity::attributes::AttributeSet)]
//! #[attributes(prefix = "mcf", kind = "vertex")]
//! pub struct McfAttributes {
//!     pub fixed: Attr<u32, 1>,          // "mcf_fixed", on the vertices
//!     #[attribute(kind = "face")]
//!     pub area: Attr<f32, 1>,           // "mcf_area", on the faces
//! }
//! let attributes = McfAttributes::declare(&mut layout)?;
//! ```
//!
//! The implementation is `cavity::attributes::AttributeSet::declare`,
//! which fails with the layout's `AttributeError` when a name is taken or
//! the words of a kind run out.

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::quote;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, parse_macro_input};

/// The struct's or a field's `kind` and `prefix` / `name` options.
#[derive(Default)]
struct Options {
    kind: Option<String>,
    prefix: Option<String>,
    name: Option<String>,
}

/// Reads the options of the attributes named `path` (`attributes` on the
/// struct, `attribute` on a field).
fn options(attrs: &[syn::Attribute], path: &str) -> syn::Result<Options> {
    let mut o = Options::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident(path)) {
        attr.parse_nested_meta(|meta| {
            let value: LitStr = meta.value()?.parse()?;
            if meta.path.is_ident("kind") {
                o.kind = Some(value.value());
            } else if meta.path.is_ident("prefix") {
                o.prefix = Some(value.value());
            } else if meta.path.is_ident("name") {
                o.name = Some(value.value());
            } else {
                return Err(meta.error("expected `kind`, `prefix` or `name`"));
            }
            Ok(())
        })?;
    }
    Ok(o)
}

/// The layout's method for element kind `kind`.
fn kind_method(kind: &str, span: Span) -> syn::Result<Ident> {
    match kind {
        "vertex" | "edge" | "face" => Ok(Ident::new(kind, span)),
        other => Err(syn::Error::new(
            span,
            format!("unknown element kind {other:?}: use \"vertex\", \"edge\" or \"face\""),
        )),
    }
}

/// Derives `cavity::attributes::AttributeSet` for a struct of named
/// `Attr` fields (see the [crate](self) docs).
#[proc_macro_derive(AttributeSet, attributes(attributes, attribute))]
pub fn derive_attribute_set(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn expand(input: &DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "AttributeSet derives for structs only",
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(
            name,
            "AttributeSet needs named fields",
        ));
    };
    let set = options(&input.attrs, "attributes")?;
    let default_kind = set.kind.unwrap_or_else(|| "vertex".into());
    let mut inits = Vec::new();
    for field in &fields.named {
        let ident = field.ident.as_ref().expect("named fields");
        let own = options(&field.attrs, "attribute")?;
        let kind = kind_method(own.kind.as_deref().unwrap_or(&default_kind), ident.span())?;
        let attribute = own.name.unwrap_or_else(|| match &set.prefix {
            Some(prefix) => format!("{prefix}_{ident}"),
            None => ident.to_string(),
        });
        inits.push(quote! { #ident: layout.#kind(#attribute)? });
    }
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics ::cavity::attributes::AttributeSet for #name #ty_generics #where_clause {
            fn declare(
                layout: &mut ::cavity::attributes::AttributeLayout,
            ) -> ::core::result::Result<Self, ::cavity::attributes::AttributeError> {
                ::core::result::Result::Ok(Self { #(#inits),* })
            }
        }
    })
}
