//! The `answers` target: replays a JSONL file of answers another system produced.
