//! Reading a run and doing something with each record, side by side on two threads.
//!
//! A 100,000-measurement report spends about as long reading the store as summing what
//! it reads, and an export as long reading as writing JSON. The store's connection
//! stays on the thread that opened it (it is not `Send`); what is done with the records
//! moves to a thread of its own, fed in order through a bounded queue, so on a machine
//! with two CPUs free the two overlap. The results are the same either way: one
//! consumer sees every record in the order the reader sent them.

use std::sync::mpsc::{sync_channel, Receiver};

/// Records handed over at once: one wake-up of the other thread per batch, not per
/// record (50,000 wake-ups were a tenth of an export's time).
const BATCH: usize = 64;
/// Batches in flight at most: a few MB of records with their telemetry rows.
const QUEUE: usize = 4;

/// Runs `consume` on a thread of its own over what `produce` (on this thread) hands to
/// its sink, in order, and returns what `consume` returns. The sink answers `false` once
/// `consume` has stopped taking records (it returned early, or panicked), so `produce`
/// can stop too; `consume`'s iterator ends when `produce` returns. A panic in `consume`
/// is resumed on this thread after `produce` returns.
pub fn beside<T, C>(
    produce: impl FnOnce(&mut dyn FnMut(T) -> bool),
    consume: impl FnOnce(&mut dyn Iterator<Item = T>) -> C + Send,
) -> C
where
    T: Send,
    C: Send,
{
    in_batches(
        produce,
        |batches| consume(&mut batches.into_iter().flatten()),
        None,
    )
}

/// [`beside`] for a consumer that only looks at each item (`look`, on a thread of its
/// own): the items come back to this thread and are dropped here, where they were made,
/// so the two threads do not contend for the allocator (freeing on the other thread
/// cost a tenth of an export's time). The first error `look` returns stops it, and the
/// sink then answers `false`; it is returned after `produce` returns.
pub fn look_beside<T, E>(
    produce: impl FnOnce(&mut dyn FnMut(T) -> bool),
    mut look: impl FnMut(&T) -> Result<(), E> + Send,
) -> Result<(), E>
where
    T: Send,
    E: Send,
{
    let (back, spent) = sync_channel::<Vec<T>>(QUEUE + 2);
    let consume = move |batches: Receiver<Vec<T>>| {
        for batch in batches {
            for item in &batch {
                look(item)?;
            }
            // Dropped on the other side; if it has gone, here.
            let _ = back.try_send(batch);
        }
        Ok(())
    };
    in_batches(produce, consume, Some(spent))
}

/// Runs `consume` on a thread of its own over the batches of what `produce` hands to
/// its sink, and returns what it returns; drops what comes back on `spent` here.
fn in_batches<T, C>(
    produce: impl FnOnce(&mut dyn FnMut(T) -> bool),
    consume: impl FnOnce(Receiver<Vec<T>>) -> C + Send,
    spent: Option<Receiver<Vec<T>>>,
) -> C
where
    T: Send,
    C: Send,
{
    let drop_spent = || {
        if let Some(spent) = &spent {
            while spent.try_recv().is_ok() {}
        }
    };
    let (tx, rx) = sync_channel::<Vec<T>>(QUEUE);
    std::thread::scope(|s| {
        let consumer = s.spawn(move || consume(rx));
        let mut batch = Vec::with_capacity(BATCH);
        let mut open = true;
        produce(&mut |item| {
            batch.push(item);
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                open = tx.send(full).is_ok();
                drop_spent();
            }
            open
        });
        if open && !batch.is_empty() {
            let _ = tx.send(batch);
        }
        // The end of the queue, for the consumer.
        drop(tx);
        let out = match consumer.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        drop_spent();
        out
    })
}

#[cfg(test)]
mod tests {
    use super::{beside, look_beside};

    #[test]
    fn the_consumer_sees_everything_in_order() {
        let got = beside(
            |sink| {
                for i in 0..10_000u32 {
                    assert!(sink(i));
                }
            },
            |items| items.collect::<Vec<u32>>(),
        );
        assert_eq!(got, (0..10_000).collect::<Vec<u32>>());
    }

    #[test]
    fn a_consumer_that_stops_early_stops_the_producer() {
        let mut sent = 0;
        let got = beside(
            |sink| {
                while sink(sent) {
                    sent += 1;
                }
            },
            |items| items.take(3).sum::<u64>(),
        );
        assert_eq!(got, 3);
        // It stopped within a queue's length of where the consumer did.
        let queued = (super::QUEUE + 2) * super::BATCH;
        assert!(sent < 3 + queued as u64, "{sent}");
    }

    #[test]
    fn a_looker_sees_everything_in_order_and_its_error_stops_the_producer() {
        let seen = std::sync::Mutex::new(Vec::new());
        let done = look_beside(
            |sink| {
                for i in 0..10_000u32 {
                    assert!(sink(i));
                }
            },
            |&i| {
                seen.lock().unwrap().push(i);
                Ok::<(), String>(())
            },
        );
        assert_eq!(done, Ok(()));
        assert_eq!(*seen.lock().unwrap(), (0..10_000).collect::<Vec<u32>>());
        let mut sent = 0u32;
        let stopped = look_beside(
            |sink| {
                while sink(sent) {
                    sent += 1;
                }
            },
            |&i| {
                if i == 100 {
                    Err(format!("stopped at {i}"))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(stopped, Err("stopped at 100".to_string()));
        let queued = (super::QUEUE + 2) * super::BATCH;
        assert!(sent < 101 + queued as u32, "{sent}");
    }

    #[test]
    #[should_panic(expected = "consumer failed")]
    fn a_consumers_panic_reaches_the_caller() {
        beside(
            |sink| {
                for _ in 0..1_000 {
                    if !sink(1u8) {
                        break;
                    }
                }
            },
            |items| {
                let _ = items.next();
                panic!("consumer failed")
            },
        );
    }
}
