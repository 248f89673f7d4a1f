//! Paths as people write them, rewritten for a single-group project `crew` moved to the multigroup
//! layout: `api::v1` → `api::crew::v1`, `controller::captain` → `controller::crew::captain`,
//! `webhook::v1` → `webhook::crew::v1`.

use super::*;

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The move from `from` to `to`, which has one segment more, inserted where the two first differ.
fn moved(from: &str, to: &str) -> Move {
    let (from, to) = (segments(from), segments(to));
    let at = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    Move::new(from, at, &to[at])
}

fn moves() -> Vec<Move> {
    [
        ("api::v1", "api::crew::v1"),
        ("controller::captain", "controller::crew::captain"),
        ("webhook::v1", "webhook::crew::v1"),
    ]
    .into_iter()
    .map(|(from, to)| moved(from, to))
    .collect()
}

/// The modules of the project before the move.
fn modules() -> Modules {
    [
        "api",
        "api::v1",
        "api::v1::captain",
        "controller",
        "controller::captain",
        "webhook",
        "webhook::v1",
        "webhook::v1::captain",
    ]
    .into_iter()
    .map(segments)
    .collect()
}

/// The file at `path`, rewritten; `to`: where it moves (None: it stays).
fn run(path: &str, to: Option<&str>, text: &str) -> Result<String> {
    let old = module_of(path);
    let new = to.and_then(module_of).or_else(|| old.clone());
    let module = old.as_deref().zip(new.as_deref());
    rewrite(path, text, module, "crew_operator", &modules(), &moves())
}

fn ok(path: &str, text: &str) -> String {
    run(path, None, text).unwrap()
}

#[test]
fn use_lines_in_every_form() {
    let text = "use crate::{api::v1::Captain, controller::captain};
use crate::api::{self, v1::{CaptainSpec, CaptainStatus}};
use crate::api::v1 as types;
use crate::api::{v1};
use self::api::v1::captain::Captain as C;
use ::std::fmt;
";
    assert_eq!(
        ok("src/lib.rs", text),
        "use crate::{api::crew::v1::Captain, controller::crew::captain};
use crate::api::{self, crew::v1::{CaptainSpec, CaptainStatus}};
use crate::api::crew::v1 as types;
use crate::api::{crew::v1};
use self::api::crew::v1::captain::Captain as C;
use ::std::fmt;
"
    );
}

#[test]
fn paths_through_names_a_use_brought_in() {
    let text = "use crate::api;
use crate::api::v1 as types;
use crate::api::*;

fn f() -> api::v1::Captain {
    let _: types::Captain = todo!();
    let _ = v1::Captain::crd();
    todo!()
}
";
    let out = ok("src/util.rs", text);
    assert!(out.contains("fn f() -> api::crew::v1::Captain {"), "{out}");
    // Through an alias of the moved module itself: the `use` line changed, the alias stays.
    assert!(out.contains("use crate::api::crew::v1 as types;"), "{out}");
    assert!(out.contains("let _: types::Captain"), "{out}");
    // Through a glob of its parent.
    assert!(out.contains("let _ = crew::v1::Captain::crd();"), "{out}");
}

#[test]
fn child_modules_of_the_parent() {
    let text = "pub mod v1;
// +operator-rs:scaffold:api-modules

pub fn crds() -> Vec<Crd> {
    vec![
        v1::Captain::crd(),
        // +operator-rs:scaffold:crds
    ]
}
";
    let out = ok("src/api/mod.rs", text);
    assert!(out.contains("        crew::v1::Captain::crd(),\n"), "{out}");
    // The module declaration is the move's to change, not the paths'.
    assert!(out.contains("pub mod v1;"), "{out}");
}

