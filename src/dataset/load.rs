//! Loading and validating a dataset folder.
