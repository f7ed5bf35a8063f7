//! The shared libraries a program needs, from `ldd`'s output, so that the guest's copy
//! of `perflab` finds them in the initramfs at the same paths as on the host.

use std::io::BufRead;
use std::path::PathBuf;

/// The absolute library paths in `ldd` output: `libc.so.6 => /lib/…/libc.so.6 (0x…)`
/// and the loader's own `/lib64/ld-linux-x86-64.so.2 (0x…)`. The vDSO and a line
/// saying a library was `not found` carry no path; the latter is returned as an error,
/// since the program would not start in the guest either.
pub fn parse(reader: impl BufRead) -> Result<Vec<PathBuf>, String> {
    let mut libs = Vec::new();
    for line in reader.lines().map_while(Result::ok) {
        let line = line.trim();
        if line.contains("statically linked") || line.contains("not a dynamic executable") {
            return Ok(Vec::new());
        }
        let target = match line.split_once("=>") {
            Some((name, rest)) => {
                let rest = rest.trim();
                if rest.starts_with("not found") {
                    return Err(format!("ldd: {} not found", name.trim()));
                }
                rest
            }
            None => line,
        };
        let path = target.split_whitespace().next().unwrap_or("");
        if path.starts_with('/') && !libs.iter().any(|l: &PathBuf| l.as_os_str() == path) {
            libs.push(PathBuf::from(path));
        }
    }
    Ok(libs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_debian_ldd_output() {
        let out = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                   \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f98)\n\
                   \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f98)\n\
                   \t/lib64/ld-linux-x86-64.so.2 (0x00007f98)\n";
        let libs = parse(out.as_bytes()).unwrap();
        assert_eq!(
            libs,
            [
                "/lib/x86_64-linux-gnu/libgcc_s.so.1",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn static_programs_need_nothing_and_missing_libraries_are_named() {
        assert!(parse("\tnot a dynamic executable\n".as_bytes())
            .unwrap()
            .is_empty());
        assert!(parse("\tstatically linked\n".as_bytes())
            .unwrap()
            .is_empty());
        let e = parse("\tlibfoo.so.1 => not found\n".as_bytes()).unwrap_err();
        assert!(e.contains("libfoo.so.1"), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics(text in ".{0,300}") {
            let _ = parse(text.as_bytes());
        }
    }
}
