//! `bridge`: each end's veth peer is a port of a Linux bridge. The bridge lives in a third
//! perflab namespace, so nothing at all is created in the host's.

use super::build::Built;
use super::cmd::ip_in;
use super::topology::{address_up, link, up, Endpoints, Plan};
use crate::error::KnobError;

pub(crate) fn build(b: &mut Built, plan: &Plan) -> Result<Endpoints, KnobError> {
    let (srv, cli, sw) = (plan.ns("srv"), plan.ns("cli"), plan.ns("sw"));
    b.netns(&srv)?;
    b.netns(&cli)?;
    b.netns(&sw)?;
    b.create(link(&sw, "br0"), || {
        // STP off (the default, stated here since it decides whether ports forward at
        // once) and no multicast snooping: the path carries unicast measurement traffic.
        ip_in(
            &sw,
            &[
                "link",
                "add",
                "br0",
                "type",
                "bridge",
                "stp_state",
                "0",
                "mcast_snooping",
                "0",
            ],
        )
        .map(drop)
    })?;
    up(&sw, "br0")?;
    for (ns, port, dev) in [(&srv, "p-srv", "srv0"), (&cli, "p-cli", "cli0")] {
        b.veth(&sw, port, ns, dev)?;
        ip_in(&sw, &["link", "set", "dev", port, "master", "br0"])?;
        up(&sw, port)?;
    }
    address_up(&srv, "srv0", plan.server())?;
    address_up(&cli, "cli0", plan.client())?;
    Ok(Endpoints::pair(plan, &srv, &cli, "srv0", "cli0"))
}
