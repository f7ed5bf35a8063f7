//! `perflab list`: the plug-ins and studies this perflab knows, read from the registries'
//! descriptors.

use perflab_core::Descriptor;

pub fn run() -> anyhow::Result<i32> {
    println!("Studies (perflab run STUDY):");
    for (name, text) in perflab_lab::presets::PRESETS {
        let desc = perflab_lab::ExperimentSpec::from_toml(name, text)
            .map(|s| s.description)
            .unwrap_or_default();
        println!("  {name:<12} {desc}");
    }
    println!("\nWorkloads (perflab run --workload NAME -p param=value):");
    for w in perflab_workloads::registry() {
        let info = w.info();
        line(info);
        for p in info.params {
            let default = p
                .default
                .map(|d| format!(" [default: {d}]"))
                .unwrap_or_default();
            println!(
                "      {:<12} {} ({}){default}",
                p.name,
                p.help,
                p.kind_text()
            );
        }
    }
    println!("\nMonitors (--monitors a,b):");
    for m in perflab_monitors::registry() {
        line(m.descriptor);
    }
    println!("\nParsers (exec -p parser=NAME, perflab import --parser NAME):");
    for p in perflab_parsers::registry() {
        line(p.descriptor);
    }
    println!(
        "  {:<12} a `perflab export --format json` document (import only: the run comes \
         back whole)",
        super::import_json::NAME
    );
    println!("\nKnobs (--variant NAME:knob=value):");
    for k in perflab_knobs::registry() {
        line(k.descriptor);
    }
    Ok(0)
}

/// `  NAME         first line of its help`.
fn line(d: &Descriptor) {
    println!("  {:<12} {}", d.name, d.summary());
}
