//! `loopback`: client and server on the `lo` of one new namespace, so the measurement
//! shares nothing with the host's loopback (its traffic, its netfilter rules).

use std::net::Ipv4Addr;

use super::build::Built;
use super::topology::{Endpoints, Plan};
use crate::error::KnobError;

pub(crate) fn build(b: &mut Built, plan: &Plan) -> Result<Endpoints, KnobError> {
    let ns = plan.ns("lo");
    b.netns(&ns)?;
    let mut ends = Endpoints::pair(plan, &ns, &ns, "lo", "lo");
    ends.server_addr = Ipv4Addr::LOCALHOST;
    ends.client_addr = Ipv4Addr::LOCALHOST;
    Ok(ends)
}
