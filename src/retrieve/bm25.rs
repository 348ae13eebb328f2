//! The tantivy side: one tantivy document per chunk (its position in the chunk list, its
//! document id for scoping, heading + text for BM25 with English stemming).
//!
//! Questions are not parsed with tantivy's query language (a `?`, a quote or `AND` in a user's
//! question would change the meaning or fail): they go through the field's own analyzer and
//! each distinct term becomes an optional clause.

use super::dense::chunk_body;
use super::RetrieveError;
use crate::corpus::Chunk;
use std::path::{Path, PathBuf};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, STORED, STRING,
};
use tantivy::{doc, Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

/// tantivy's built-in analyzer: simple tokenizer, lowercasing, English Snowball stemmer.
const ANALYZER: &str = "en_stem";
/// One indexing thread keeps segment layout, and so ties, the same from build to build.
const WRITER_HEAP_BYTES: usize = 64 * 1024 * 1024;

pub(crate) struct Bm25Index {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    ord: Field,
    doc: Field,
    body: Field,
}

fn schema() -> (Schema, Field, Field, Field) {
    let mut builder = Schema::builder();
    let ord = builder.add_u64_field("ord", STORED | FAST);
    let doc = builder.add_text_field("doc", STRING);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(ANALYZER)
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    let body = builder.add_text_field("body", TextOptions::default().set_indexing_options(indexing));
    (builder.build(), ord, doc, body)
}

impl Bm25Index {
    pub(crate) fn build(dir: &Path, chunks: &[Chunk]) -> Result<Self, RetrieveError> {
        let (schema, ord, doc_field, body) = schema();
        let index = Index::create_in_dir(dir, schema).map_err(|e| RetrieveError::index(dir, e))?;
        let mut writer = index
            .writer_with_num_threads::<TantivyDocument>(1, WRITER_HEAP_BYTES)
            .map_err(|e| RetrieveError::index(dir, e))?;
        for (i, chunk) in chunks.iter().enumerate() {
            let text = chunk_body(chunk);
            writer
                .add_document(doc!(ord => i as u64, doc_field => chunk.doc.as_str(), body => text))
                .map_err(|e| RetrieveError::index(dir, e))?;
        }
        writer.commit().map_err(|e| RetrieveError::index(dir, e))?;
        writer.wait_merging_threads().map_err(|e| RetrieveError::index(dir, e))?;
        Self::open(dir)
    }

    pub(crate) fn open(dir: &Path) -> Result<Self, RetrieveError> {
        let index = Index::open_in_dir(dir).map_err(|e| RetrieveError::index(dir, e))?;
        let schema = index.schema();
        let field = |name: &str| schema.get_field(name).map_err(|e| RetrieveError::index(dir, e));
        let (ord, doc, body) = (field("ord")?, field("doc")?, field("body")?);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| RetrieveError::index(dir, e))?;
        Ok(Self { dir: dir.to_path_buf(), index, reader, ord, doc, body })
    }

    /// Chunk positions and BM25 scores, best first; only chunks of `doc` when given.
    pub(crate) fn search(
        &self,
        query: &str,
        doc: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(usize, f32)>, RetrieveError> {
        let mut analyzer =
            self.index.tokenizer_for_field(self.body).map_err(|e| RetrieveError::index(&self.dir, e))?;
        let mut terms: Vec<String> = Vec::new();
        let mut stream = analyzer.token_stream(query);
        stream.process(&mut |token| {
            if !terms.contains(&token.text) {
                terms.push(token.text.clone());
            }
        });
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.body, t);
                let query: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, query)
            })
            .collect();
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        if let Some(doc) = doc {
            let only_doc = TermQuery::new(Term::from_field_text(self.doc, doc), IndexRecordOption::Basic);
            query = Box::new(BooleanQuery::new(vec![
                (Occur::Must, query),
                (Occur::Must, Box::new(ConstScoreQuery::new(Box::new(only_doc), 0.0))),
            ]));
        }
        let searcher = self.reader.searcher();
        let hits = searcher
            .search(&query, &TopDocs::with_limit(limit))
            .map_err(|e| RetrieveError::index(&self.dir, e))?;
        let mut ranked = Vec::with_capacity(hits.len());
        for (score, address) in hits {
            let stored: TantivyDocument =
                searcher.doc(address).map_err(|e| RetrieveError::index(&self.dir, e))?;
            let ord = stored
                .get_first(self.ord)
                .and_then(|v| v.as_u64())
                .ok_or_else(|| RetrieveError::index(&self.dir, "a document without its chunk position"))?;
            ranked.push((ord as usize, score));
        }
        Ok(ranked)
    }
}
