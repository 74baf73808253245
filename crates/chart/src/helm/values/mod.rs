//! Values as Helm computes them for a render: user values gathered from files and `--set`
//! flags, dependency processing, coalescing with chart defaults, then schema validation.

mod coalesce;
mod deps;
mod schema;
mod schema_report;
mod warnings;

pub use coalesce::{
    GLOBAL_KEY, coalesce_tables, coalesce_values, coalesce_values_taking, merge_maps, merge_tables,
    merge_values,
};
pub use deps::{check_dependencies, missing_dependencies, path_value, process_dependencies, table};
pub(crate) use schema::prepare_meta_schema;
pub use schema::{
    ChartViolations, SchemaViolations, validate_against_schema, validate_single_schema,
};
pub use warnings::{Warnings, slog_line};
