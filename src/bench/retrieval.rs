//! `assay bench` figures for retrieval: quality per mode on a dataset against a plain
//! baseline, index build throughput and query latency on a generated corpus, and embedding
//! throughput. Everything here is measured when called; nothing is a stored number.

use crate::retrieve::bm25::Bm25Index;
use crate::retrieve::{
    fuse_with_first_stage, index_dataset, open_or_build, CorpusIndex, IndexSettings, MiniLm, Reranker, RetrievalMode,
    RetrieveError,
};
use crate::corpus::{read_corpus, Chunk, ChunkSettings};
use crate::dataset::{CorpusFile, Dataset, Question};
use crate::metrics::ranking::{context_coverage, CONTEXT_COVERAGE_THRESHOLD};
use crate::record::RetrievedChunk;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The plain baseline: fixed word windows, no sentence or heading awareness.
pub const BASELINE_WINDOW_WORDS: usize = 160;
pub const BASELINE_STRIDE_WORDS: usize = 120;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QualityRow {
    /// `bm25`, `dense`, `hybrid` or `baseline` (BM25 over fixed windows).
    pub method: String,
    pub questions: usize,
    pub hit_at_1: f64,
    pub hit_at_5: f64,
    pub mrr: f64,
    /// Share of questions whose golden answer the top 5 chunks hold together: at least
    /// `CONTEXT_COVERAGE_THRESHOLD` of its distinct words occur in them (questions with an answer).
    #[serde(default)]
    pub answer_in_top_5: f64,
    /// Per question (in `QualityBench::question_ids` order): was its golden answer in the top
    /// 5? None when it has no answer with words to look for. Kept so the modes can be compared
    /// with the baseline question by question (paired statistics, `compare::against_baseline`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_found: Vec<Option<bool>>,
    /// For a reranked row: seconds and prompt tokens the reranker spent per question to
    /// rescore its depth of first-stage chunks (measured per chunk scored, times the depth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank_seconds_per_question: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank_tokens_per_question: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QualityBench {
    pub dataset: String,
    pub chunk_settings: ChunkSettings,
    pub chunks: usize,
    /// The questions measured, in the order of each row's `answer_found`.
    #[serde(default)]
    pub question_ids: Vec<String>,
    pub rows: Vec<QualityRow>,
    /// Where the baseline's text came from: `pdftotext` (poppler) for PDF manuals when it is
    /// installed, as the plain pipelines users compare with do, else Assay's own reading.
    #[serde(default)]
    pub baseline_text: String,
    /// Modes not measured and why (e.g. the MiniLM files are missing).
    pub not_measured: Vec<String>,
    /// The reranker of the `+rerank` rows (`rerank=MODEL@DEPTH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reranker: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScaleBench {
    pub documents: usize,
    pub chunks: usize,
    pub build_seconds: f64,
    pub chunks_per_second: f64,
    pub queries: usize,
    pub query_p50_ms: f64,
    pub query_p99_ms: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EmbeddingBench {
    pub chunks: usize,
    pub seconds: f64,
    pub chunks_per_second: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RetrievalBench {
    pub quality: Option<QualityBench>,
    pub scale: ScaleBench,
    pub embedding: Option<EmbeddingBench>,
}

#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub settings: IndexSettings,
    /// Folder with the MiniLM files; dense, hybrid and embedding figures need it.
    pub minilm_dir: Option<PathBuf>,
    /// The generated corpus has at least this many chunks.
    pub scale_chunks: usize,
    pub queries: usize,
    /// Scratch folder for the generated corpus and baseline index (removed afterwards).
    pub work_dir: PathBuf,
    /// Adds a `MODE+rerank` row for every mode: its first-stage chunks rescored by this.
    pub reranker: Option<Reranker>,
    /// Quality over the first N questions only (reranking on CPU costs seconds a question).
    pub questions: Option<usize>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            settings: IndexSettings::default(),
            minilm_dir: None,
            scale_chunks: 20_000,
            queries: 1_000,
            work_dir: std::env::temp_dir().join(format!("assay-retrieval-bench-{}", std::process::id())),
            reranker: None,
            questions: None,
        }
    }
}

