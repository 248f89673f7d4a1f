// Copyright 2026 The operator-rs authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The `manifests` binary, run by `make manifests`: writes what [`at_operator::manifests`]
//! derives from the code into `config/`, and deletes CRD files whose kinds no longer exist.

use std::process::ExitCode;

fn main() -> ExitCode {
    at_operator::manifests().main()
}
