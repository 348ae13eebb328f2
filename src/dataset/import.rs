//! Importers from other dataset formats.