/// All retrieval figures: quality on `dataset` (when given), scale, embedding throughput.
pub fn bench_retrieval(dataset: Option<&Dataset>, options: &BenchOptions) -> Result<RetrievalBench, RetrieveError> {
    let model = match &options.minilm_dir {
        Some(dir) => Some(MiniLm::load(dir)?),
        None => None,
    };
    let result = (|| {
        let quality = match dataset {
            Some(d) => Some(bench_quality(d, options, model.as_ref())?),
            None => None,
        };
        let scale = bench_scale(options)?;
        let embedding = match (&model, dataset) {
            (Some(m), Some(d)) => Some(bench_embedding(m, d, options.settings)?),
            _ => None,
        };
        Ok(RetrievalBench { quality, scale, embedding })
    })();
    let _ = std::fs::remove_dir_all(&options.work_dir);
    result
}

/// hit@1, hit@5 and MRR (over the top 5) for each mode and the baseline. Questions with
/// neither a golden context nor citations (e.g. refusals) are left out. Retrieval is scoped
/// by each question's `doc`, as the targets do.
pub fn bench_quality(
    dataset: &Dataset,
    options: &BenchOptions,
    model: Option<&MiniLm>,
) -> Result<QualityBench, RetrieveError> {
    const K: usize = 5;
    let (mut index, _) = index_dataset(dataset, options.settings)?;
    let questions: Vec<&Question> = dataset
        .questions
        .iter()
        .filter(|q| is_judgeable(q))
        .take(options.questions.unwrap_or(usize::MAX))
        .collect();
    let mut rows = Vec::new();
    let mut not_measured = Vec::new();
    let mut modes = vec![RetrievalMode::Bm25];
    match model {
        Some(m) => {
            index.ensure_embeddings(m)?;
            modes.extend([RetrievalMode::Dense, RetrievalMode::Hybrid]);
        }
        None => not_measured.push("dense and hybrid: no MiniLM model given".to_string()),
    }
    for &mode in &modes {
        let mut rankings = Vec::new();
        for q in &questions {
            rankings.push(index.search(&q.question, q.doc.as_deref(), K, mode, model)?);
        }
        rows.push(quality_row(mode.as_str(), &questions, &rankings));
    }
    if let Some(reranker) = &options.reranker {
        rows.extend(reranked_rows(&index, &questions, &modes, model, reranker, K)?);
    }
    let (baseline, baseline_text) = baseline_rankings(dataset, &questions, options, K)?;
    rows.push(quality_row("baseline", &questions, &baseline));
    Ok(QualityBench {
        dataset: dataset.manifest.name.clone(),
        chunk_settings: options.settings.chunking,
        chunks: index.chunks.len(),
        question_ids: questions.iter().map(|q| q.id.clone()).collect(),
        rows,
        baseline_text,
        not_measured,
        reranker: options.reranker.as_ref().map(Reranker::describe),
    })
}

