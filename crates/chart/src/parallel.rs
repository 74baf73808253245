//! Order-keeping parallel work over the cores of the machine, for the independent steps of a
//! render: [`map_ordered`] parses template files on all cores, [`pipeline`] reads the YAML of
//! rendered files on other cores while the next templates execute.

use std::sync::{Mutex, PoisonError, mpsc};

/// Most threads a map uses (the calling one included).
pub const MAX_THREADS: usize = 4;

/// Below this much work (in the caller's size units, e.g. bytes) a thread costs more than it
/// saves.
pub const MIN_PARALLEL_SIZE: usize = 64 * 1024;

/// `items.iter().map(f).collect()`, with the items cut into consecutive runs of about equal
/// `size`, one per core (at most [`MAX_THREADS`]), each mapped on its own thread and the
/// results joined in order. Small inputs and single-core machines stay on the calling thread.
/// A panic in `f` is passed on to the caller.
pub fn map_ordered<T, R, S, F>(items: &[T], size: S, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    S: Fn(&T) -> usize,
    F: Fn(&T) -> R + Sync,
{
    let map = |chunk: &[T]| -> Vec<R> { chunk.iter().map(&f).collect() };
    let sizes: Vec<usize> = items.iter().map(size).collect();
    let total: usize = sizes.iter().sum();
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_THREADS)
        .min(items.len());
    if threads < 2 || total < MIN_PARALLEL_SIZE {
        return map(items);
    }
    let chunks = split_by_size(items, &sizes, threads, total);
    std::thread::scope(|scope| {
        let mut chunks = chunks.into_iter();
        let own = chunks.next().unwrap_or_default();
        let handles: Vec<_> = chunks.map(|chunk| scope.spawn(|| map(chunk))).collect();
        let mut out = map(own);
        for handle in handles {
            match handle.join() {
                Ok(results) => out.extend(results),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

/// Runs `produce` on the calling thread while other threads (one fewer than the cores, at
/// most [`MAX_THREADS`] − 1) apply `work` to each job it submits, so that the two overlap.
/// Returns what `produce` returned and the jobs' results in submission order. On one core the
/// jobs run on the calling thread as they are submitted. A panic in `work` is passed on.
pub fn pipeline<J, R, P>(
    work: impl Fn(J) -> R + Sync,
    produce: impl FnOnce(&mut dyn FnMut(J)) -> P,
) -> (P, Vec<R>)
where
    J: Send,
    R: Send,
{
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .saturating_sub(1)
        .min(MAX_THREADS - 1);
    if workers == 0 {
        let mut results = Vec::new();
        let produced = produce(&mut |job| results.push(work(job)));
        return (produced, results);
    }
    let (sender, receiver) = mpsc::channel::<(usize, J)>();
    let receiver = Mutex::new(receiver);
    std::thread::scope(|scope| {
        let worker = || {
            let mut done = Vec::new();
            loop {
                let next = receiver
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .recv();
                let Ok((index, job)) = next else {
                    return done;
                };
                done.push((index, work(job)));
            }
        };
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
        let mut submitted = 0;
        let produced = produce(&mut |job| {
            // The workers outlive the producer, so the channel is open while it runs.
            let _ = sender.send((submitted, job));
            submitted += 1;
        });
        drop(sender);
        let mut results: Vec<(usize, R)> = Vec::with_capacity(submitted);
        for handle in handles {
            match handle.join() {
                Ok(done) => results.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        results.sort_unstable_by_key(|(index, _)| *index);
        (produced, results.into_iter().map(|(_, r)| r).collect())
    })
}

/// Cuts `items` into at most `parts` consecutive runs of about `total / parts` each.
fn split_by_size<'i, T>(
    items: &'i [T],
    sizes: &[usize],
    parts: usize,
    total: usize,
) -> Vec<&'i [T]> {
    let target = total.div_ceil(parts);
    let mut chunks = Vec::with_capacity(parts);
    let (mut start, mut size) = (0, 0);
    for (i, item_size) in sizes.iter().enumerate() {
        size += item_size;
        if size >= target && chunks.len() + 1 < parts {
            chunks.push(&items[start..=i]);
            start = i + 1;
            size = 0;
        }
    }
    chunks.push(&items[start..]);
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items_whatever_the_split() {
        let items: Vec<usize> = (0..1000).collect();
        let doubled = map_ordered(&items, |_| MIN_PARALLEL_SIZE / 10, |i| i * 2);
        assert_eq!(doubled, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        let small = map_ordered(&items, |_| 1, |i| i + 1);
        assert_eq!(small[999], 1000);
    }

    #[test]
    fn pipeline_results_follow_the_submission_order() {
        let (count, results) = pipeline(
            |i: usize| i * 3,
            |submit| {
                for i in 0..500 {
                    submit(i);
                }
                500
            },
        );
        assert_eq!(count, 500);
        assert_eq!(results, (0..500).map(|i| i * 3).collect::<Vec<_>>());
    }

    #[test]
    fn runs_cover_every_item_once_in_order() {
        let items: Vec<usize> = (0..10).collect();
        let sizes = [5, 1, 1, 1, 1, 1, 1, 1, 1, 20];
        for parts in 1..=4 {
            let chunks = split_by_size(&items, &sizes, parts, 33);
            assert!(chunks.len() <= parts);
            let joined: Vec<usize> = chunks.concat();
            assert_eq!(joined, items, "{parts} parts");
        }
    }
}
