//! The paths to moved modules, rewritten in Rust code as people write it.
//!
//! `edit --multigroup` moves modules one level down, under their group: `api::v1` becomes
//! `api::crew::v1`, `controller::captain` becomes `controller::crew::captain`. Every path that
//! names such a module, or anything in it, must follow: `use` lines however they are written
//! (grouped `use crate::{api::v1::Captain, controller::captain};`, nested, aliased with `as`,
//! through a glob, relative with `super::`), paths in code and in macro calls, paths through a
//! name a `use` brought in, the project's crate name in `src/main.rs` and `tests/`, and intra-doc
//! links. Each file is parsed with syn; a path is resolved as the compiler would (as far as a
//! module tree and the file's own `use` lines tell), and only the one token that names the moved
//! module is changed (`v1` → `crew::v1`), so everything else in the file stays as it was. A file
//! that moves itself gets one more `super::` where its relative paths leave it.
//!
//! What cannot be rewritten is refused with one line naming the file: a file that does not parse,
//! a `#[path]` attribute, an `include!` of a relative path in a file that moves.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use proc_macro2::{Span, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// A module moved: every path under `from` is under [`to`](Move::to) after the move, which is
/// `from` with one segment, the group, inserted at `at`: `api::v1` → `api::crew::v1`,
/// `webhook::v1::pod` → `webhook::core::v1::pod`. (The place is kept, not found again by
/// comparing the two: a group named like the module it goes before, `controller::ship` →
/// `controller::ship::ship`, would be found one segment too late.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub from: Vec<String>,
    /// Where the group goes: the index in `from` of the segment it is inserted before.
    pub at: usize,
    /// The inserted segment.
    pub group: String,
}

impl Move {
    pub fn new(from: Vec<String>, at: usize, group: &str) -> Self {
        assert!(
            at < from.len(),
            "a move inserts its group before a segment of the path"
        );
        Self {
            from,
            at,
            group: group.to_string(),
        }
    }

    /// The module's path after the move.
    pub fn to(&self) -> Vec<String> {
        let mut to = self.from.clone();
        to.insert(self.at, self.group.clone());
        to
    }

    fn at(&self) -> usize {
        self.at
    }

    fn group(&self) -> &str {
        &self.group
    }
}

/// The modules of the library crate before the move, by path (`api::v1` is `["api", "v1"]`).
pub type Modules = BTreeSet<Vec<String>>;

/// The module of the library crate a file under `src/` is (None: `src/main.rs`, `src/bin/`,
/// `tests/`, which reach the library through its crate name only).
pub fn module_of(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix("src/")?.strip_suffix(".rs")?;
    if rest == "main" || rest.starts_with("bin/") {
        return None;
    }
    let mut segments: Vec<String> = rest.split('/').map(str::to_string).collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
        segments.pop();
    }
    Some(segments)
}

/// The file's text with its paths to the moved modules rewritten. `module`: the module the file
/// is now and will be (None outside the library); `crate_name`: the library's name.
pub fn rewrite(
    path: &str,
    text: &str,
    module: Option<(&[String], &[String])>,
    crate_name: &str,
    modules: &Modules,
    moves: &[Move],
) -> Result<String> {
    let file = syn::parse_file(text).map_err(|err| {
        let at = err.span().start();
        anyhow::anyhow!(
            "cannot rewrite the paths in {path}: it is not valid Rust ({}:{}: {err}); correct it, \
             then run edit again",
            at.line,
            at.column + 1
        )
    })?;
    let (old, new) = match module {
        Some((old, new)) => (Some(old.to_vec()), Some(new.to_vec())),
        None => (None, None),
    };
    let mut rewriter = Rewriter {
        path,
        crate_name,
        modules,
        moves,
        scope: old.clone().unwrap_or_else(|| vec![OUTSIDE.to_string()]),
        in_library: old.is_some(),
        new_module: new,
        moved: old.is_some() && module.is_some_and(|(a, b)| a != b),
        bindings: BTreeMap::new(),
        globs: BTreeMap::new(),
        edits: Vec::new(),
        inline_depth: 0,
        error: None,
    };
    let mut collector = Bindings {
        rewriter: &mut rewriter,
    };
    collector.visit_file(&file);
    rewriter.scope = old.unwrap_or_else(|| vec![OUTSIDE.to_string()]);
    rewriter.visit_file(&file);
    if let Some(error) = rewriter.error {
        bail!(error);
    }
    apply(text, rewriter.edits)
}

