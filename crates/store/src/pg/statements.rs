//! The statements a session has prepared, by their text: a record runs the same dozen
//! statements each time, and preparing one costs a round trip to the server.

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::{GenericClient, Statement};

use crate::error::PgAt;
use crate::{Location, StoreError};

/// Statements prepared on one session, by their text.
pub(crate) type Prepared = RefCell<HashMap<String, Statement>>;

/// The statement for `sql` on the session `c` belongs to, prepared once per session.
pub(crate) fn prepare(
    c: &mut impl GenericClient,
    prepared: &Prepared,
    db: &Location,
    sql: &str,
) -> Result<Statement, StoreError> {
    if let Some(s) = prepared.borrow().get(sql) {
        return Ok(s.clone());
    }
    let s = c.prepare(sql).at(db)?;
    prepared.borrow_mut().insert(sql.to_string(), s.clone());
    Ok(s)
}
