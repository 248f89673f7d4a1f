//! Fuzz target: `edit --multigroup` on user code. Code as people write it names the modules the
//! command moves (`api::v1`, `controller::captain`) in every way Rust allows: through `use` lines
//! of every shape (grouped, aliased, globs), in expressions, patterns, types, macro arguments and
//! attributes, in inline modules that glob-import their parent, in the library, in a test's
//! shared module (`tests/common/mod.rs`), in tests and examples through the crate's name.
//!
//! The oracle is rustc. Random user files go into a real project, which `operator-rs edit
//! --multigroup` moves; the files before and after are compiled with a stand-in of the project's
//! library (its modules, in the old and the new layout, with the items the user code names), so
//! that the check needs no kube: the files before must build against the old layout (else the
//! generator is wrong), and after against the new one, with no warning.
//!
//! Second target: the path rewriting never panics, whatever Rust it is given.

mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use operator_rs::commands::edit::paths::{self, Move};
use proptest::prelude::*;
use support::{folder, fuzz, run_ok};

/// The crate's name: the project folder's.
const CRATE: &str = "fuzzcrew";

/// What a file's `use` lines bring in, and how each item the statements use is then named. In
/// each path, `R` stands for the root: `crate` in the library, the crate's name outside.
struct Imports {
    lines: &'static [&'static str],
    /// controller::captain::CONTROLLER
    controller: &'static [&'static str],
    /// api::v1::Captain
    captain: &'static [&'static str],
    /// api::v1::CaptainSpec
    spec: &'static [&'static str],
    /// api::v1::captain::GROUP
    group: &'static [&'static str],
}

const ABSOLUTE: Imports = Imports {
    lines: &[],
    controller: &["R::controller::captain::CONTROLLER"],
    captain: &["R::api::v1::Captain", "R::api::v1::captain::Captain"],
    spec: &["R::api::v1::CaptainSpec"],
    group: &["R::api::v1::captain::GROUP"],
};

/// Sets of `use` lines that can stand together, with the names they make.
const IMPORTS: &[Imports] = &[
    ABSOLUTE,
    Imports {
        lines: &["use R::controller;", "use R::api;"],
        controller: &["controller::captain::CONTROLLER"],
        captain: &["api::v1::Captain"],
        spec: &["api::v1::captain::CaptainSpec"],
        group: &["api::v1::captain::GROUP"],
    },
    Imports {
        lines: &["use R::controller::captain;", "use R::api::v1;"],
        controller: &["captain::CONTROLLER"],
        captain: &["v1::Captain"],
        spec: &["v1::CaptainSpec"],
        group: &["v1::captain::GROUP"],
    },
    Imports {
        lines: &["use R::controller::*;", "use R::api::v1 as types;"],
        controller: &["captain::CONTROLLER"],
        captain: &["types::Captain"],
        spec: &["types::captain::CaptainSpec"],
        group: &["types::captain::GROUP"],
    },
    Imports {
        lines: &[
            "use R::api::*;",
            "use R::{api::v1::captain as cap, controller::captain::CONTROLLER as C};",
        ],
        controller: &["C"],
        captain: &["v1::Captain", "cap::Captain"],
        spec: &["v1::CaptainSpec"],
        group: &["cap::GROUP"],
    },
    Imports {
        lines: &[
            "use R::api::v1::{self, Captain, CaptainSpec};",
            "use R::controller::{self, captain::CONTROLLER};",
        ],
        controller: &["CONTROLLER", "controller::captain::CONTROLLER"],
        captain: &["Captain", "v1::Captain"],
        spec: &["CaptainSpec"],
        group: &["v1::captain::GROUP"],
    },
    Imports {
        lines: &["use R::api::{self, v1::*};", "use R::controller as ctl;"],
        controller: &["ctl::captain::CONTROLLER"],
        captain: &["Captain", "api::v1::Captain"],
        spec: &["CaptainSpec"],
        group: &["captain::GROUP"],
    },
];

/// Statements that use the items: `{c}` the controller, `{k}` Captain, `{s}` CaptainSpec, `{g}`
/// GROUP; expressions, patterns, types, macro arguments.
const STATEMENTS: &[&str] = &[
    "let _ = {c}.name;",
    "let _: Option<{k}> = None;",
    "let {s} { size } = {s}::default();\n    let _ = size;",
    "let _ = {k}::new({s} { size: 1 });",
    "let _ = format!(\"{}\", {c}.name);",
    "assert_eq!({g}, {g});",
    "let _ = vec![{c}.name];",
    "match {s}::default() {\n        {s} { size: 0 } => {}\n        _ => {}\n    }",
    "let _ = <{k}>::new(Default::default());",
    "let _: fn(&{k}) -> u8 = |_| 0;",
];

/// One statement with the names of `imports`, the root `root`.
fn statement(imports: &Imports, template: &str, pick: usize, root: &str) -> String {
    let name = |names: &[&str]| names[pick % names.len()].replace("R::", &format!("{root}::"));
    template
        .replace("{c}", &name(imports.controller))
        .replace("{k}", &name(imports.captain))
        .replace("{s}", &name(imports.spec))
        .replace("{g}", &name(imports.group))
}

