//! Statements: text, actions, `if`/`with`/`range` with Go's variable scoping, template
//! calls.

use super::{At, Ev, Exe, Flow, MAX_TEMPLATE_DEPTH, STACK_RED_ZONE, STACK_SEGMENT, State};
use crate::engine::ast::{Branch, BranchKind, List, Node, TemplateCall};
use crate::engine::value::Value;
use crate::engine::value::format::{quote, sprint};

impl<'t> State<'t, '_, '_> {
    pub(super) fn walk_list(&mut self, dot: &Ev, list: &'t List, out: &mut String) -> Exe<Flow> {
        for node in &list.nodes {
            match self.walk(dot, node, out)? {
                Flow::Normal => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Normal)
    }

    pub(super) fn walk(&mut self, dot: &Ev, node: &'t Node, out: &mut String) -> Exe<Flow> {
        match node {
            Node::Text(span) => out.push_str(span.of(&self.template.text)),
            Node::Action(pipe) => {
                let value = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    match value {
                        Ev::Missing => out.push_str("<no value>"),
                        other => match other.value() {
                            Value::Object(object) => out.push_str(&object.template_print()),
                            value => out.push_str(&sprint(&[value])),
                        },
                    }
                }
            }
            Node::Branch(branch) => {
                let mark = self.vars.len();
                let flow =
                    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || match branch.kind {
                        BranchKind::Range => self.walk_range(dot, branch, out),
                        _ => self.walk_if_or_with(dot, branch, out),
                    });
                self.vars.truncate(mark);
                return flow;
            }
            Node::Template(call) => self.walk_template(dot, call, out)?,
            Node::Break => return Ok(Flow::Break),
            Node::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    pub(super) fn walk_if_or_with(
        &mut self,
        dot: &Ev,
        branch: &'t Branch,
        out: &mut String,
    ) -> Exe<Flow> {
        let value = self.eval_pipeline(dot, &branch.pipe)?;
        if value.is_true() {
            let new_dot = if branch.kind == BranchKind::With {
                &value
            } else {
                dot
            };
            return self.walk_list(new_dot, &branch.list, out);
        }
        match &branch.else_list {
            Some(list) => self.walk_list(dot, list, out),
            None => Ok(Flow::Normal),
        }
    }

    pub(super) fn walk_range(
        &mut self,
        dot: &Ev,
        branch: &'t Branch,
        out: &mut String,
    ) -> Exe<Flow> {
        let value = self.eval_pipeline(dot, &branch.pipe)?;
        let mark = self.vars.len();
        let mut ran = false;
        let collection = match value.value() {
            Value::Object(object) => object.as_collection().unwrap_or(Value::Object(object)),
            other => other,
        };
        match collection {
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    ran = true;
                    let index = Ev::Val(Value::Int(i as i64));
                    if self.iterate(branch, mark, index, Ev::Iface(item.clone()), out)? {
                        break;
                    }
                }
            }
            Value::Bytes(bytes) => {
                for (i, byte) in bytes.iter().enumerate() {
                    ran = true;
                    let index = Ev::Val(Value::Int(i as i64));
                    let elem = Ev::Val(Value::Int(i64::from(*byte)));
                    if self.iterate(branch, mark, index, elem, out)? {
                        break;
                    }
                }
            }
            Value::Map(map) => {
                for (key, item) in map.entries() {
                    ran = true;
                    let key = Ev::Val(Value::str(key));
                    if self.iterate(branch, mark, key, Ev::Iface(item), out)? {
                        break;
                    }
                }
            }
            Value::Int(n) | Value::Int64(n) => {
                if branch.pipe.decl.len() > 1 {
                    return Err(self.error(format!(
                        "can't use {} to iterate over more than one variable",
                        sprint(&[value.value()])
                    )));
                }
                let int64 = matches!(value.value(), Value::Int64(_));
                for i in 0..n {
                    ran = true;
                    let v = if int64 {
                        Value::Int64(i)
                    } else {
                        Value::Int(i)
                    };
                    if self.iterate(branch, mark, Ev::Val(v.clone()), Ev::Val(v), out)? {
                        break;
                    }
                }
            }
            Value::Nil => {}
            other => {
                return Err(self.error(format!("range can't iterate over {}", sprint(&[other]))));
            }
        }
        if !ran && let Some(list) = &branch.else_list {
            return self.walk_list(dot, list, out).map(|_| Flow::Normal);
        }
        Ok(Flow::Normal)
    }

    /// One pass of a range body; returns whether `{{break}}` ended the loop.
    pub(super) fn iterate(
        &mut self,
        branch: &'t Branch,
        mark: usize,
        index: Ev,
        elem: Ev,
        out: &mut String,
    ) -> Exe<bool> {
        let decl = &branch.pipe.decl;
        if let Some(first) = decl.first() {
            let first = self.text(*first);
            if branch.pipe.is_assign {
                let value = if decl.len() > 1 {
                    index.clone()
                } else {
                    elem.clone()
                };
                self.set_var(first, value)?;
            } else {
                self.set_top_var(1, elem.clone());
            }
        }
        if let Some(second) = decl.get(1) {
            if branch.pipe.is_assign {
                self.set_var(self.text(*second), elem.clone())?;
            } else {
                self.set_top_var(2, index);
            }
        }
        let flow = self.walk_list(&elem, &branch.list, out);
        self.vars.truncate(mark);
        Ok(matches!(flow?, Flow::Break))
    }

    pub(super) fn walk_template(
        &mut self,
        dot: &Ev,
        call: &'t TemplateCall,
        out: &mut String,
    ) -> Exe<()> {
        self.at = At::Template(call);
        let Some(template) = self.exec.lookup(&call.name) else {
            return Err(self.error(format!("template {} not defined", quote(&call.name))));
        };
        if self.exec.depth >= MAX_TEMPLATE_DEPTH {
            return Err(self.error(format!(
                "exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})"
            )));
        }
        let new_dot = match &call.pipe {
            Some(pipe) => self.eval_pipeline(dot, pipe)?,
            None => Ev::Missing,
        };
        self.exec.run(&template, new_dot, out)
    }

    pub(super) fn set_top_var(&mut self, n: usize, value: Ev) {
        let len = self.vars.len();
        if let Some(slot) = len.checked_sub(n).and_then(|i| self.vars.get_mut(i)) {
            slot.1 = value;
        }
    }

    pub(super) fn set_var(&mut self, name: &str, value: Ev) -> Exe<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = value;
                Ok(())
            }
            None => Err(self.error(format!("undefined variable: {name}"))),
        }
    }

    pub(super) fn var_value(&self, name: &str) -> Exe<Ev> {
        match self.vars.iter().rev().find(|(n, _)| *n == name) {
            Some((_, value)) => Ok(value.clone()),
            None => Err(self.error(format!("undefined variable: {name}"))),
        }
    }
}