#[test]
fn macros_docs_and_the_crate_name() {
    let text = "//! Uses [`crate::api::v1::Captain`] and `crew_operator::api::v1`.
use crew_operator::api::v1::Captain;

/// See [`crew_operator::controller::captain::CONTROLLER`].
#[test]
fn t() {
    assert_eq!(crew_operator::api::v1::Captain::kind(&()), \"Captain\");
    let v = vec![crew_operator::webhook::v1::captain::webhooks()];
    let s = \"crew_operator::api::v1\";
}
";
    let out = ok("tests/captain.rs", text);
    assert!(
        out.contains("use crew_operator::api::crew::v1::Captain;"),
        "{out}"
    );
    assert!(
        out.contains("assert_eq!(crew_operator::api::crew::v1::Captain::kind(&()), \"Captain\");"),
        "{out}"
    );
    assert!(
        out.contains("vec![crew_operator::webhook::crew::v1::captain::webhooks()]"),
        "{out}"
    );
    assert!(
        out.contains("/// See [`crew_operator::controller::crew::captain::CONTROLLER`]."),
        "{out}"
    );
    // A doc comment of a test crate: its `crate` is the test's, its crate-name path is ours.
    assert!(
        out.contains("//! Uses [`crate::api::v1::Captain`] and `crew_operator::api::crew::v1`."),
        "{out}"
    );
    // Strings are data.
    assert!(out.contains("let s = \"crew_operator::api::v1\";"), "{out}");
}

#[test]
fn other_paths_stay() {
    let text = "use crate::api::v10::X;
use my_crate::api::v1::Y;
use crate::apiary::v1::Z;
mod local { pub mod v1 {} }
use local::v1 as w;
fn f() { let v1 = 1; let _ = v1 + 1; }
";
    assert_eq!(ok("src/other.rs", text), text);
    // In a test crate, `crate::api` is the test's own module.
    let test = "mod api { pub mod v1 {} }\nuse crate::api::v1;\n";
    assert_eq!(ok("tests/t.rs", test), test);
}

#[test]
fn a_moved_file_gets_one_more_super_where_it_leaves_itself() {
    let text = "use super::super::api::v1::Captain;
use super::Shared;
use super::{Context, Runner};
use crate::controller::captain::helper;

pub fn helper() {}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::Context as C;
}
";
    let out = run(
        "src/controller/captain.rs",
        Some("src/controller/crew/captain.rs"),
        text,
    )
    .unwrap();
    assert_eq!(
        out,
        "use super::super::super::api::crew::v1::Captain;
use super::super::Shared;
use super::super::{Context, Runner};
use crate::controller::crew::captain::helper;

pub fn helper() {}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::super::Context as C;
}
"
    );
}

#[test]
fn files_inside_a_moved_module_keep_their_relative_paths() {
    // src/webhook/v1/captain/defaulting.rs moves with its folder: `super` is still its kind's
    // module, `super::super` its version's.
    let text =
        "use super::Registration;\nuse super::super::captain;\nuse crate::api::v1::Captain;\n";
    let out = run(
        "src/webhook/v1/captain/defaulting.rs",
        Some("src/webhook/crew/v1/captain/defaulting.rs"),
        text,
    )
    .unwrap();
    assert_eq!(
        out,
        "use super::Registration;\nuse super::super::captain;\nuse crate::api::crew::v1::Captain;\n"
    );
}

#[test]
fn what_cannot_be_rewritten_is_refused_by_name() {
    let err = ok_err("src/util.rs", None, "fn f( {\n");
    assert!(
        err.contains("src/util.rs") && err.contains("not valid Rust"),
        "{err}"
    );
    let err = ok_err("src/util.rs", None, "#[path = \"x.rs\"]\nmod x;\n");
    assert!(err.contains("#[path]"), "{err}");
    let err = ok_err(
        "src/controller/captain.rs",
        Some("src/controller/crew/captain.rs"),
        "const S: &str = include_str!(\"data.txt\");\n",
    );
    assert!(err.contains("include_str!"), "{err}");
}

fn ok_err(path: &str, to: Option<&str>, text: &str) -> String {
    run(path, to, text).unwrap_err().to_string()
}

