//! The built-in kinds as the API server's Go types make them: their fields and lists
//! (`types.rs`, from the generated `api_types.rs`), the defaults the API server sets, and the
//! validation it makes of them.

// Generated one entry a line, as a table is read; rustfmt would spread each over ten.
pub(super) mod base64;
pub(super) mod defaults;
pub(super) mod validation;
