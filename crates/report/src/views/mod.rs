//! One view per command: the sections `show`, the end of `run`, `compare`, `report`,
//! `ls`, `list` and `doctor` print, composed once here, so that every format a command
//! has (text, Markdown, mail, HTML, JSON) renders the same sections. JSON goes through
//! [`crate::Section::json`], keyed by section id ([`crate::section::json`]).
//!
//! A view reads stored records, or, for `list` and `doctor`, what the binary collected
//! from the registries and the machine (this crate depends on neither). The binary's
//! commands parse their flags, open the store, pick a view and print what it renders.

pub mod after_run;
pub mod compare;
pub mod data;
pub mod doctor;
pub mod list;
pub mod ls;
pub mod parts;
pub mod report;
pub mod show;
pub mod view;

pub use data::Data;
pub use view::View;
