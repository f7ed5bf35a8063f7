//! One process measures a run at a time (PostgreSQL).
//!
//! The claim is a session-level advisory lock held on a connection of its own, which the
//! [`Claim`] owns: the server releases it when that session ends, however the process
//! ends (a killed process's socket closes), and it works across hosts sharing the server.

use postgres::Config;

use super::open::connect;
use crate::error::PgAt;
use crate::{Claim, Location, RunId, StoreError};

/// The first key of every claim (the two-int form of the lock, whose key space is apart
/// from the bigint form that schema changes use); the second is the run's number.
const CLAIM_SPACE: i32 = 0x706c_6162; // "plab"

pub(crate) fn take(config: &Config, db: &Location, run: RunId) -> Result<Claim, StoreError> {
    let mut client = connect(db, config)?;
    // Runs past 2^31 share a key with a smaller one: a spurious refusal at worst, never
    // two processes on one run.
    let key = run as i32;
    let got: bool = client
        .query_one("SELECT pg_try_advisory_lock($1, $2)", &[&CLAIM_SPACE, &key])
        .at(db)?
        .get(0);
    if got {
        Ok(Claim::holding(Held { client, key }))
    } else {
        Err(StoreError::Claimed {
            db: db.clone(),
            run,
        })
    }
}

/// The session that holds a claim. Dropped, it releases the lock before it closes: the
/// server would release it too when the session ends, but a moment later, so a process
/// that drops a claim and looks (or claims again) at once could still find it held.
struct Held {
    client: postgres::Client,
    key: i32,
}

impl Drop for Held {
    fn drop(&mut self) {
        // A failure leaves the release to the session's end, as when a process is killed.
        let _ = self.client.execute(
            "SELECT pg_advisory_unlock($1, $2)",
            &[&CLAIM_SPACE, &self.key],
        );
    }
}

/// Whether some session holds the claim on `run` in this database now, without taking it.
pub(crate) fn held(config: &Config, db: &Location, run: RunId) -> Result<bool, StoreError> {
    let mut client = connect(db, config)?;
    let key = run as i32;
    // The two-int form of an advisory lock shows as classid, objid and objsubid = 2.
    let held: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             AND classid::text::bigint = $1 AND objid::text::bigint = $2 AND objsubid = 2 \
             AND granted)",
            &[&i64::from(CLAIM_SPACE), &i64::from(key)],
        )
        .at(db)?
        .get(0);
    Ok(held)
}