/// The state of one file's rewrite.
struct Rewriter<'a> {
    path: &'a str,
    crate_name: &'a str,
    modules: &'a Modules,
    moves: &'a [Move],
    /// The module the code being visited is in (inline `mod x { … }` included).
    scope: Vec<String>,
    in_library: bool,
    /// The file's module after the move, when it is in the library.
    new_module: Option<Vec<String>>,
    /// The file itself moves.
    moved: bool,
    /// What the names a `use` brought into a module stand for: module → name → path.
    bindings: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    /// The globs a module imports (`use crate::api::*;`): module → their bases.
    globs: BTreeMap<Vec<String>, Vec<Vec<String>>>,
    edits: Vec<Edit>,
    /// How many inline modules (`mod x { … }`) the visit is in: the end of `scope`.
    inline_depth: usize,
    error: Option<String>,
}

/// The scope of a file outside the library (a test, a bench, an example, `src/main.rs`): its
/// `self::` and `super::` paths resolve under this name, never to a module of the library.
const OUTSIDE: &str = "<outside the library>";

/// A path as written: its segments with their spans, and whether it starts with `::`.
struct Written {
    segments: Vec<(String, Span)>,
    global: bool,
}

impl Rewriter<'_> {
    /// Where the path starts: the absolute path its first `j` segments stand for, and `j`.
    fn base(&self, written: &Written) -> Option<(Vec<String>, usize)> {
        let first = written.segments.first()?.0.as_str();
        if written.global || first == self.crate_name {
            return (first == self.crate_name).then(|| (Vec::new(), 1));
        }
        let (base, start) = match first {
            "crate" => (self.in_library.then(Vec::new)?, 1),
            "self" => (self.scope.clone(), 1),
            "super" => {
                let k = written
                    .segments
                    .iter()
                    .take_while(|(s, _)| s == "super")
                    .count();
                let len = self.scope.len().checked_sub(k)?;
                (self.scope[..len].to_vec(), k)
            }
            name => return self.name_in_scope(name),
        };
        // Outside the library, `self` and `super` stay in the file (its own crate's modules).
        (self.in_library || base.first().is_some_and(|s| s == OUTSIDE)).then_some((base, start))
    }

    /// What a plain name at the start of a path stands for in the current scope: a name a `use`
    /// brought in (here, or in a module this one glob-imports, as `use super::*;` in a tests
    /// module does, and so on through that module's globs), or a child module of the library.
    fn name_in_scope(&self, name: &str) -> Option<(Vec<String>, usize)> {
        let mut visited: Vec<&Vec<String>> = Vec::new();
        let mut pending = vec![&self.scope];
        while let Some(module) = pending.pop() {
            if visited.contains(&module) {
                continue;
            }
            visited.push(module);
            if let Some(target) = self.bindings.get(module).and_then(|b| b.get(name)) {
                return Some((target.clone(), 1));
            }
            let mut child = module.clone();
            child.push(name.to_string());
            // A module of the library: in the scope itself only in the library (outside, the
            // scope is the file's own), through a glob anywhere.
            let reachable = self.in_library || module != &self.scope;
            if reachable && self.modules.contains(&child) {
                return Some((module.clone(), 0));
            }
            if let Some(globs) = self.globs.get(module) {
                pending.extend(globs.iter().rev());
            }
        }
        None
    }

    /// Plans the edits of one path: the token before which a move inserts its group gets the
    /// group; in a file that moves, a leading `super::` chain that leaves it gets one more `super`.
    fn path(&mut self, written: &Written) {
        let Some((base, start)) = self.base(written) else {
            return;
        };
        if written.segments.first().is_some_and(|(s, _)| s == "super") {
            self.super_chain(written, &base, start);
        }
        let mut abs = base.clone();
        abs.extend(written.segments[start..].iter().map(|(s, _)| s.clone()));
        let Some(m) = self.moves.iter().find(|m| abs.starts_with(&m.from)) else {
            return;
        };
        let at = m.at();
        if at >= base.len() {
            let (token, span) = &written.segments[start + at - base.len()];
            let replacement = format!("{}::{token}", m.group());
            self.edits.push(Edit::Replace(*span, replacement));
        } else if base.len() < m.from.len() {
            self.split(&base);
        }
    }

    /// A path through a name for `module`, whose modules move to different groups: the name has
    /// nothing to stand for after the move.
    fn split(&mut self, module: &[String]) {
        self.fail(format!(
            "cannot rewrite the paths in {}: they go through {}, whose modules move to different \
             groups; name each module by its own `use crate::…` path, then run edit again",
            self.path,
            module.join("::")
        ));
    }

    /// A moved file's `super::…` that reaches outside it: the chain for the new place. `anchor`
    /// is what the `k` supers reach now.
    fn super_chain(&mut self, written: &Written, anchor: &[String], k: usize) {
        let (true, Some(new_module)) = (self.moved, &self.new_module) else {
            return;
        };
        // The scope after the move: the file's new module, and the inline modules it is in.
        let mut scope_new = new_module.clone();
        scope_new.extend(
            self.scope[self.scope.len() - self.inline_depth..]
                .iter()
                .cloned(),
        );
        let anchor_new = self.moved_path(anchor);
        let k_new = scope_new.len().checked_sub(anchor_new.len());
        let Some(k_new) = k_new
            .filter(|&k_new| k_new > 0 && scope_new[..scope_new.len() - k_new] == anchor_new[..])
        else {
            self.fail(format!(
                "cannot rewrite the paths in {}: a `super::` path leads where the moved file no \
                 longer reaches; write it as a `crate::` path, then run edit again",
                self.path
            ));
            return;
        };
        if k_new != k {
            let (first, last) = (written.segments[0].1, written.segments[k - 1].1);
            let chain = vec!["super"; k_new].join("::");
            self.edits
                .push(Edit::Replace(first.join(last).unwrap_or(first), chain));
        }
    }

    /// `path` after the moves.
    fn moved_path(&self, path: &[String]) -> Vec<String> {
        for m in self.moves {
            if path.starts_with(&m.from) {
                let mut out = m.to();
                out.extend(path[m.from.len()..].iter().cloned());
                return out;
            }
        }
        path.to_vec()
    }

    fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
    }

    /// The paths in the tokens of a macro call or an attribute: runs of identifiers joined by
    /// `::`, and, in an attribute, string literals that are paths (serde's `with = "…"`).
    fn tokens(&mut self, tokens: TokenStream, attribute: bool) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(group) => {
                    self.tokens(group.stream(), attribute);
                    i += 1;
                }
                TokenTree::Literal(literal) if attribute => {
                    if let Ok(text) =
                        syn::parse2::<syn::LitStr>(TokenTree::Literal(literal.clone()).into())
                    {
                        self.string_path(text.span(), &text.value());
                    }
                    i += 1;
                }
                TokenTree::Ident(_) | TokenTree::Punct(_) => {
                    let (written, next) = path_in_tokens(&trees, i);
                    if written.segments.is_empty() {
                        i += 1;
                    } else {
                        // A macro's metavariables (`$x::…`) are no paths; `$crate` is the crate
                        // the macro is defined in: the library, in the library's files (outside
                        // it, a test's or an example's own crate, which nothing moves in).
                        let after_dollar = i > 0
                            && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                        let dollar_crate = written.segments[0].0 == "crate" && self.in_library;
                        if !after_dollar || dollar_crate {
                            self.path(&written);
                        }
                        i = next;
                    }
                }
                TokenTree::Literal(_) => i += 1,
            }
        }
    }

    /// A path written as a string (`#[serde(with = "crate::api::v1::duration")]`): the string
    /// gets the group where the path would.
    fn string_path(&mut self, span: Span, text: &str) {
        let (global, rest) = match text.strip_prefix("::") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let segments: Vec<(String, Span)> =
            rest.split("::").map(|s| (s.to_string(), span)).collect();
        let is_ident = |s: &str| {
            s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if segments.len() < 2 || !segments.iter().all(|(s, _)| is_ident(s)) {
            return;
        }
        let written = Written { segments, global };
        let Some((base, start)) = self.base(&written) else {
            return;
        };
        let mut abs = base.clone();
        abs.extend(written.segments[start..].iter().map(|(s, _)| s.clone()));
        let Some(m) = self.moves.iter().find(|m| abs.starts_with(&m.from)) else {
            return;
        };
        if m.at() < base.len() {
            return;
        }
        let mut segments: Vec<&str> = written.segments.iter().map(|(s, _)| s.as_str()).collect();
        segments.insert(start + m.at() - base.len(), m.group());
        let prefix = if global { "::" } else { "" };
        let new = format!("{prefix}{}", segments.join("::"));
        self.edits.push(Edit::Doc(span, text.to_string(), new));
    }

    /// An intra-doc link or a path in a doc comment: `crate::…` and `<crate name>::…` text.
    fn doc(&mut self, span: Span, text: &str) {
        let mut rewritten = text.to_string();
        for m in self.moves {
            for root in ["crate", self.crate_name] {
                if root == "crate" && !self.in_library {
                    continue;
                }
                rewritten = rewrite_text_path(
                    &rewritten,
                    &format!("{root}::{}", m.from.join("::")),
                    &format!("{root}::{}", m.to().join("::")),
                );
            }
        }
        if rewritten != text {
            self.edits
                .push(Edit::Doc(span, text.to_string(), rewritten));
        }
    }
}