/// A `MODE+rerank` row per mode. The modes' candidate lists overlap, so each (question,
/// chunk) pair is scored once and the cost per question is measured per chunk scored, times
/// the depth: what one mode's reranking costs.
fn reranked_rows(
    index: &CorpusIndex,
    questions: &[&Question],
    modes: &[RetrievalMode],
    model: Option<&MiniLm>,
    reranker: &Reranker,
    k: usize,
) -> Result<Vec<QualityRow>, RetrieveError> {
    let depth = reranker.depth_for(k);
    let mut candidates: Vec<Vec<Vec<RetrievedChunk>>> = Vec::new();
    for &mode in modes {
        let mut per_question = Vec::new();
        for q in questions {
            per_question.push(index.search(&q.question, q.doc.as_deref(), depth, mode, model)?);
        }
        candidates.push(per_question);
    }
    let (mut seconds, mut tokens, mut scored) = (0.0f64, 0usize, 0usize);
    let mut probability: Vec<HashMap<String, f64>> = vec![HashMap::new(); questions.len()];
    for (i, q) in questions.iter().enumerate() {
        let mut fresh: Vec<RetrievedChunk> = Vec::new();
        for chunk in candidates.iter().flat_map(|per_question| &per_question[i]) {
            if !fresh.iter().any(|c| c.chunk_id == chunk.chunk_id) {
                fresh.push(chunk.clone());
            }
        }
        let (probabilities, cost) = reranker.score(&q.question, &fresh)?;
        seconds += cost.seconds;
        tokens += cost.tokens_read;
        scored += cost.candidates;
        probability[i] = fresh.iter().map(|c| c.chunk_id.clone()).zip(probabilities).collect();
        eprintln!("  reranked {}/{} questions ({:.1} s)", i + 1, questions.len(), seconds);
    }
    let per_chunk = |total: f64| if scored == 0 { 0.0 } else { total / scored as f64 };
    let mut rows = Vec::new();
    for (mode, per_question) in modes.iter().zip(candidates) {
        let rankings: Vec<Vec<RetrievedChunk>> = per_question
            .into_iter()
            .enumerate()
            .map(|(i, list)| {
                let p: Vec<f64> = list.iter().map(|c| probability[i].get(&c.chunk_id).copied().unwrap_or(0.0)).collect();
                fuse_with_first_stage(list, &p, k)
            })
            .collect();
        let mut row = quality_row(&format!("{mode}+rerank"), questions, &rankings);
        row.rerank_seconds_per_question = Some(per_chunk(seconds) * depth as f64);
        row.rerank_tokens_per_question = Some(per_chunk(tokens as f64) * depth as f64);
        rows.push(row);
    }
    Ok(rows)
}

fn is_judgeable(q: &Question) -> bool {
    !q.refuse && (q.context.as_deref().is_some_and(|c| !c.trim().is_empty()) || !q.citations.is_empty())
}

/// The golden context decides when there is one (the same coverage rule as the run's
/// `context_hit_at_k`, from `metrics::ranking`); otherwise the citations (a chunk id, or a
/// document id meaning any chunk of it).
pub fn is_relevant(q: &Question, chunk: &RetrievedChunk) -> bool {
    if let Some(coverage) = q.context.as_deref().and_then(|c| context_coverage(c, &chunk.text)) {
        return coverage >= CONTEXT_COVERAGE_THRESHOLD;
    }
    q.citations.iter().any(|c| *c == chunk.chunk_id || *c == chunk.doc)
}

fn quality_row(method: &str, questions: &[&Question], rankings: &[Vec<RetrievedChunk>]) -> QualityRow {
    let n = questions.len();
    let mut hit1 = 0.0;
    let mut hit5 = 0.0;
    let mut rr = 0.0;
    for (q, ranking) in questions.iter().zip(rankings) {
        if let Some(rank) = ranking.iter().take(5).position(|c| is_relevant(q, c)) {
            hit5 += 1.0;
            rr += 1.0 / (rank as f64 + 1.0);
            if rank == 0 {
                hit1 += 1.0;
            }
        }
    }
    let mean = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
    let answer_found: Vec<Option<bool>> = questions
        .iter()
        .zip(rankings)
        .map(|(q, ranking)| {
            let top: String = ranking.iter().take(5).map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n");
            let coverage = context_coverage(q.answer.as_deref()?, &top)?;
            Some(coverage >= CONTEXT_COVERAGE_THRESHOLD)
        })
        .collect();
    let answered = answer_found.iter().flatten().count();
    let found = answer_found.iter().flatten().filter(|f| **f).count();
    let answer_in_top_5 = if answered == 0 { 0.0 } else { found as f64 / answered as f64 };
    QualityRow {
        method: method.into(),
        questions: n,
        hit_at_1: mean(hit1),
        hit_at_5: mean(hit5),
        mrr: mean(rr),
        answer_in_top_5,
        answer_found,
        rerank_seconds_per_question: None,
        rerank_tokens_per_question: None,
    }
}

