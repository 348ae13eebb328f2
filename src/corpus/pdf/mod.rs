//! PDF manuals read into sections: `pages` gets each page's text through pdf-extract (after
//! the document in memory is repaired where pdf-extract would misread it: `fonts`,
//! `unicode_maps`, `text_operators`; after `inflate` has bounded what its streams decode to,
//! `decrypt` opening an encrypted one within that bound,
//! and `drawing_work` what drawing its pages will cost through shared and nested streams),
//! `ligatures` puts back ligatures a font left without letters, and `layout` turns page text
//! into sections and blocks (running headers, footers and page numbers dropped).

mod decrypt;
mod drawing_work;
mod fonts;
mod inflate;
pub(super) mod layout;
mod ligatures;
pub(super) mod pages;
mod text_operators;
mod unicode_maps;