/// A user file: `use` lines, a function of statements, and maybe an inline module that reaches
/// the same names through `use super::*;` (or its own absolute paths).
#[derive(Debug, Clone)]
struct UserFile {
    imports: usize,
    statements: Vec<(usize, usize)>,
    inline: Option<Vec<(usize, usize)>>,
}

fn user_file() -> impl Strategy<Value = UserFile> {
    let statements = || proptest::collection::vec((0..STATEMENTS.len(), 0..4usize), 1..5);
    (
        0..IMPORTS.len(),
        statements(),
        proptest::option::of(statements()),
    )
        .prop_map(|(imports, statements, inline)| UserFile {
            imports,
            statements,
            inline,
        })
}

impl UserFile {
    /// The file's text, with `root` for the crate (`crate`, or the crate's name).
    fn text(&self, root: &str, public_fn: &str) -> String {
        let imports = &IMPORTS[self.imports];
        let mut out = String::from("#![allow(unused_imports, dead_code)]\n");
        for line in imports.lines {
            let _ = writeln!(out, "{}", line.replace("R::", &format!("{root}::")));
        }
        let body = |statements: &[(usize, usize)]| {
            statements
                .iter()
                .map(|&(s, pick)| {
                    format!("    {}\n", statement(imports, STATEMENTS[s], pick, root))
                })
                .collect::<String>()
        };
        let _ = write!(
            out,
            "\npub fn {public_fn}() {{\n{}}}\n",
            body(&self.statements)
        );
        if let Some(inline) = &self.inline {
            let _ = write!(
                out,
                "\nmod inner {{\n    use super::*;\n\n    pub fn g() {{\n{}    }}\n}}\n",
                body(inline)
            );
        }
        out
    }
}

/// The stand-in of the project's library: its modules as `edit --multigroup` finds them (`old`)
/// or leaves them, with the items the user code names, and the user's modules.
fn stand_in(new: bool, user_modules: &[String]) -> String {
    let (api, controller) = if new {
        ("crew::v1", "crew::captain")
    } else {
        ("v1", "captain")
    };
    let nest = |path: &str, body: &str| {
        path.split("::")
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .fold(body.to_string(), |inner, m| {
                format!("pub mod {m} {{ {inner} }}")
            })
    };
    let captain = "pub mod captain {
        #[derive(Default)] pub struct Captain { pub spec: CaptainSpec }
        #[derive(Default, Clone, Copy)] pub struct CaptainSpec { pub size: u8 }
        impl Captain { pub fn new(spec: CaptainSpec) -> Self { Self { spec } } }
        pub const GROUP: &str = \"crew\";
    }
    pub use captain::{Captain, CaptainSpec};";
    let controller_body = "pub struct Controller { pub name: &'static str }
        pub const CONTROLLER: Controller = Controller { name: \"captain\" };";
    let mut out = String::from("#![allow(dead_code, unused_imports)]\n");
    let _ = writeln!(out, "pub mod api {{ {} }}", nest(api, captain));
    let _ = writeln!(
        out,
        "pub mod controller {{ {} }}",
        nest(controller, controller_body)
    );
    let _ = writeln!(out, "pub mod user {{");
    for module in user_modules {
        let _ = writeln!(out, "    pub mod {module};");
    }
    out.push_str("}\n");
    out
}

