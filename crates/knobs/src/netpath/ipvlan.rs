//! `ipvlan`: like `macvlan`, but the children share the parent's MAC address and the
//! driver switches by IP address (L2 mode, so ARP between them works).

use super::build::Built;
use super::macvlan::children;
use super::topology::{Endpoints, Plan};
use crate::error::KnobError;

pub(crate) fn build(b: &mut Built, plan: &Plan) -> Result<Endpoints, KnobError> {
    children(b, plan, &["ipvlan", "mode", "l2"])
}
