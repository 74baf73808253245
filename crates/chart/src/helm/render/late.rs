//! Template files parsed on a helper thread while the render executes the templates before
//! them: executing is the longest step a render takes on one thread, and the other cores
//! otherwise only check the YAML of what it has rendered.
//!
//! Only files that cannot define templates are left to be parsed late (see [`can_be_late`]):
//! every definition is in the namespace before the first template executes. A template that
//! calls a file parsed late by its name before the render has reached it fails to find it;
//! the render then starts again with every file parsed first (`render::render_resources`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};

use bytestring::ByteString;

use crate::engine::{Engine, ParsedTemplate};
use crate::helm::chart::can_be_late;

/// Which of `files` to parse late, given the parses made while the chart loaded (`parsed`, by
/// file): those not parsed yet that [`can_be_late`], unless they are too small together to be
/// worth a thread.
pub(super) fn choose(files: &[(&str, ByteString)], parsed: &[Option<ParsedTemplate>]) -> Vec<bool> {
    let mut late: Vec<bool> = files
        .iter()
        .zip(parsed)
        .map(|((name, text), ahead)| ahead.is_none() && can_be_late(name, text.as_bytes()))
        .collect();
    let size: usize = files
        .iter()
        .zip(&late)
        .filter(|(_, late)| **late)
        .map(|((_, text), _)| text.len())
        .sum();
    if size < crate::parallel::MIN_PARALLEL_SIZE {
        late.fill(false);
    }
    late
}

/// The files left to be parsed late, handed out in the order the render reaches them.
pub(super) struct LateParses<'s> {
    /// How many of the files a thread has claimed to parse (the helper, or the render when it
    /// reaches a file the helper has not begun).
    claimed: &'s AtomicUsize,
    /// The helper's parses by position, `None` for a file that does not parse; closed when
    /// the helper has stopped.
    parsed: Option<Receiver<(usize, Option<ParsedTemplate>)>>,
    /// Parses received before the render reached their file.
    arrived: Vec<Option<Option<ParsedTemplate>>>,
    /// The position of the next file the render will take.
    next: usize,
}

impl LateParses<'_> {
    /// The next file's parse, or `None` when the render is to parse it itself: no helper has
    /// begun it, or its text does not parse (the render's own parse then names the error).
    pub(super) fn take_next(&mut self) -> Option<ParsedTemplate> {
        let position = self.next;
        self.next += 1;
        loop {
            if let Some(parsed) = self.arrived.get_mut(position).and_then(Option::take) {
                return parsed;
            }
            // Every earlier file has been taken, so no thread has claimed this one unless the
            // count has passed it.
            let unclaimed = self
                .claimed
                .compare_exchange(position, position + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
            if unclaimed {
                return None;
            }
            match self.parsed.as_ref().map(Receiver::recv) {
                Some(Ok((at, parsed))) => {
                    if let Some(slot) = self.arrived.get_mut(at) {
                        *slot = Some(parsed);
                    }
                }
                // The helper stopped (it panicked) without sending this file.
                _ => return None,
            }
        }
    }
}

/// Runs `render` with the files at `late` (indexes into `files`, in the order the render
/// reaches them) being parsed on a helper thread; the helper stops when `render` returns.
/// Without a helper (no files, or no thread) the render parses each file itself.
pub(super) fn with_late_parses<R>(
    files: &[(&str, ByteString)],
    late: &[usize],
    render: impl FnOnce(&mut LateParses<'_>) -> R,
) -> R {
    let claimed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (sender, receiver) = channel();
        let claimed = &claimed;
        let helper = if late.is_empty() {
            None
        } else {
            std::thread::Builder::new()
                .name("parse-late".into())
                .spawn_scoped(scope, move || {
                    let parser = Engine::new(crate::helm::funcs::helm_funcs());
                    loop {
                        let position = claimed.fetch_add(1, Ordering::AcqRel);
                        let Some(&index) = late.get(position) else {
                            return;
                        };
                        let parsed = parser.parse_apart(files[index].1.clone());
                        // A render that has returned takes no more files.
                        if sender.send((position, parsed)).is_err() {
                            return;
                        }
                    }
                })
                .ok()
        };
        let mut parses = LateParses {
            claimed,
            parsed: helper.is_some().then_some(receiver),
            arrived: (0..late.len()).map(|_| None).collect(),
            next: 0,
        };
        let result = render(&mut parses);
        // Closes the channel, so that a helper still parsing stops after its current file.
        drop(parses);
        // A helper that panicked left its file to the render, which parsed it itself.
        if let Some(helper) = helper {
            let _ = helper.join();
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partials_and_files_that_may_define_are_parsed_before_anything_executes() {
        assert!(can_be_late(
            "c/templates/cm.yaml",
            b"kind: {{ .Values.kind }}"
        ));
        assert!(!can_be_late("c/templates/_helpers.tpl", b"{{ .x }}"));
        assert!(!can_be_late(
            "c/templates/cm.yaml",
            b"{{ define \"x\" }}{{ end }}"
        ));
        assert!(!can_be_late(
            "c/templates/cm.yaml",
            b"{{ block \"x\" . }}{{ end }}"
        ));
        // Mentions count too: telling them from definitions would take a parse.
        assert!(!can_be_late("c/templates/cm.yaml", b"# blocked: {{ .x }}"));
    }

    #[test]
    fn only_files_not_parsed_yet_are_parsed_late_and_only_enough_of_them() {
        let large = ByteString::from("x".repeat(crate::parallel::MIN_PARALLEL_SIZE));
        let ahead = Engine::new(crate::helm::funcs::helm_funcs()).parse_apart(large.clone());
        let files = [
            ("c/templates/a.yaml", large.clone()),
            ("c/templates/b.yaml", large.clone()),
            ("c/templates/_c.tpl", large),
        ];
        assert_eq!(choose(&files, &[None, ahead, None]), [true, false, false]);
        let small = [("c/templates/a.yaml", ByteString::from("{{ .x }}"))];
        assert_eq!(choose(&small, &[None]), [false]);
    }

    fn files() -> Vec<(&'static str, ByteString)> {
        (0..40)
            .map(|i| {
                let text = if i % 7 == 3 {
                    "{{ if }}".to_string()
                } else {
                    format!("{{{{ .x{i} }}}}")
                };
                ("t", ByteString::from(text))
            })
            .collect()
    }

    #[test]
    fn every_file_is_taken_once_in_order_parsed_by_the_helper_or_left_to_the_render() {
        let files = files();
        let late: Vec<usize> = (0..files.len()).rev().collect();
        let taken = with_late_parses(&files, &late, |parses| {
            late.iter()
                .map(|&index| parses.take_next().map(|p| (index, p)))
                .collect::<Vec<_>>()
        });
        assert_eq!(taken.len(), files.len());
        for (index, parsed) in taken.into_iter().flatten() {
            // A parse is of the file the render reached, and broken files give none.
            assert_eq!(parsed.text(), &files[index].1);
            assert_ne!(index % 7, 3);
        }
    }

    #[test]
    fn a_render_that_returns_early_ends_with_its_result() {
        let files = files();
        let late: Vec<usize> = (0..files.len()).collect();
        // The helper is still parsing when the render returns: the scope ends all the same.
        let result = with_late_parses(&files, &late, |parses| {
            parses.take_next();
            "rendered"
        });
        assert_eq!(result, "rendered");
        assert!(with_late_parses(&files, &[], |parses| parses
            .parsed
            .is_none()));
    }
}
