{{ rust_header }}//! The `manifests` binary, run by `make manifests`: writes what [`{{ crate_name }}::manifests`]
//! derives from the code into `config/`, and deletes CRD files whose kinds no longer exist.

use std::process::ExitCode;

fn main() -> ExitCode {
    {{ crate_name }}::manifests().main()
}
