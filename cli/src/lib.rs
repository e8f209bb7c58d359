//! The parts of the `loopguard` command that other programs (its fuzz targets, its benchmark)
//! drive directly: reading lines, feeding records to the guards, configuration files, reports.

pub mod lines;
pub mod records;
pub mod report;
pub mod settings;
