//! The `assay` command line. (Minimal: the `models` subcommand; the lead's full CLI replaces it.)

mod models;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "assay", version, about = "Offline evaluator for RAG and QA systems")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Local models: list, pull, add, try.
    #[command(subcommand)]
    Models(models::ModelsCommand),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Models(cmd) => models::run(cmd),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}
