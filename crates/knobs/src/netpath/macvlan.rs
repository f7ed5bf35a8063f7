//! `macvlan`: two macvlan children of one parent, in bridge mode so they reach each other
//! through the parent's switch without leaving it. The parent is one end of a veth pair
//! in a perflab namespace (a dummy would do, but kernels without CONFIG_DUMMY are common;
//! veth is needed by every other path anyway). `ipvlan` shares this layout.

use super::build::Built;
use super::cmd::ip_in;
use super::topology::{address_up, link, up, Endpoints, Plan};
use crate::error::KnobError;

pub(crate) fn build(b: &mut Built, plan: &Plan) -> Result<Endpoints, KnobError> {
    children(b, plan, &["macvlan", "mode", "bridge"])
}

/// Builds the parent and two children of link type `kind[0]` (with `kind[1..]` as its
/// options), one moved into each end's namespace.
pub(crate) fn children(b: &mut Built, plan: &Plan, kind: &[&str]) -> Result<Endpoints, KnobError> {
    let (srv, cli, sw) = (plan.ns("srv"), plan.ns("cli"), plan.ns("sw"));
    b.netns(&srv)?;
    b.netns(&cli)?;
    b.netns(&sw)?;
    // The parent needs carrier for its children to be up, and a veth has carrier only
    // while its peer is up.
    b.veth(&sw, "up0", &sw, "up1")?;
    up(&sw, "up1")?;
    up(&sw, "up0")?;
    for (ns, dev) in [(&srv, "srv0"), (&cli, "cli0")] {
        b.create(link(ns, dev), || {
            let mut args = vec![
                "link", "add", "link", "up0", "name", dev, "netns", ns, "type",
            ];
            args.extend_from_slice(kind);
            ip_in(&sw, &args).map(drop)
        })?;
    }
    address_up(&srv, "srv0", plan.server())?;
    address_up(&cli, "cli0", plan.client())?;
    Ok(Endpoints::pair(plan, &srv, &cli, "srv0", "cli0"))
}
