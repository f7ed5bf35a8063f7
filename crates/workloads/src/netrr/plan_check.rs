//! What the plan checks of a netrr point before a run exists: the `hogs` CPU list, the
//! `peer`'s form and, with a peer, that a token is there to open a session with. Each of
//! these would otherwise fail every measurement of a stored run.

use perflab_core::{ParamError, Params, SecretValue};

use super::error::NetrrError;
use super::peer_addr::peer_name;

pub(super) fn validate(params: &Params) -> Result<(), String> {
    let text = |e: ParamError| e.to_string();
    hog_cpus(params.str("hogs").map_err(text)?)?;
    let peer = params.str("peer").map_err(text)?.trim();
    if !peer.is_empty() {
        peer_name(peer)?;
    }
    Ok(())
}

/// With a peer, the token its session needs: `token` in `params`, else the
/// environment's; `Err` when there is none (`token` is the parameter's value).
pub(super) fn check_token(
    params: &Params,
    token: impl FnOnce(&SecretValue) -> Result<String, NetrrError>,
) -> Result<(), String> {
    let text = |e: ParamError| e.to_string();
    let peer = params.str("peer").map_err(text)?.trim();
    if peer.is_empty() {
        return Ok(());
    }
    let token = token(&params.secret("token").map_err(text)?).map_err(|e| e.to_string())?;
    if token.is_empty() {
        return Err(no_token(peer));
    }
    Ok(())
}

/// The refusal of a peer without a token.
pub(super) fn no_token(peer: &str) -> String {
    format!(
        "peer={peer} needs the token its `perflab serve` printed: give token= or set \
         PERFLAB_SERVE_TOKEN"
    )
}

/// The `hogs` CPU list (empty text: none).
pub(super) fn hog_cpus(text: &str) -> Result<Vec<u32>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    perflab_sys::cpulist::parse_cpu_list(text)
        .map_err(|e| format!("hogs={text:?} is not a CPU list: {}", e.reason))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use perflab_core::Workload;

    use crate::netrr::Netrr;

    fn check(given: &[(&str, &str)]) -> Result<(), String> {
        let given: BTreeMap<String, String> = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let p = perflab_core::resolve("netrr", Netrr.info().params, &given).unwrap();
        Netrr.validate(&p)
    }

    /// Each of these passed the plan and failed every measurement of a stored run.
    #[test]
    fn hogs_and_peer_are_checked_with_the_plan() {
        for (k, v, why) in [
            ("hogs", "x", "hogs=\"x\" is not a CPU list"),
            ("hogs", "0-99999", "is too large"),
            ("peer", "999.1.1.1:1", "\"999.1.1.1\" is not an IP address"),
            ("peer", "host:", "empty"),
        ] {
            let e = check(&[(k, v), ("token", "t0ken")]).unwrap_err();
            assert!(e.contains(why) && !e.contains('\n'), "{k}={v}: {e}");
        }
        assert_eq!(check(&[("hogs", "0-1"), ("peer", "")]), Ok(()));
        assert_eq!(
            check(&[("peer", "10.0.0.2:7700"), ("token", "t0ken")]),
            Ok(())
        );
    }

    #[test]
    fn a_peer_without_a_token_is_refused_with_the_plan() {
        if std::env::var_os("PERFLAB_SERVE_TOKEN").is_some() {
            eprintln!("skipped: PERFLAB_SERVE_TOKEN is set here, so a token is there");
            return;
        }
        let e = check(&[("peer", "10.0.0.2")]).unwrap_err();
        assert!(e.contains("needs the token"), "{e}");
    }
}