/// One change to a file's text.
enum Edit {
    /// The token (or `super` chain) at the span becomes the text.
    Replace(Span, String),
    /// In the doc comment at the span, the first text becomes the second.
    Doc(Span, String, String),
}

/// The path that starts at `trees[i]`: `::`-joined identifiers; and where it ends.
fn path_in_tokens(trees: &[TokenTree], i: usize) -> (Written, usize) {
    let mut segments = Vec::new();
    let mut global = false;
    let mut j = i;
    let colons = |j: usize| {
        matches!((trees.get(j), trees.get(j + 1)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                if a.as_char() == ':' && b.as_char() == ':')
    };
    if colons(j) {
        global = true;
        j += 2;
    }
    while let Some(TokenTree::Ident(ident)) = trees.get(j) {
        segments.push((ident.to_string(), ident.span()));
        j += 1;
        if !colons(j) {
            break;
        }
        j += 2;
    }
    if segments.is_empty() {
        return (Written { segments, global }, i + 1);
    }
    (Written { segments, global }, j)
}

/// `text` with `from` replaced by `to` where it is a whole path prefix (`crate::api::v1::X`, not
/// `crate::api::v10`, nor `my_crate::api::v1`).
fn rewrite_text_path(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before_ok = rest[..at]
            .chars()
            .last()
            .or_else(|| out.chars().last())
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        let after = &rest[at + from.len()..];
        let after_ok = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        out.push_str(&rest[..at]);
        out.push_str(if before_ok && after_ok { to } else { from });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The written segments of a `syn::Path`.
fn written(path: &syn::Path) -> Written {
    Written {
        segments: path
            .segments
            .iter()
            .map(|s| (s.ident.to_string(), s.ident.span()))
            .collect(),
        global: path.leading_colon.is_some(),
    }
}

impl<'ast> Visit<'ast> for Rewriter<'_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if self.in_library {
            check_mod(self, item);
        }
        let Some((_, items)) = &item.content else {
            return;
        };
        self.scope.push(item.ident.to_string());
        self.inline_depth += 1;
        for inner in items {
            self.visit_item(inner);
        }
        self.inline_depth -= 1;
        self.scope.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut prefix = Written {
            segments: Vec::new(),
            global: item.leading_colon.is_some(),
        };
        self.use_tree(&item.tree, &mut prefix);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.path(&written(path));
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        let name = mac.path.segments.last().map(|s| s.ident.to_string());
        if self.moved
            && matches!(
                name.as_deref(),
                Some("include" | "include_str" | "include_bytes")
            )
            // A path from the crate's root (`concat!(env!("CARGO_MANIFEST_DIR"), …)`) holds
            // wherever the file moves.
            && !mac.tokens.to_string().contains("CARGO_MANIFEST_DIR")
        {
            self.fail(format!(
                "cannot move {}: it includes a file by a path relative to it (`{}!`); make the \
                 path absolute (`concat!(env!(\"CARGO_MANIFEST_DIR\"), …)`), then run edit again",
                self.path,
                name.unwrap_or_default()
            ));
        }
        self.tokens(mac.tokens.clone(), false);
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) = &nv.value
        {
            self.doc(text.span(), &text.value());
            return;
        }
        // What an attribute's arguments name: `#[serde(with = "…")]`, `#[derive(crate::…)]`.
        if let syn::Meta::List(list) = &attr.meta {
            self.tokens(list.tokens.clone(), true);
        }
        visit::visit_attribute(self, attr);
    }
}

