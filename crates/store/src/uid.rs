//! Run uids: a run's identity across databases.

/// A fresh uid: 128 bits from the operating system's random source as 32 lowercase hex
/// digits. Two runs created anywhere never share one, so a copy can find its run by it.
pub fn new_uid() -> String {
    let mut bytes = [0u8; 16];
    // The kernel's getrandom(2) does not fail once the pool is initialised, which it is
    // long before anyone runs perflab; a failure here means a broken system.
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The uid a new run gets: the one it brings (a copied run), else a fresh one.
pub(crate) fn uid_for(given: Option<&str>) -> String {
    given.map_or_else(new_uid, str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_32_hex_digits_and_differ() {
        let a = new_uid();
        let b = new_uid();
        assert_eq!(a.len(), 32);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
        assert_eq!(uid_for(Some("x")), "x");
    }
}
