//! Launch bounds from the kernels' declarations: `cavity_device::kernel!`
//! emits, next to each entry point, a PTX comment
//! `// cavity-launch-bounds NAME THREADS BLOCKS` (Rust cannot attach
//! CUDA's `__launch_bounds__` to a function); [`apply`] adds the entry's
//! `.maxntid THREADS, 1, 1` and, when `BLOCKS` is not 0,
//! `.minnctapersm BLOCKS` directives after its parameter list, and drops
//! the comments.

use std::collections::HashMap;

/// The comment's prefix.
const MARKER: &str = "// cavity-launch-bounds ";

/// `ptx` with the declared launch bounds applied. Errors (the message
/// names the entry) when a comment is malformed, two comments give one
/// entry different bounds, or a comment names no entry point.
pub fn apply(ptx: &str) -> Result<String, String> {
    let mut bounds = HashMap::new();
    for line in ptx.lines() {
        if let Some(rest) = line.trim_start().strip_prefix(MARKER) {
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let parsed = match fields[..] {
                [name, threads, blocks] => threads
                    .parse::<u32>()
                    .ok()
                    .zip(blocks.parse::<u32>().ok())
                    .map(|b| (name, b)),
                _ => None,
            };
            let (name, b) =
                parsed.ok_or_else(|| format!("malformed launch-bounds comment '{line}'"))?;
            if bounds.insert(name, b).is_some_and(|old| old != b) {
                return Err(format!("two different launch bounds declared for '{name}'"));
            }
        }
    }
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    // The bounds of the entry whose header is being read: the directives
    // go between its parameter list and its body's opening brace.
    let mut pending = None;
    let mut applied = Vec::new();
    for line in ptx.lines() {
        if line.trim_start().starts_with(MARKER) {
            continue;
        }
        if let Some(rest) = line.split(".entry ").nth(1) {
            let name = rest.split('(').next().unwrap_or("").trim();
            pending = bounds.get(name).map(|&b| (name, b));
        }
        if line.trim_start().starts_with('{')
            && let Some((name, (threads, blocks))) = pending.take()
        {
            out.push_str(&format!(".maxntid {threads}, 1, 1\n"));
            if blocks > 0 {
                out.push_str(&format!(".minnctapersm {blocks}\n"));
            }
            applied.push(name);
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(orphan) = bounds.keys().find(|name| !applied.contains(name)) {
        return Err(format!(
            "launch bounds declared for '{orphan}', which is no entry point of the PTX"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::apply;

    const PTX: &str = "\
.version 8.0
// cavity-launch-bounds A 256 2
// cavity-launch-bounds B 128 0
.visible .entry A(
\t.param .u64 A_param_0
)
{
\tret;
}
.visible .entry B(
\t.param .u32 B_param_0
)
{
\tret;
}
.visible .entry C()
{
\tret;
}
// cavity-launch-bounds E 64 1
.visible .entry E()
{
\t{ // callseq 0
\t}
\tret;
}
";

    #[test]
    fn directives_follow_each_declared_entrys_parameters() {
        let out = apply(PTX).unwrap();
        assert!(!out.contains("cavity-launch-bounds"));
        assert!(out.contains("A_param_0\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n{"));
        assert!(out.contains("B_param_0\n)\n.maxntid 128, 1, 1\n{"));
        assert!(out.contains(".entry C()\n{"));
        assert!(out.contains(".entry E()\n.maxntid 64, 1, 1\n.minnctapersm 1\n{"));
        assert_eq!(out.matches(".maxntid").count(), 3);
    }

    #[test]
    fn a_bound_without_its_entry_is_an_error() {
        let ptx = PTX.replace(".entry B(", ".entry D(");
        let e = apply(&ptx).unwrap_err();
        assert!(e.contains("'B'"), "{e}");
        assert!(apply("// cavity-launch-bounds X 1\n").is_err());
        let twice = PTX.replace("B 128 0", "A 128 0");
        assert!(apply(&twice).unwrap_err().contains("'A'"));
    }
}
