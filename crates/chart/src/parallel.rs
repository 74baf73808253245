//! Order-keeping parallel work over the cores of the machine, for the independent steps of a
//! render: [`map_ordered`] parses template files on all cores, [`pipeline`] reads the YAML of
//! rendered files on other cores while the next templates execute.

use std::cmp::Reverse;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError, mpsc};

/// Most threads a map uses (the calling one included).
pub const MAX_THREADS: usize = 4;

/// Below this much work (in the caller's size units, e.g. bytes) a thread costs more than it
/// saves.
pub const MIN_PARALLEL_SIZE: usize = 64 * 1024;

/// The cores this process may use, as the standard library counts them (affinity and cgroup
/// quota), counted once: counting reads the cgroup's files, and a render asks several times.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// `items.iter().map(f).collect()` on up to one thread per core (at most [`MAX_THREADS`]):
/// each thread takes the largest item no thread has taken yet, until none is left, and the
/// results are put back in the items' order. Taking items as threads come free, largest first,
/// ends the threads together even when one starts late or items of one size cost unevenly (a
/// fixed split into runs of equal size left one core idle for a fifth of a chart's parsing).
/// Small inputs and single-core machines stay on the calling thread. A panic in `f` is passed
/// on to the caller.
pub fn map_ordered<T, R, S, F>(items: &[T], size: S, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    S: Fn(&T) -> usize,
    F: Fn(&T) -> R + Sync,
{
    let sizes: Vec<usize> = items.iter().map(size).collect();
    if sizes.iter().sum::<usize>() < MIN_PARALLEL_SIZE {
        return items.iter().map(f).collect();
    }
    let threads = cores().min(MAX_THREADS).min(items.len());
    if threads < 2 {
        return items.iter().map(f).collect();
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| Reverse(sizes[i]));
    let taken = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        while let Some(&i) = order.get(taken.fetch_add(1, Ordering::Relaxed)) {
            done.push((i, f(&items[i])));
        }
        done
    };
    let mut results = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut results = work();
        for handle in handles {
            match handle.join() {
                Ok(done) => results.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        results
    });
    results.sort_unstable_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Runs `produce` on the calling thread while other threads (one fewer than the cores, at
/// most [`MAX_THREADS`] − 1) apply `work` to each job it submits, so that the two overlap;
/// once `produce` returns, the calling thread works through the jobs left with them.
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
    let workers = cores().saturating_sub(1).min(MAX_THREADS - 1);
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
        // What is still queued is shared with the workers rather than waited for.
        let mut results: Vec<(usize, R)> = Vec::with_capacity(submitted);
        results.extend(worker());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items_whatever_the_split() {
        let items: Vec<usize> = (0..1000).collect();
        // Sizes that differ, so that items are taken out of order.
        let doubled = map_ordered(&items, |i| MIN_PARALLEL_SIZE / 10 + i % 7, |i| i * 2);
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
    fn the_producer_takes_on_jobs_left_when_it_is_done() {
        let workers = cores().saturating_sub(1).min(MAX_THREADS - 1);
        if workers == 0 {
            return;
        }
        // Every job but the last waits for the last: once the workers hold one each, only the
        // producer is free to run it.
        let last = workers;
        let last_done = std::sync::atomic::AtomicBool::new(false);
        let (_, results) = pipeline(
            |i: usize| {
                if i == last {
                    last_done.store(true, Ordering::SeqCst);
                } else {
                    let start = std::time::Instant::now();
                    while !last_done.load(Ordering::SeqCst) {
                        if start.elapsed() > std::time::Duration::from_secs(10) {
                            return false;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
                true
            },
            |submit| {
                for i in 0..=last {
                    submit(i);
                }
            },
        );
        assert_eq!(results, vec![true; last + 1]);
    }
}
