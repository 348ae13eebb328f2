//! Schema migrations, numbered by `PRAGMA user_version`.
//!
//! Each entry moves the schema from version i to i+1 inside one transaction. Never edit a
//! released migration: append a new one.

pub const MIGRATIONS: &[&str] = &[
    // 1: runs, items, metrics, verdicts.
    r#"
    CREATE TABLE runs (
        id                  TEXT PRIMARY KEY,
        name                TEXT NOT NULL,
        dataset             TEXT NOT NULL,
        dataset_root        TEXT NOT NULL,
        dataset_fingerprint TEXT NOT NULL,
        config_json         TEXT NOT NULL,
        config_hash         TEXT NOT NULL,
        status              TEXT NOT NULL,
        total_items         INTEGER NOT NULL,
        created_at          TEXT NOT NULL,
        finished_at         TEXT,
        experiment          TEXT
    );
    CREATE TABLE items (
        run_id            TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        question_id       TEXT NOT NULL,
        position          INTEGER NOT NULL,
        question_json     TEXT NOT NULL,
        answer_json       TEXT,
        error             TEXT,
        latency_ms        INTEGER,
        prompt_tokens     INTEGER,
        completion_tokens INTEGER,
        finished_at       TEXT NOT NULL,
        PRIMARY KEY (run_id, question_id)
    );
    CREATE TABLE metrics (
        run_id      TEXT NOT NULL,
        question_id TEXT NOT NULL,
        name        TEXT NOT NULL,
        value       REAL NOT NULL,
        PRIMARY KEY (run_id, question_id, name),
        FOREIGN KEY (run_id, question_id) REFERENCES items(run_id, question_id) ON DELETE CASCADE
    );
    CREATE TABLE verdicts (
        run_id       TEXT NOT NULL,
        question_id  TEXT NOT NULL,
        judge        TEXT NOT NULL,
        verdict_json TEXT NOT NULL,
        score        REAL,
        PRIMARY KEY (run_id, question_id, judge),
        FOREIGN KEY (run_id, question_id) REFERENCES items(run_id, question_id) ON DELETE CASCADE
    );
    CREATE INDEX runs_created ON runs(created_at);
    "#,
    // 2: the generation cache (see generation_cache.rs).
    r#"
    CREATE TABLE generations (
        key               TEXT PRIMARY KEY,
        model_sha256      TEXT NOT NULL,
        text              TEXT NOT NULL,
        prompt_tokens     INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        latency_ms        INTEGER NOT NULL,
        created_at        TEXT NOT NULL
    );
    "#,
    // 3: pairwise judgments (see pairwise.rs): one row per question of a compared pair of runs,
    // per judge spec and judge model, so a second comparison reuses them.
    r#"
    CREATE TABLE pairwise_judgments (
        run_a          TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        run_b          TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        question_id    TEXT NOT NULL,
        judge_sha256   TEXT NOT NULL,
        judge_model    TEXT NOT NULL,
        answers_sha256 TEXT NOT NULL,
        judgment_json  TEXT NOT NULL,
        p_b            REAL,
        created_at     TEXT NOT NULL,
        PRIMARY KEY (run_a, run_b, question_id, judge_sha256, judge_model)
    );
    CREATE INDEX pairwise_judgments_run_b ON pairwise_judgments(run_b);
    "#,
    // 4: people's labels on answers (see labels.rs): the current label of each answered
    // question of a run, gone with its item (a retried item is a new answer, unlabelled).
    r#"
    CREATE TABLE labels (
        run_id      TEXT NOT NULL,
        question_id TEXT NOT NULL,
        label       TEXT NOT NULL CHECK (label IN ('correct', 'wrong', 'skip')),
        note        TEXT,
        labelled_at TEXT NOT NULL,
        PRIMARY KEY (run_id, question_id),
        FOREIGN KEY (run_id, question_id) REFERENCES items(run_id, question_id) ON DELETE CASCADE
    );
    "#,
];

/// The schema version that added the `generations` table.
pub const GENERATIONS_SCHEMA: i64 = 2;
