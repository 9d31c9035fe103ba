//! Archives as bytes: the member listing and every external parser's reading of an archive.
//! The raw header view and writer for hostile bytes are `snapconf_tarbytes::raw`.

pub mod listing;
pub mod parser_listing;
pub mod parsers;
