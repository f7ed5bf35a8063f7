//! An `env` value the lab sealed (named like a secret, or a URL with a password: see
//! `perflab_core::secret::seal_env`) arrives here as its fingerprint. This process has
//! the value when it sealed it; a run resumed by another process takes it from perflab's
//! own environment, under the same name, once it matches the stored fingerprint.

use perflab_core::secret;

/// The value the command gets for `name`, given the stored `value`.
pub(super) fn value(
    name: &str,
    stored: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    if !secret::is_fingerprint(stored) {
        return Ok(stored.to_string());
    }
    if let Some(v) = secret::unseal(stored) {
        return Ok(v);
    }
    match env(name) {
        Some(v) if secret::matches(&v, stored) => Ok(v),
        Some(_) => Err(format!(
            "env {name}: perflab's own {name} is not the value this run was started with \
             (its fingerprint is {stored}){}",
            secret::key_note()
        )),
        None => Err(format!(
            "env {name}: this run stored only the fingerprint of its value ({stored}), not the \
             value: set {name} in perflab's environment to go on"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_come_from_this_process_or_the_environment() {
        let none = |_: &str| None;
        assert_eq!(value("HUGE", "1", none).as_deref(), Ok("1"));
        let sealed = secret::seal("tok-sealed-here");
        assert_eq!(
            value("API_TOKEN", &sealed, none).as_deref(),
            Ok("tok-sealed-here")
        );
        // A resumed run: only the fingerprint.
        let fp = secret::fingerprint("tok-from-elsewhere");
        let e = value("API_TOKEN", &fp, none).unwrap_err();
        assert!(e.contains("set API_TOKEN") && !e.contains("tok-"), "{e}");
        let given = |_: &str| Some("tok-from-elsewhere".to_string());
        assert_eq!(
            value("API_TOKEN", &fp, given).as_deref(),
            Ok("tok-from-elsewhere")
        );
        let wrong = |_: &str| Some("another".to_string());
        let e = value("API_TOKEN", &fp, wrong).unwrap_err();
        assert!(e.contains("not the value") && !e.contains("another"), "{e}");
    }
}