/// Builds the stand-in crate in `dir` with the user files of `project` (library modules under
/// src/user/, tests/, examples/); Err with rustc's output.
fn build(dir: &Path, project: &Path, new: bool, modules: &[String]) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir.join("src"));
    for folder in ["src/user", "tests", "examples"] {
        let from = project.join(folder);
        let to = dir.join(folder);
        let _ = std::fs::remove_dir_all(&to);
        std::fs::create_dir_all(&to).unwrap();
        for entry in walkdir::WalkDir::new(&from).min_depth(1) {
            let entry = entry.unwrap();
            let relative = entry.path().strip_prefix(&from).unwrap();
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(to.join(relative)).unwrap();
            } else if folder != "tests"
                || relative.starts_with("common")
                || relative.starts_with("fuzz")
            {
                std::fs::copy(entry.path(), to.join(relative)).unwrap();
            }
        }
    }
    std::fs::write(dir.join("src/lib.rs"), stand_in(new, modules)).unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--all-targets", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("RUSTFLAGS", "-D warnings")
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// One batch: the files in a fresh project, moved by the real command, built before and after.
fn check_batch(files: &[UserFile]) -> Result<(), TestCaseError> {
    let (_tmp, project) = folder(CRATE);
    run_ok(
        &project,
        &["init", "--domain", "example.com", "--license", "none"],
    );
    run_ok(
        &project,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--make=false",
        ],
    );
    let mut modules = Vec::new();
    std::fs::create_dir_all(project.join("src/user")).unwrap();
    std::fs::create_dir_all(project.join("tests/common")).unwrap();
    std::fs::create_dir_all(project.join("examples")).unwrap();
    let mut common = String::new();
    for (i, file) in files.iter().enumerate() {
        let module = format!("u{i}");
        std::fs::write(
            project.join(format!("src/user/{module}.rs")),
            file.text("crate", "f"),
        )
        .unwrap();
        modules.push(module);
        match i % 3 {
            0 => {
                let _ = writeln!(common, "pub mod c{i} {{\n{}}}", file.text(CRATE, "f"));
            }
            1 => std::fs::write(
                project.join(format!("tests/fuzz{i}.rs")),
                format!(
                    "{}\n#[test]\nfn t() {{\n    f();\n}}\n",
                    file.text(CRATE, "f")
                ),
            )
            .unwrap(),
            _ => std::fs::write(
                project.join(format!("examples/e{i}.rs")),
                format!("{}\nfn main() {{\n    f();\n}}\n", file.text(CRATE, "f")),
            )
            .unwrap(),
        }
    }
    std::fs::write(
        project.join("tests/common/mod.rs"),
        format!("#![allow(dead_code)]\n{common}"),
    )
    .unwrap();
    std::fs::write(project.join("tests/fuzz_common.rs"), "mod common;\n").unwrap();
    let lib = std::fs::read_to_string(project.join("src/lib.rs")).unwrap();
    std::fs::write(project.join("src/lib.rs"), format!("{lib}pub mod user;\n")).unwrap();
    let user_mod: String = modules.iter().map(|m| format!("pub mod {m};\n")).collect();
    std::fs::write(project.join("src/user/mod.rs"), user_mod).unwrap();

    let stand_in_dir = tempfile::tempdir().unwrap();
    std::fs::write(
        stand_in_dir.path().join("Cargo.toml"),
        format!("[package]\nname = \"{CRATE}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[workspace]\n"),
    )
    .unwrap();
    if let Err(errors) = build(stand_in_dir.path(), &project, false, &modules) {
        panic!(
            "the generated user code does not build before the move (a fault of this test):\n{errors}"
        );
    }
    let before = support::tree(&project);
    run_ok(&project, &["edit", "--multigroup"]);
    if let Err(errors) = build(stand_in_dir.path(), &project, true, &modules) {
        let mut shown = String::new();
        for (path, bytes) in &before {
            if path.starts_with("src/user/")
                || path.starts_with("tests/")
                || path.starts_with("examples/")
            {
                let _ = writeln!(
                    shown,
                    "--- {path} (before)\n{}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
        return Err(TestCaseError::fail(format!(
            "the user code does not build after edit --multigroup:\n{errors}\n{shown}"
        )));
    }
    Ok(())
}

#[test]
fn user_code_builds_after_edit_multigroup() {
    fuzz::run(
        "user_code",
        3,
        proptest::collection::vec(user_file(), 3..10),
        |files| check_batch(&files),
    );
}

/// Rust-looking text of path fragments, keywords and punctuation.
fn rust_soup() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "use ",
        "crate",
        "super",
        "self",
        "Self",
        "::",
        "api",
        "v1",
        "controller",
        "captain",
        "crew",
        "fuzzcrew",
        "*",
        "{",
        "}",
        "(",
        ")",
        ";",
        ",",
        " as ",
        "mod ",
        "pub ",
        "fn ",
        "x",
        "r#type",
        "#[path = \"x.rs\"]",
        "#[serde(with = \"crate::api::v1::a\")]",
        "#[doc = \"[`crate::api::v1`]\"]",
        "/// [`crate::controller::captain`]\n",
        "m!(",
        "$crate",
        "include_str!(\"a\")",
        "<",
        ">",
        "'a",
        "\"s\"",
        "\n",
        " ",
        "impl ",
        "struct S ",
    ];
    proptest::collection::vec(proptest::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

#[test]
fn rewriting_never_panics() {
    let segments = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    let moves = vec![
        Move::new(segments("api::v1"), 1, "crew"),
        Move::new(segments("controller::captain"), 1, "crew"),
        Move::new(segments("controller::crew"), 1, "crew"),
    ];
    let modules: paths::Modules = [
        "api",
        "api::v1",
        "controller",
        "controller::captain",
        "controller::crew",
    ]
    .into_iter()
    .map(segments)
    .collect();
    let places = [
        ("src/lib.rs", None),
        (
            "src/controller/captain.rs",
            Some("src/controller/crew/captain.rs"),
        ),
        ("src/api/v1/mod.rs", Some("src/api/crew/v1/mod.rs")),
        ("src/fleet.rs", None),
        ("tests/common/mod.rs", None),
    ];
    fuzz::run(
        "rust_soup",
        2000,
        (rust_soup(), 0..places.len()),
        |(text, place)| {
            let (path, to) = places[place];
            let old = paths::module_of(path);
            let new = to.and_then(paths::module_of).or_else(|| old.clone());
            let module = old.as_deref().zip(new.as_deref());
            match paths::rewrite(path, &text, module, CRATE, &modules, &moves) {
                Ok(out) => prop_assert!(syn::parse_file(&out).is_ok(), "{out}"),
                Err(error) => prop_assert!(!error.to_string().contains('\n'), "{error}"),
            }
            Ok(())
        },
    );
}
