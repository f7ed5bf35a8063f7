//! Reading a run and doing something with each record, side by side on two threads.
//!
//! A 100,000-measurement report spends about as long reading the store as summing what
//! it reads, and an export as long reading as writing JSON. The store's connection
//! stays on the thread that opened it (it is not `Send`); what is done with the records
//! moves to a thread of its own, fed in order through a bounded queue, so on a machine
//! with two CPUs free the two overlap. The results are the same either way: one
//! consumer sees every record in the order the reader sent them.

use std::sync::mpsc::sync_channel;

/// Records in flight at most: a few MB of records with their telemetry rows.
const QUEUE: usize = 256;

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
    let (tx, rx) = sync_channel::<T>(QUEUE);
    std::thread::scope(|s| {
        let consumer = s.spawn(move || consume(&mut rx.into_iter()));
        produce(&mut |item| tx.send(item).is_ok());
        // The end of the queue, for the consumer's iterator.
        drop(tx);
        match consumer.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::beside;

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
        assert!(sent < 3 + super::QUEUE as u64 + 2, "{sent}");
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