/// `#[path = "…"]` names a file relative to this one: not something to move blindly.
fn check_mod(rewriter: &mut Rewriter, item: &syn::ItemMod) {
    if item.attrs.iter().any(|a| a.path().is_ident("path")) {
        rewriter.fail(format!(
            "cannot rewrite the paths in {}: its module {} has a #[path] attribute, which \
             operator-rs does not follow; move the module by hand",
            rewriter.path, item.ident
        ));
    }
}

impl Rewriter<'_> {
    /// A `use` tree: its prefix so far in `prefix`; each node is a path to resolve.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Written) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.segments.push((p.ident.to_string(), p.ident.span()));
                // A chain of `super`s is one node: its last one.
                let more_supers = matches!(&*p.tree, syn::UseTree::Path(q) if q.ident == "super");
                if !(p.ident == "super" && more_supers) {
                    self.use_node(prefix, Some(&p.tree));
                }
                self.use_tree(&p.tree, prefix);
                prefix.segments.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident),
            syn::UseTree::Glob(_) => {}
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &mut Written, ident: &syn::Ident) {
        if ident == "self" {
            return;
        }
        prefix.segments.push((ident.to_string(), ident.span()));
        self.use_node(prefix, None);
        prefix.segments.pop();
    }

    /// The node that ends `prefix`, with the tree below it: a chain of `super`s at its last
    /// one; the token before which moves insert their group, when every module the tree below
    /// names moves into that one group.
    fn use_node(&mut self, prefix: &Written, below: Option<&syn::UseTree>) {
        let Some((base, start)) = self.base(prefix) else {
            return;
        };
        let n = prefix.segments.len();
        if prefix.segments[n - 1].0 == "super" {
            self.super_chain(prefix, &base, start);
            return;
        }
        if n <= start {
            if let Some(m) = self
                .moves
                .iter()
                .find(|m| base.starts_with(&m.from[..m.at()]))
                && m.at() < base.len()
                && base.len() < m.from.len()
            {
                self.split(&base);
            }
            return;
        }
        let mut abs = base;
        abs.extend(prefix.segments[start..].iter().map(|(s, _)| s.clone()));
        let through: Vec<&Move> = self
            .moves
            .iter()
            .filter(|m| m.at() + 1 == abs.len() && m.from[..=m.at()] == abs[..])
            .collect();
        if through.is_empty() {
            return;
        }
        let mut leaves = Vec::new();
        match below {
            Some(tree) => leaf_paths(tree, &abs, &mut leaves),
            None => leaves.push(abs.clone()),
        }
        // The moves of what the tree below names: one group for all, or no rewrite can say it.
        let moves_of = |leaf: &Vec<String>| -> Vec<&Move> {
            through
                .iter()
                .copied()
                .filter(|m| leaf.starts_with(&m.from) || m.from.starts_with(leaf))
                .collect()
        };
        let matched: Vec<Vec<&Move>> = leaves.iter().map(moves_of).collect();
        let groups: BTreeSet<&str> = matched.iter().flatten().map(|m| m.group()).collect();
        if groups.is_empty() {
            return;
        }
        match groups.into_iter().collect::<Vec<_>>()[..] {
            [group] if matched.iter().all(|m| !m.is_empty()) => {
                let (token, span) = &prefix.segments[n - 1];
                let replacement = format!("{group}::{token}");
                self.edits.push(Edit::Replace(*span, replacement));
            }
            _ => self.split(&abs),
        }
    }
}

