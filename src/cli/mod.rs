//! The subcommands of the `wayfarer` command line, one module each.

pub(crate) mod walk;
