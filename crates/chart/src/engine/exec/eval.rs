//! Expressions: pipelines, operands, variables and field chains on maps and objects.

use super::{At, Ev, Exe, STACK_RED_ZONE, STACK_SEGMENT, State};
use crate::engine::MissingKey;
use crate::engine::ast::{Arg, Command, Pipe, Show, Span, chain_names};
use crate::engine::value::Value;
use crate::engine::value::format::quote;

impl<'t> State<'t, '_, '_> {
    pub(super) fn eval_pipeline(&mut self, dot: &Ev, pipe: &'t Pipe) -> Exe<Ev> {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.eval_pipeline_here(dot, pipe)
        })
    }

    pub(super) fn eval_pipeline_here(&mut self, dot: &Ev, pipe: &'t Pipe) -> Exe<Ev> {
        self.at = At::Pipe(pipe);
        let mut value: Option<Ev> = None;
        for cmd in &pipe.cmds {
            let result = self.eval_command(dot, cmd, value.take())?;
            value = Some(result.concrete());
        }
        let value = value.unwrap_or(Ev::Missing);
        for name in &pipe.decl {
            let name = self.text(*name);
            if pipe.is_assign {
                self.set_var(name, value.clone())?;
            } else {
                self.vars.push((name, value.clone()));
            }
        }
        Ok(value)
    }

    /// The value of the current template's constant `index`.
    pub(super) fn constant(&self, index: u32) -> Value {
        self.template
            .constants
            .get(index as usize)
            .cloned()
            .unwrap_or_default()
    }

    /// The text of `span` in the current template's source.
    pub(super) fn text(&self, span: Span) -> &'t str {
        span.of(&self.template.text)
    }

    pub(super) fn not_a_function(&self, args: &'t [Arg], last: &Option<Ev>) -> Exe<()> {
        if args.len() > 1 || last.is_some() {
            let first = args
                .first()
                .map(|a| a.show(&self.template.text).to_string())
                .unwrap_or_default();
            return Err(self.error(format!("can't give argument to non-function {first}")));
        }
        Ok(())
    }

    pub(super) fn eval_command(&mut self, dot: &Ev, cmd: &'t Command, last: Option<Ev>) -> Exe<Ev> {
        let first = &cmd.args[0];
        match first {
            Arg::Field { names, .. } => {
                self.at = At::Arg(first);
                self.eval_field_chain(dot, dot.clone(), *names, &cmd.args, last)
            }
            Arg::Chain { .. } => self.eval_chain(dot, first, &cmd.args, last),
            Arg::Identifier { name, .. } => {
                let name = self.text(*name);
                self.eval_function(dot, first, name, At::Command(cmd), &cmd.args, last)
            }
            Arg::Pipe(pipe) => {
                self.not_a_function(&cmd.args, &last)?;
                self.eval_pipeline(dot, pipe)
            }
            Arg::Variable { names, .. } => self.eval_variable(dot, first, *names, &cmd.args, last),
            Arg::Constant { index, .. } => {
                self.at = At::Arg(first);
                self.not_a_function(&cmd.args, &last)?;
                Ok(Ev::Val(self.constant(*index)))
            }
            Arg::Dot(_) => {
                self.at = At::Arg(first);
                self.not_a_function(&cmd.args, &last)?;
                Ok(dot.clone())
            }
            Arg::Nil(_) => {
                self.at = At::Arg(first);
                self.not_a_function(&cmd.args, &last)?;
                Err(self.error("nil is not a command".into()))
            }
        }
    }

    /// An operand used as an argument (Go's `evalArg` for an `interface{}` parameter).
    pub(super) fn eval_arg(&mut self, dot: &Ev, arg: &'t Arg) -> Exe<Ev> {
        self.at = At::Arg(arg);
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(Ev::Iface(Value::Nil)),
            Arg::Field { names, .. } => self.eval_field_chain(dot, dot.clone(), *names, &[], None),
            Arg::Variable { names, .. } => self.eval_variable(dot, arg, *names, &[], None),
            Arg::Pipe(pipe) => self.eval_pipeline(dot, pipe),
            Arg::Identifier { name, .. } => {
                let name = self.text(*name);
                self.eval_function(dot, arg, name, At::Arg(arg), &[], None)
            }
            Arg::Chain { .. } => self.eval_chain(dot, arg, &[], None),
            Arg::Constant { index, .. } => Ok(Ev::Val(self.constant(*index))),
        }
    }

    pub(super) fn eval_variable(
        &mut self,
        dot: &Ev,
        node: &'t Arg,
        names: Span,
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        self.at = At::Arg(node);
        let text = self.text(names);
        let (variable, fields) = match text.bytes().position(|b| b == b'.') {
            Some(dot) => (&text[..dot], Some(&text[dot..])),
            None => (text, None),
        };
        let value = self.var_value(variable)?;
        match fields {
            Some(fields) => self.eval_field_names(dot, value, fields, args, last),
            None => {
                self.not_a_function(args, &last)?;
                Ok(value)
            }
        }
    }

    pub(super) fn eval_chain(
        &mut self,
        dot: &Ev,
        node: &'t Arg,
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        self.at = At::Arg(node);
        let Arg::Chain {
            node: inner,
            fields,
            ..
        } = node
        else {
            return self.eval_arg(dot, node);
        };
        if matches!(inner.as_ref(), Arg::Nil(_)) {
            let shown = node.show(&self.template.text);
            return Err(self.error(format!("indirection through explicit nil in {shown}")));
        }
        // Go leaves the error context on the last node the inner operand evaluated.
        let receiver = self.eval_arg(dot, inner)?;
        self.eval_field_chain(dot, receiver, *fields, args, last)
    }

    /// Applies the field chain `names` (the source of `.A.B`) to `receiver`.
    pub(super) fn eval_field_chain(
        &mut self,
        dot: &Ev,
        receiver: Ev,
        names: Span,
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        let names = self.text(names);
        self.eval_field_names(dot, receiver, names, args, last)
    }

    /// Applies the fields of `chain` (`.A.B`) to `receiver`; the last one gets the arguments.
    fn eval_field_names(
        &mut self,
        dot: &Ev,
        receiver: Ev,
        chain: &'t str,
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        let mut names = chain_names(chain);
        let Some(final_name) = names.next_back() else {
            return Ok(receiver);
        };
        let mut receiver = receiver;
        for name in names {
            receiver = self.eval_field(dot, name, &[], None, receiver)?;
        }
        self.eval_field(dot, final_name, args, last, receiver)
    }

    pub(super) fn eval_field(
        &mut self,
        dot: &Ev,
        name: &str,
        args: &'t [Arg],
        last: Option<Ev>,
        receiver: Ev,
    ) -> Exe<Ev> {
        let has_args = args.len() > 1 || last.is_some();
        // The static type is named only in the error at the end: not worked out per field.
        let (value, is_interface) = match receiver {
            Ev::Missing | Ev::Val(Value::Nil) => {
                if self.missing_key() == MissingKey::Error {
                    return Err(self.error(format!("nil data; no entry for key {}", quote(name))));
                }
                return Ok(Ev::Missing);
            }
            Ev::Iface(Value::Nil) => {
                return Err(self.error(format!("nil pointer evaluating interface {{}}.{name}")));
            }
            Ev::Iface(v) => (v, true),
            Ev::Val(v) => (v, false),
        };
        let map = match &value {
            Value::Object(object) => {
                if object.has_method(name) {
                    return self.call_method(dot, object.as_ref(), name, args, last);
                }
                if let Some(field) = object.field(name) {
                    if has_args {
                        return Err(self.error(format!(
                            "{name} has arguments but cannot be invoked as function"
                        )));
                    }
                    return Ok(Ev::from_result(field));
                }
                object.as_collection().and_then(|c| c.as_map().cloned())
            }
            Value::Map(map) => Some(map.clone()),
            _ => None,
        };
        if let Some(map) = map {
            if has_args {
                return Err(self.error(format!("{name} is not a method but has arguments")));
            }
            return match map.get(name) {
                Some(item) => Ok(Ev::Iface(item)),
                None => match self.missing_key() {
                    MissingKey::Default => Ok(Ev::Missing),
                    MissingKey::Zero => Ok(Ev::Iface(Value::Nil)),
                    MissingKey::Error => {
                        Err(self.error(format!("map has no entry for key {}", quote(name))))
                    }
                },
            };
        }
        let static_type = if is_interface {
            "interface {}".to_string()
        } else {
            value.type_name()
        };
        Err(self.error(format!("can't evaluate field {name} in type {static_type}")))
    }
}