/// The paths of the leaves of a `use` tree below `prefix`.
fn leaf_paths(tree: &syn::UseTree, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    match tree {
        syn::UseTree::Path(p) => {
            path.push(p.ident.to_string());
            leaf_paths(&p.tree, &path, out);
        }
        syn::UseTree::Name(n) if n.ident == "self" => out.push(path),
        syn::UseTree::Name(n) => {
            path.push(n.ident.to_string());
            out.push(path);
        }
        syn::UseTree::Rename(r) => {
            path.push(r.ident.to_string());
            out.push(path);
        }
        syn::UseTree::Glob(_) => out.push(path),
        syn::UseTree::Group(g) => {
            for item in &g.items {
                leaf_paths(item, prefix, out);
            }
        }
    }
}

/// The first pass: what every `use` of the file brings into its module.
struct Bindings<'r, 'a> {
    rewriter: &'r mut Rewriter<'a>,
}

impl<'ast> Visit<'ast> for Bindings<'_, '_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let Some((_, items)) = &item.content else {
            return;
        };
        self.rewriter.scope.push(item.ident.to_string());
        for inner in items {
            self.visit_item(inner);
        }
        self.rewriter.scope.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut prefix = Written {
            segments: Vec::new(),
            global: item.leading_colon.is_some(),
        };
        self.bind(&item.tree, &mut prefix);
    }

    /// `extern crate fleet as f;` (and, in the library, `extern crate self as f;`): `f` names
    /// the library's root, as `use fleet as f;` does.
    fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
        let r = &mut *self.rewriter;
        let Some((_, alias)) = &item.rename else {
            return;
        };
        if item.ident == r.crate_name || (item.ident == "self" && r.in_library) {
            let scope = r.scope.clone();
            r.bindings
                .entry(scope)
                .or_default()
                .insert(alias.to_string(), Vec::new());
        }
    }
}

