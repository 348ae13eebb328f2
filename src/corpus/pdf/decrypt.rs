//! Encrypted PDFs, opened with the empty user password (most "protected" manuals only restrict
//! printing or copying behind an owner password) within the decoded-size budget.
//!
//! In the file an encrypted stream is ciphertext, so `inflate::check_decoded_size` cannot count
//! what it decodes to; and lopdf, when the empty password opens a file, decrypts it while
//! loading and at once decodes every object stream (`/Type /ObjStm`) without a limit: a few KB
//! of stacked Flate in an encrypted object stream allocate gigabytes. So lopdf is kept from
//! decrypting: in a copy of the file the trailer's `/Encrypt` key and the object streams' type
//! are renamed (same length), lopdf parses every object as it stands and decodes nothing, the
//! names are put back in the loaded document, and decryption is done here in lopdf's own steps
//! with the budget counted between them: each object decrypted (no size change), every stream's
//! decoded size counted through all its filters, and only then the object streams expanded.

use crate::corpus::DocumentProblem;
use pdf_extract::encryption::decrypt_object;
use pdf_extract::{Document, EncryptionState, Object, ObjectStream};

/// What the trailer's `/Encrypt` and the object streams' `/ObjStm` become in the copy lopdf
/// loads: names of the same length that lopdf gives no meaning.
const ENCRYPT: (&[u8], &[u8]) = (b"/Encrypt", b"/AssayEn");
const OBJECT_STREAM: (&[u8], &[u8]) = (b"/ObjStm", b"/AssayO");

/// Whether the file names an encryption dictionary (`/Encrypt` as a whole name).
pub(super) fn is_encrypted_file(bytes: &[u8]) -> bool {
    name_positions(bytes, ENCRYPT.0).next().is_some()
}

/// Load an encrypted file as it stands: every object parsed, nothing decrypted or decoded.
pub(super) fn load_undecrypted(bytes: &[u8]) -> Result<Document, DocumentProblem> {
    let mut copy = bytes.to_vec();
    for (name, stand_in) in [ENCRYPT, OBJECT_STREAM] {
        let positions: Vec<usize> = name_positions(bytes, name).collect();
        for at in positions {
            copy[at..at + name.len()].copy_from_slice(stand_in);
        }
    }
    let loaded = crate::third_party_panic::contain(|| Document::load_mem(&copy));
    let mut doc = match loaded {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => return Err(DocumentProblem::PdfUnreadable { message: e.to_string() }),
        Err(panic) => return Err(DocumentProblem::PdfUnreadable { message: format!("the PDF reader failed: {panic}") }),
    };
    if let Some(reference) = doc.trailer.remove(&ENCRYPT.1[1..]) {
        doc.trailer.set(&ENCRYPT.0[1..], reference);
    }
    for object in doc.objects.values_mut() {
        if let Ok(stream) = object.as_stream_mut() {
            if stream.dict.has_type(&OBJECT_STREAM.1[1..]) {
                stream.dict.set("Type", Object::Name(OBJECT_STREAM.0[1..].to_vec()));
            }
        }
    }
    Ok(doc)
}

/// Decrypt `doc` (loaded by `load_undecrypted`) with the empty password, refusing it when its
/// streams decode to more than `limit` bytes in all, before any of them is decoded.
pub(super) fn decrypt_within_budget(doc: &mut Document, limit: u64) -> Result<(), DocumentProblem> {
    doc.authenticate_raw_password(b"").map_err(|_| DocumentProblem::Encrypted)?;
    let encryption_id = doc.trailer.get(b"Encrypt").and_then(Object::as_reference).map_err(|_| DocumentProblem::Encrypted)?;
    let state = EncryptionState::decode(&*doc, b"").map_err(|_| DocumentProblem::Encrypted)?;
    for (&id, object) in doc.objects.iter_mut() {
        // The encryption dictionary itself is not encrypted.
        if id != encryption_id {
            decrypt_object(&state, id, object)
                .map_err(|e| DocumentProblem::PdfUnreadable { message: format!("object {} {} cannot be decrypted: {e}", id.0, id.1) })?;
        }
    }
    super::inflate::check_document_streams(doc, limit)?;
    // As lopdf's own `decrypt`: the objects of the object streams are added, never replacing
    // an object stored on its own.
    let mut contained = Vec::new();
    for object in doc.objects.values_mut() {
        let Ok(stream) = object.as_stream_mut() else { continue };
        if stream.dict.has_type(b"ObjStm") {
            if let Ok(objects) = ObjectStream::new(stream) {
                contained.extend(objects.objects);
            }
        }
    }
    for (id, object) in contained {
        doc.objects.entry(id).or_insert(object);
    }
    doc.trailer.remove(b"Encrypt");
    doc.objects.remove(&encryption_id);
    doc.encryption_state = Some(state);
    Ok(())
}

/// Where `name` occurs as a whole PDF name: followed by a delimiter or white space, not by
/// more name characters (`/EncryptMetadata` is another key).
fn name_positions<'a>(bytes: &'a [u8], name: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    bytes.windows(name.len()).enumerate().filter_map(move |(at, window)| {
        let whole = window == name
            && bytes.get(at + name.len()).is_none_or(|&next| next.is_ascii_whitespace() || b"/<>[]()%{}".contains(&next));
        whole.then_some(at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_names_are_found() {
        let text = b"<< /Encrypt 5 0 R /EncryptMetadata false >> << /Type /ObjStm/N 2 >> /ObjStms";
        assert_eq!(name_positions(text, ENCRYPT.0).collect::<Vec<_>>(), vec![3]);
        assert_eq!(name_positions(text, OBJECT_STREAM.0).collect::<Vec<_>>(), vec![53]);
        assert!(!is_encrypted_file(b"<< /EncryptMetadata true >>"));
    }
}