#[test]
fn rustfmt_layouts_and_unicode_keep_their_place() {
    let text = "// é à ü\nuse crate::{\n    api::v1::{Captain, CaptainSpec},\n    controller::captain,\n};\nconst É: &str = \"ü\"; use crate::api::v1::Captain as D;\n";
    assert_eq!(
        ok("src/lib.rs", text),
        "// é à ü\nuse crate::{\n    api::crew::v1::{Captain, CaptainSpec},\n    controller::crew::captain,\n};\nconst É: &str = \"ü\"; use crate::api::crew::v1::Captain as D;\n"
    );
}

/// Webhooks of kinds of two groups in one version move apart: `webhook::v1::captain` to
/// `webhook::crew::v1::captain`, `webhook::v1::pod` to `webhook::core::v1::pod`.
#[test]
fn modules_of_one_version_that_move_apart() {
    let moves: Vec<Move> = [
        ("webhook::v1::captain", "webhook::crew::v1::captain"),
        ("webhook::v1::pod", "webhook::core::v1::pod"),
    ]
    .into_iter()
    .map(|(from, to)| moved(from, to))
    .collect();
    let mut modules = modules();
    modules.insert(segments("webhook::v1::pod"));
    let run = |path: &str, text: &str| {
        let module = module_of(path);
        let module = module.as_deref().map(|m| (m, m));
        rewrite(path, text, module, "crew_operator", &modules, &moves)
    };
    let text = "pub mod v1;\n\npub fn webhooks() -> Vec<W> {\n    [v1::captain::webhooks(), v1::pod::webhooks()].concat()\n}\n";
    assert_eq!(
        run("src/webhook/mod.rs", text).unwrap(),
        "pub mod v1;\n\npub fn webhooks() -> Vec<W> {\n    [crew::v1::captain::webhooks(), core::v1::pod::webhooks()].concat()\n}\n"
    );
    let text = "use crate::webhook::v1::captain::defaulting;\nuse crate::webhook::{v1::pod};\n";
    assert_eq!(
        run("src/lib.rs", text).unwrap(),
        "use crate::webhook::crew::v1::captain::defaulting;\nuse crate::webhook::{core::v1::pod};\n"
    );
    // One `use` of both cannot say where each went: refused, naming the file.
    for text in [
        "use crate::webhook::v1::{captain, pod};\n",
        "use crate::webhook::v1;\nfn f() { v1::pod::webhooks(); }\n",
    ] {
        let err = run("src/lib.rs", text).unwrap_err().to_string();
        assert!(
            err.contains("src/lib.rs")
                && err.contains("webhook::v1")
                && err.contains("different groups"),
            "{err}"
        );
    }
}

/// Outside the library (a test's shared module, a bench, an example), a path through a name a
/// `use` of the crate brought in is rewritten like one in the library: in expressions, patterns,
/// types and macro arguments, and in an inline module that glob-imports its parent.
#[test]
fn paths_outside_the_library_through_names_of_the_crate() {
    let text = "use crew_operator::controller;
use crew_operator::api::*;

pub fn name() -> &'static str {
    let c = controller::captain::CONTROLLER;
    assert_eq!(c.name, controller::captain::CONTROLLER.name);
    match None::<v1::Captain> {
        Some(v1::Captain { .. }) => {}
        None => {}
    }
    c.name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t() {
        let _ = controller::captain::CONTROLLER;
    }
}
";
    for path in [
        "tests/common/mod.rs",
        "benches/fleet.rs",
        "examples/fleet.rs",
    ] {
        let out = ok(path, text);
        assert_eq!(
            out.matches("controller::crew::captain::CONTROLLER").count(),
            3,
            "{out}"
        );
        assert!(out.contains("None::<crew::v1::Captain>"), "{out}");
        assert!(out.contains("Some(crew::v1::Captain { .. })"), "{out}");
        assert!(out.contains("use crew_operator::controller;"), "{out}");
    }
    // `crate::` and `super::` there are the test's own crate, not the library.
    let text = "mod controller { pub mod captain { pub const X: u8 = 1; } }\nfn f() -> u8 { crate::controller::captain::X + self::controller::captain::X }\n";
    assert_eq!(ok("tests/own.rs", text), text);
}