/// BM25 over fixed windows of each document's text (headings and sentences ignored), and
/// where that text came from. A PDF's text is poppler's `pdftotext` output when the tool is
/// installed, so the baseline is the plain pipeline users would build, not one that borrows
/// Assay's PDF reading.
fn baseline_rankings(
    dataset: &Dataset,
    questions: &[&Question],
    options: &BenchOptions,
    k: usize,
) -> Result<(Vec<Vec<RetrievedChunk>>, String), RetrieveError> {
    let read = read_corpus(&dataset.documents, options.settings.limits);
    let mut chunks = Vec::new();
    let mut pdftotext_used = 0usize;
    let mut pdfs = 0usize;
    for doc in &read.documents {
        let pdf = dataset
            .documents
            .iter()
            .find(|f| f.id == doc.id)
            .filter(|f| f.path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf")));
        pdfs += usize::from(pdf.is_some());
        let poppler_text = pdf.and_then(|f| pdftotext(&f.path));
        pdftotext_used += usize::from(poppler_text.is_some());
        let own_text;
        let text: &str = match &poppler_text {
            Some(t) => t,
            None => {
                own_text = doc.sections.iter().flat_map(|s| &s.blocks).map(|b| b.text.as_str()).collect::<Vec<_>>().join("\n");
                &own_text
            }
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let mut start = 0;
        loop {
            let end = (start + BASELINE_WINDOW_WORDS).min(words.len());
            chunks.push(Chunk {
                id: format!("{}#w{}", doc.id, start / BASELINE_STRIDE_WORDS),
                doc: doc.id.clone(),
                text: words[start..end].join(" "),
                heading: None,
                page: None,
            });
            if end == words.len() {
                break;
            }
            start += BASELINE_STRIDE_WORDS;
        }
    }
    let dir = options.work_dir.join("baseline");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| RetrieveError::io(&dir, e))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| RetrieveError::io(&dir, e))?;
    let index = Bm25Index::build(&dir, &chunks)?;
    let mut rankings = Vec::new();
    for q in questions {
        let ranked = index.search(&q.question, q.doc.as_deref(), k)?;
        rankings.push(
            ranked
                .into_iter()
                .filter_map(|(i, score)| chunks.get(i).map(|c| (c, score)))
                .map(|(c, score)| RetrievedChunk {
                    chunk_id: c.id.clone(),
                    doc: c.doc.clone(),
                    score,
                    text: c.text.clone(),
                })
                .collect(),
        );
    }
    let source = match (pdfs, pdftotext_used) {
        (0, _) => "Assay's reading (no PDF manuals)".to_string(),
        (n, used) if used == n => format!("pdftotext for the {n} PDF manuals"),
        (n, 0) => format!("Assay's reading (pdftotext not installed; {n} PDF manuals)"),
        (n, used) => format!("pdftotext for {used} of {n} PDF manuals, Assay's reading for the rest"),
    };
    Ok((rankings, source))
}

/// poppler's text of a PDF, or None when `pdftotext` is not installed or fails on the file.
fn pdftotext(path: &Path) -> Option<String> {
    let output = std::process::Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(path)
        .arg("-")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Build an index of a generated corpus (Markdown manuals whose sections are one chunk each)
/// and time it, then time BM25 queries drawn from the same word distribution.
pub fn bench_scale(options: &BenchOptions) -> Result<ScaleBench, RetrieveError> {
    let corpus_dir = options.work_dir.join("generated-corpus");
    let files = generate_corpus(&corpus_dir, options.scale_chunks, options.settings.chunking)?;
    let cache = options.work_dir.join("generated-index");
    let start = Instant::now();
    let (index, _) = open_or_build(&files, &cache, options.settings)?;
    let build_seconds = start.elapsed().as_secs_f64();
    let latencies = time_queries(&index, options.queries)?;
    Ok(ScaleBench {
        documents: files.len(),
        chunks: index.chunks.len(),
        build_seconds,
        chunks_per_second: index.chunks.len() as f64 / build_seconds.max(1e-9),
        queries: latencies.len(),
        query_p50_ms: percentile(&latencies, 0.50),
        query_p99_ms: percentile(&latencies, 0.99),
    })
}

/// Embed every chunk of the dataset's corpus once (not cached) and time it.
pub fn bench_embedding(model: &MiniLm, dataset: &Dataset, settings: IndexSettings) -> Result<EmbeddingBench, RetrieveError> {
    let (index, _) = index_dataset(dataset, settings)?;
    let windows: Vec<String> = index.chunks.iter().flat_map(crate::retrieve::dense::chunk_windows).collect();
    let refs: Vec<&str> = windows.iter().map(String::as_str).collect();
    let start = Instant::now();
    model.embed(&refs)?;
    let seconds = start.elapsed().as_secs_f64();
    let chunks = index.chunks.len();
    Ok(EmbeddingBench { chunks, seconds, chunks_per_second: chunks as f64 / seconds.max(1e-9) })
}

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    if sorted_ms.is_empty() {
        return 0.0;
    }
    let rank = ((sorted_ms.len() as f64 * p).ceil() as usize).clamp(1, sorted_ms.len());
    sorted_ms[rank - 1]
}

