//! Sealing a spec's secret parameters (`ParamKind::Secret`, e.g. netrr's `token`, and the
//! secret-looking items of a `ParamKind::Env` list, e.g. exec's `env`) before it is
//! expanded: every value a run stores, prints or reports then holds the secret's
//! fingerprint, and the secret stays in this process (see `perflab_core::secret`).

use perflab_core::{secret, ParamKind, ParamSpec};

use crate::error::{LabError, Result};
use crate::spec::{ExperimentSpec, ParamInput, Scalar};

/// `spec` with each secret parameter's value (in the parameters, the variants' overrides
/// and the quick overrides) replaced by its fingerprint. A value that is not valid for
/// its parameter is an input error that quotes only the fingerprint.
pub fn seal_spec(spec: &ExperimentSpec, params: &[ParamSpec]) -> Result<ExperimentSpec> {
    let mut out = spec.clone();
    for p in params {
        let hide: fn(&str) -> String = match p.kind {
            ParamKind::Secret { .. } => secret::seal,
            ParamKind::Env { .. } => secret::seal_env,
            _ => continue,
        };
        let seal = |s: &mut Scalar| -> Result<()> {
            let text = s.text();
            // What was sealed before (a resumed run's spec) was checked then; its
            // fingerprints may be longer than the secrets they stand for.
            if !is_sealed(&text) {
                p.parse(&text).map_err(|e| LabError::Input(e.to_string()))?;
            }
            *s = Scalar::Str(hide(&text));
            Ok(())
        };
        let mut inputs: Vec<&mut ParamInput> = out.params.get_mut(p.name).into_iter().collect();
        if let Some(q) = out.quick.as_mut() {
            inputs.extend(q.params.get_mut(p.name));
        }
        for input in inputs {
            match input {
                ParamInput::One(s) => seal(s)?,
                ParamInput::List(l) => l.iter_mut().try_for_each(seal)?,
                // Partners are CPU numbers, never a secret's form; leave them for the
                // parameter's own check to refuse.
                ParamInput::Partners(_) => {}
            }
        }
        for v in &mut out.variants {
            if let Some(s) = v.params.get_mut(p.name) {
                seal(s)?;
            }
        }
    }
    Ok(out)
}

/// Whether `text` is a fingerprint, or a `K=V;K=V` list with one.
fn is_sealed(text: &str) -> bool {
    secret::is_fingerprint(text)
        || text.split(';').any(|item| {
            item.split_once('=')
                .is_some_and(|(_, v)| secret::is_fingerprint(v.trim()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{QuickSpec, VariantSpec};

    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "token",
            role: perflab_core::ParamRole::Plain,
            help: "",
            kind: ParamKind::Secret { max_len: 16 },
            default: Some(""),
        },
        ParamSpec {
            name: "peer",
            role: perflab_core::ParamRole::Plain,
            help: "",
            kind: ParamKind::Text { max_len: 64 },
            default: Some(""),
        },
        ParamSpec {
            name: "env",
            role: perflab_core::ParamRole::Plain,
            help: "",
            kind: ParamKind::Env { max_len: 256 },
            default: Some(""),
        },
    ];

    fn one(s: &str) -> ParamInput {
        ParamInput::One(Scalar::Str(s.into()))
    }

    #[test]
    fn secrets_are_sealed_everywhere_in_a_spec_and_nothing_else_is() {
        let mut spec = ExperimentSpec::from_toml("x.toml", "name='a'\nworkload='netrr'").unwrap();
        spec.params.insert("token".into(), one("SECRET1"));
        spec.params.insert("peer".into(), one("10.0.0.2"));
        spec.quick = Some(QuickSpec {
            repetitions: None,
            params: [("token".to_string(), one("SECRET2"))].into(),
        });
        spec.variants.push(VariantSpec {
            name: "v".into(),
            knobs: Default::default(),
            params: [("token".to_string(), Scalar::Str("SECRET3".into()))].into(),
        });
        spec.params.insert(
            "env".into(),
            ParamInput::List(vec![
                Scalar::Str("HUGE=1;API_TOKEN=SECRET4".into()),
                Scalar::Str("DB=postgres://u:SECRET5@h/d;X=1".into()),
            ]),
        );
        let sealed = seal_spec(&spec, PARAMS).unwrap();
        let json = serde_json::to_string(&sealed).unwrap();
        assert!(!json.contains("SECRET"), "{json}");
        assert!(json.contains("HUGE=1;API_TOKEN=hmac:"), "{json}");
        assert!(json.contains(";X=1"), "{json}");
        assert_eq!(
            secret::unseal(&secret::fingerprint("SECRET4")).as_deref(),
            Some("SECRET4")
        );
        assert!(json.contains(&secret::fingerprint("SECRET1")), "{json}");
        assert!(json.contains("10.0.0.2"), "{json}");
        assert_eq!(
            secret::unseal(&secret::fingerprint("SECRET3")).as_deref(),
            Some("SECRET3")
        );
        // Sealing a sealed spec changes nothing.
        assert_eq!(seal_spec(&sealed, PARAMS).unwrap(), sealed);
    }

    #[test]
    fn a_bad_secret_is_refused_without_quoting_it() {
        let mut spec = ExperimentSpec::from_toml("x.toml", "name='a'\nworkload='netrr'").unwrap();
        spec.params
            .insert("token".into(), one("SECRET-TOO-LONG-FOR-16"));
        let e = seal_spec(&spec, PARAMS).unwrap_err().to_string();
        assert!(
            e.contains("longer than 16 bytes") && !e.contains("SECRET"),
            "{e}"
        );
    }
}
