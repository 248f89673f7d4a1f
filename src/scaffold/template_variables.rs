//! The variables a template names: for the test that checks every template against the type
//! of its variables (see `crate::scaffold::table`). Test code: nothing renders with it.

use std::collections::BTreeSet;

use anyhow::Result;
use tera::ast::{Expr, ExprVal, Node};

/// The variables a template text names, by their full dotted path (`spec.foo`), outside the
/// names it binds itself (`{% for arg in … %}`, `{% set … %}`, `loop`). For the test that
/// checks every template against its variables' type: tera renders an undefined name in an
/// `{% if %}` as false, so a misspelt one would otherwise go unnoticed.
pub fn variables(name: &str, text: &str) -> Result<std::collections::BTreeSet<String>> {
    fn expr(e: &Expr, bound: &BTreeSet<String>, out: &mut BTreeSet<String>) {
        value(&e.val, bound, out);
        for filter in &e.filters {
            filter.args.values().for_each(|a| expr(a, bound, out));
        }
    }
    fn named(ident: &str, bound: &BTreeSet<String>, out: &mut BTreeSet<String>) {
        let first = ident.split(['.', '[']).next().unwrap_or(ident);
        if !bound.contains(first) {
            out.insert(ident.to_string());
        }
    }
    fn value(v: &ExprVal, bound: &BTreeSet<String>, out: &mut BTreeSet<String>) {
        match v {
            ExprVal::Ident(ident) => named(ident, bound, out),
            ExprVal::Math(m) => [&m.lhs, &m.rhs].iter().for_each(|e| expr(e, bound, out)),
            ExprVal::Logic(l) => [&l.lhs, &l.rhs].iter().for_each(|e| expr(e, bound, out)),
            ExprVal::In(i) => [&i.lhs, &i.rhs].iter().for_each(|e| expr(e, bound, out)),
            ExprVal::Test(t) => {
                named(&t.ident, bound, out);
                t.args.iter().for_each(|a| expr(a, bound, out));
            }
            ExprVal::FunctionCall(f) => f.args.values().for_each(|a| expr(a, bound, out)),
            ExprVal::MacroCall(m) => m.args.values().for_each(|a| expr(a, bound, out)),
            ExprVal::Array(items) => items.iter().for_each(|e| expr(e, bound, out)),
            ExprVal::StringConcat(c) => c.values.iter().for_each(|v| value(v, bound, out)),
            ExprVal::String(_) | ExprVal::Int(_) | ExprVal::Float(_) | ExprVal::Bool(_) => {}
        }
    }
    /// False when the nodes use what the check does not follow.
    fn nodes(list: &[Node], bound: &mut BTreeSet<String>, out: &mut BTreeSet<String>) -> bool {
        let mut followed = true;
        for node in list {
            match node {
                Node::VariableBlock(_, e) => expr(e, bound, out),
                Node::Set(_, set) => {
                    expr(&set.value, bound, out);
                    bound.insert(set.key.clone());
                }
                Node::FilterSection(_, section, _) => {
                    section
                        .filter
                        .args
                        .values()
                        .for_each(|a| expr(a, bound, out));
                    followed &= nodes(&section.body, bound, out);
                }
                Node::Block(_, block, _) => followed &= nodes(&block.body, bound, out),
                Node::Forloop(_, f, _) => {
                    expr(&f.container, bound, out);
                    let mut inner = bound.clone();
                    inner.extend(f.key.iter().cloned());
                    inner.insert(f.value.clone());
                    inner.insert("loop".to_string());
                    followed &= nodes(&f.body, &mut inner, out);
                    if let Some(empty) = &f.empty_body {
                        followed &= nodes(empty, bound, out);
                    }
                }
                Node::If(branches, _) => {
                    for (_, condition, body) in &branches.conditions {
                        expr(condition, bound, out);
                        followed &= nodes(body, &mut bound.clone(), out);
                    }
                    if let Some((_, body)) = &branches.otherwise {
                        followed &= nodes(body, &mut bound.clone(), out);
                    }
                }
                Node::MacroDefinition(..)
                | Node::Extends(..)
                | Node::Include(..)
                | Node::ImportMacro(..)
                | Node::Super => followed = false,
                Node::Text(_)
                | Node::Raw(..)
                | Node::Break(_)
                | Node::Continue(_)
                | Node::Comment(..) => {}
            }
        }
        followed
    }
    let template = tera::Template::new(name, None, text)
        .map_err(|e| anyhow::anyhow!("template {name}: {e:?}"))?;
    let mut out = BTreeSet::new();
    if !nodes(&template.ast, &mut BTreeSet::new(), &mut out) {
        anyhow::bail!(
            "template {name}: macros, includes and inheritance are not used by operator-rs's \
             templates, and the check of their variables does not follow them"
        );
    }
    Ok(out)
}