/// A vocabulary of pronounceable made-up words with Zipf-like frequencies, as in real text.
struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Vocabulary {
    fn new(size: usize, rng: &mut ChaCha8Rng) -> Self {
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "tor", "van", "ster", "qui", "pa", "dre", "lu", "sen", "gor",
            "fi", "bal", "tem", "ro", "shi", "nal", "wex",
        ];
        let mut seen = HashSet::new();
        let mut words = Vec::with_capacity(size);
        while words.len() < size {
            let n = rng.random_range(1..=4);
            let word: String = (0..n).map(|_| SYLLABLES[rng.random_range(0..SYLLABLES.len())]).collect();
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=size)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Self { words, cumulative }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let x = rng.random::<f64>() * total;
        let i = self.cumulative.partition_point(|c| *c < x).min(self.words.len() - 1);
        &self.words[i]
    }
}

const BENCH_SEED: u64 = 20_000;
const SECTIONS_PER_DOCUMENT: usize = 100;

/// Write Markdown manuals with `chunks` sections in all; each section fits one chunk.
fn generate_corpus(dir: &Path, chunks: usize, chunking: ChunkSettings) -> Result<Vec<CorpusFile>, RetrieveError> {
    std::fs::create_dir_all(dir).map_err(|e| RetrieveError::io(dir, e))?;
    let mut rng = ChaCha8Rng::seed_from_u64(BENCH_SEED);
    let vocabulary = Vocabulary::new(20_000, &mut rng);
    // A section fills exactly one chunk: a shorter one would run on into the next (chunks under
    // half their budget do) and the corpus would have fewer chunks than asked for.
    let section_words = chunking.normalized().size_words;
    let documents = chunks.div_ceil(SECTIONS_PER_DOCUMENT);
    let mut files = Vec::with_capacity(documents);
    for d in 0..documents {
        let sections = SECTIONS_PER_DOCUMENT.min(chunks - d * SECTIONS_PER_DOCUMENT);
        let mut text = format!("# Generated manual {d}\n\n");
        for s in 0..sections {
            text.push_str(&format!("## Section {s} {}\n\n", vocabulary.sample(&mut rng)));
            let mut written = 0;
            while written < section_words {
                let len = rng.random_range(6..=16).min(section_words - written);
                let sentence: Vec<&str> = (0..len).map(|_| vocabulary.sample(&mut rng)).collect();
                text.push_str(&sentence.join(" "));
                text.push_str(". ");
                written += len;
            }
            text.push_str("\n\n");
        }
        let id = format!("generated-{d:04}");
        let path = dir.join(format!("{id}.md"));
        std::fs::write(&path, text).map_err(|e| RetrieveError::io(&path, e))?;
        files.push(CorpusFile { id, path });
    }
    Ok(files)
}

/// Sorted per-query latencies in milliseconds for `count` top-10 BM25 queries.
fn time_queries(index: &CorpusIndex, count: usize) -> Result<Vec<f64>, RetrieveError> {
    let mut rng = ChaCha8Rng::seed_from_u64(BENCH_SEED + 1);
    let vocabulary = Vocabulary::new(20_000, &mut ChaCha8Rng::seed_from_u64(BENCH_SEED));
    let mut latencies = Vec::with_capacity(count);
    for _ in 0..count {
        let len = rng.random_range(3..=8);
        let query: Vec<&str> = (0..len).map(|_| vocabulary.sample(&mut rng)).collect();
        let query = query.join(" ");
        let start = Instant::now();
        index.search(&query, None, 10, RetrievalMode::Bm25, None)?;
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    latencies.sort_by(f64::total_cmp);
    Ok(latencies)
}
