//! Archives as bytes: the raw header view for hostile bytes, the member listing, and every
//! external parser's reading of an archive.

pub mod listing;
pub mod parser_listing;
pub mod parsers;
pub mod raw;
