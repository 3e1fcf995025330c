//! Placeholder until the bench-fixtures issue lands.
