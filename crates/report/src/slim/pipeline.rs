//! Reading a run and writing out each record, side by side on two threads.
//!
//! An export of 50,000 measurements spends about as long reading the store as writing
//! JSON. The store's connection stays on the thread that opened it (it is not `Send`);
//! the writing moves to a thread of its own, fed in order through a bounded queue, so on
//! a machine with two CPUs free the two overlap. The output is the same either way. (A
//! report's fold gained nothing from this here: it keeps every record, so it stays on
//! the reading thread.)

use std::sync::mpsc::sync_channel;

/// Records handed over at once: one wake-up of the other thread per batch, not per
/// record (50,000 wake-ups were a tenth of an export's time).
const BATCH: usize = 64;
/// Batches in flight at most: a few MB of records with their telemetry rows.
const QUEUE: usize = 4;

/// Runs `look` on a thread of its own over each item `produce` (on this thread) hands to
/// its sink, in order. The items come back to this thread and are dropped here, where
/// they were made, so the two threads do not contend for the allocator (freeing them on
/// the other thread cost a tenth of an export's time). The first error `look` returns
/// stops it, and the sink then answers `false` so that `produce` can stop too; the
/// error is returned after `produce` returns, and a panic in `look` is resumed here.
pub fn look_beside<T, E>(
    produce: impl FnOnce(&mut dyn FnMut(T) -> bool),
    mut look: impl FnMut(&T) -> Result<(), E> + Send,
) -> Result<(), E>
where
    T: Send,
    E: Send,
{
    let (tx, batches) = sync_channel::<Vec<T>>(QUEUE);
    let (back, spent) = sync_channel::<Vec<T>>(QUEUE + 2);
    let drop_spent = || while spent.try_recv().is_ok() {};
    std::thread::scope(|s| {
        let looker = s.spawn(move || {
            for batch in batches {
                for item in &batch {
                    look(item)?;
                }
                // Dropped on the other side; if it has gone, here.
                let _ = back.try_send(batch);
            }
            Ok(())
        });
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
        // The end of the queue, for the looker.
        drop(tx);
        let out = match looker.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        drop_spent();
        out
    })
}

#[cfg(test)]
mod tests {
    use super::look_beside;

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
    fn a_lookers_panic_reaches_the_caller() {
        let _ = look_beside(
            |sink| {
                for _ in 0..1_000 {
                    if !sink(1u8) {
                        break;
                    }
                }
            },
            |_| -> Result<(), ()> { panic!("consumer failed") },
        );
    }
}