impl Bindings<'_, '_> {
    fn bind(&mut self, tree: &syn::UseTree, prefix: &mut Written) {
        let r = &mut *self.rewriter;
        match tree {
            syn::UseTree::Path(p) => {
                prefix.segments.push((p.ident.to_string(), p.ident.span()));
                self.bind(&p.tree, prefix);
                prefix.segments.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let target = if name == "self" {
                    resolve(r, prefix)
                } else {
                    prefix.segments.push((name.clone(), n.ident.span()));
                    let target = resolve(r, prefix);
                    prefix.segments.pop();
                    target
                };
                let bound = match (name.as_str(), prefix.segments.last()) {
                    ("self", Some((last, _))) => last.clone(),
                    _ => name,
                };
                if let Some(target) = target {
                    let scope = r.scope.clone();
                    r.bindings.entry(scope).or_default().insert(bound, target);
                }
            }
            syn::UseTree::Rename(rename) => {
                prefix
                    .segments
                    .push((rename.ident.to_string(), rename.ident.span()));
                let target = resolve(r, prefix);
                prefix.segments.pop();
                if let Some(target) = target {
                    let scope = r.scope.clone();
                    let bound = rename.rename.to_string();
                    r.bindings.entry(scope).or_default().insert(bound, target);
                }
            }
            syn::UseTree::Glob(_) => {
                if let Some(base) = resolve(r, prefix) {
                    let scope = r.scope.clone();
                    r.globs.entry(scope).or_default().push(base);
                }
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.bind(item, prefix);
                }
            }
        }
    }
}

/// The absolute path `written` stands for, if it is in the library.
fn resolve(rewriter: &Rewriter, written: &Written) -> Option<Vec<String>> {
    let (mut base, start) = rewriter.base(written)?;
    base.extend(written.segments[start..].iter().map(|(s, _)| s.clone()));
    Some(base)
}

/// `text` with the edits made: spans turned into byte offsets (proc-macro2 gives lines and
/// columns in characters), applied from the end.
fn apply(text: &str, edits: Vec<Edit>) -> Result<String> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |at: proc_macro2::LineColumn| -> usize {
        let start = line_starts[at.line - 1];
        let line = &text[start..];
        start
            + line
                .char_indices()
                .nth(at.column)
                .map_or(line.len(), |(i, _)| i)
    };
    let range = |span: Span| (offset(span.start()), offset(span.end()));
    let mut ranges: Vec<(usize, usize, String)> = Vec::new();
    for edit in edits {
        match edit {
            Edit::Replace(span, replacement) => {
                let (start, end) = range(span);
                ranges.push((start, end, replacement));
            }
            Edit::Doc(span, old, new) => {
                // A `///` comment holds its text as it is; a `#[doc = "…"]` with escapes may not,
                // and is then left alone (it is documentation, not code).
                let (start, end) = range(span);
                let source = &text[start..end];
                if source.contains(&old) {
                    ranges.push((start, end, source.replacen(&old, &new, 1)));
                }
            }
        }
    }
    ranges.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    ranges.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut out = text.to_string();
    let mut limit = usize::MAX;
    for (start, end, replacement) in ranges {
        if end > limit {
            bail!("cannot rewrite the paths: two edits overlap at byte {start}");
        }
        out.replace_range(start..end, &replacement);
        limit = start;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