/// In the library, a tests module that glob-imports its parent reaches the parent's `use`s.
#[test]
fn a_tests_module_sees_its_parent_s_imports() {
    let text = "use crate::controller;

#[cfg(test)]
mod tests {
    use super::*;

    fn f() -> &'static str {
        controller::captain::CONTROLLER.name
    }
}
";
    let out = ok("src/fleet.rs", text);
    assert!(
        out.contains("controller::crew::captain::CONTROLLER.name"),
        "{out}"
    );
}

/// Paths in attributes: as tokens, and as the strings serde takes.
#[test]
fn paths_in_attributes() {
    let text = "#[derive(crate::controller::captain::Derive)]
pub struct S {
    #[serde(with = \"crate::api::v1::duration\")]
    pub a: u8,
    #[serde(default = \"crew_operator::api::v1::default\", rename = \"a::b\")]
    pub b: u8,
}
";
    let out = ok("src/fleet.rs", text);
    assert!(
        out.contains("#[derive(crate::controller::crew::captain::Derive)]"),
        "{out}"
    );
    assert!(
        out.contains("with = \"crate::api::crew::v1::duration\""),
        "{out}"
    );
    assert!(
        out.contains("default = \"crew_operator::api::crew::v1::default\""),
        "{out}"
    );
    assert!(out.contains("rename = \"a::b\""), "{out}");
}

/// A module named like the group it moves into: `controller::ship` → `controller::ship::ship`.
#[test]
fn a_module_named_like_its_group() {
    let moves = vec![
        Move::new(segments("controller::ship"), 1, "ship"),
        Move::new(segments("api::v1"), 1, "ship"),
    ];
    let modules: Modules = ["api", "api::v1", "controller", "controller::ship"]
        .into_iter()
        .map(segments)
        .collect();
    let text = "use crate::controller::{self, ship};\nuse crate::api::v1::Ship;\n\nfn f() -> u8 {\n    ship::X + controller::ship::X + crate::controller::ship::X\n}\n";
    let out = rewrite(
        "src/fleet.rs",
        text,
        Some((&segments("fleet"), &segments("fleet"))),
        "crew",
        &modules,
        &moves,
    )
    .unwrap();
    assert_eq!(
        out,
        "use crate::controller::{self, ship::ship};\nuse crate::api::ship::v1::Ship;\n\nfn f() -> u8 {\n    ship::X + controller::ship::ship::X + crate::controller::ship::ship::X\n}\n"
    );
}

#[test]
fn dollar_crate_in_a_macro_of_the_library() {
    let text = "macro_rules! kind_of {\n    ($t:ident) => {\n        <$crate::api::v1::Captain as kube::Resource>::kind(&()) + $t::X\n    };\n}\n";
    let out = ok("src/util.rs", text);
    assert!(
        out.contains("<$crate::api::crew::v1::Captain as kube::Resource>"),
        "{out}"
    );
    assert!(out.contains("$t::X"), "{out}");
    // In a test, `$crate` is the test's crate: nothing of ours.
    assert_eq!(ok("tests/captain.rs", text), text);
}

#[test]
fn crates_renamed_by_extern_crate() {
    let text = "extern crate crew_operator as crew;\nfn f() { let _ = crew::api::v1::Captain::kind(&()); }\n";
    let out = ok("tests/captain.rs", text);
    assert!(out.contains("crew::api::crew::v1::Captain::kind"), "{out}");
    let text = "extern crate self as root;\nfn f() { let _ = root::controller::captain::X; }\n";
    let out = ok("src/util.rs", text);
    assert!(out.contains("root::controller::crew::captain::X"), "{out}");
    // Another crate of that alias is not ours.
    let text = "extern crate other as crew;\nfn f() { let _ = crew::api::v1::X; }\n";
    assert_eq!(ok("tests/captain.rs", text), text);
}
