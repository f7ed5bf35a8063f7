//! `veth`: a veth pair between the server and the client namespace, the shortest path
//! that crosses a namespace boundary (the container case).

use super::build::Built;
use super::topology::{address_up, Endpoints, Plan};
use crate::error::KnobError;

pub(crate) fn build(b: &mut Built, plan: &Plan) -> Result<Endpoints, KnobError> {
    let (srv, cli) = (plan.ns("srv"), plan.ns("cli"));
    b.netns(&srv)?;
    b.netns(&cli)?;
    b.veth(&srv, "srv0", &cli, "cli0")?;
    address_up(&srv, "srv0", plan.server())?;
    address_up(&cli, "cli0", plan.client())?;
    Ok(Endpoints::pair(plan, &srv, &cli, "srv0", "cli0"))
}
