//! `wayfarer bench --counts`: instructions, branch mispredictions and cache misses per step.
//!
//! Each cell's walk runs in a child `wayfarer walk` under callgrind (valgrind) with its cache
//! and branch simulators, collecting inside the engine's walk loop only (`run_chunk`: graph
//! loading, tables and output are left out). The counts are exact and repeat from run to run
//! whatever else the machine does, so a change's effect can be tracked to the instruction; the
//! simulated caches are callgrind's model of this machine's (first level and last level), not
//! hardware counters, which this kind of machine does not expose.

use std::path::Path;
use std::process::Command;

/// What callgrind counted in one walk phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepCounts {
    /// Steps the walk made (from the child's summary).
    pub steps: u64,
    /// Instructions executed.
    pub instructions: u64,
    /// First-level data cache misses (reads and writes).
    pub d1_misses: u64,
    /// Last-level data cache misses (reads and writes).
    pub ll_misses: u64,
    /// Mispredicted branches (conditional and indirect).
    pub mispredicts: u64,
}

impl StepCounts {
    /// `x` per step (0 without steps).
    pub fn per_step(&self, x: u64) -> f64 {
        if self.steps == 0 { 0.0 } else { x as f64 / self.steps as f64 }
    }
}

/// Whether valgrind can be run, with its version.
pub fn valgrind_version() -> Option<String> {
    let out = Command::new("valgrind").arg("--version").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs `wayfarer walk ARGS` (this executable) under callgrind, counting inside the walk loop
/// only, and returns the counts. `args` are the walk's arguments after `walk`; `--threads 1` is
/// added (callgrind serializes threads anyway, and one thread's count is the per-step cost).
pub fn count_walk(args: &[String], scratch: &Path) -> Result<StepCounts, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let out_file = scratch.join("callgrind.out");
    let output = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg("--toggle-collect=*run_chunk*")
        .arg("--cache-sim=yes")
        .arg("--branch-sim=yes")
        .arg(&exe)
        .arg("walk")
        .args(args)
        .args(["--threads", "1"])
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        return Err(format!(
            "`wayfarer walk {}` under callgrind failed: {}",
            args.join(" "),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    let _ = std::fs::remove_file(&out_file);
    parse(&format!("{stdout}\n{stderr}"))
}

/// The counts from a child's output: callgrind's `Events` and `Collected` lines and the walk
/// summary's `N steps`.
pub fn parse(text: &str) -> Result<StepCounts, String> {
    let after = |line: &str, key: &str| line.split_once(key).map(|(_, r)| r.split_whitespace().map(str::to_string).collect::<Vec<_>>());
    let events = text.lines().find_map(|l| after(l, "Events    :")).ok_or("callgrind printed no `Events` line")?;
    let collected = text.lines().find_map(|l| after(l, "Collected :")).ok_or("callgrind printed no `Collected` line")?;
    if events.len() != collected.len() {
        return Err(format!("callgrind's events ({}) and counts ({}) disagree", events.len(), collected.len()));
    }
    let get = |name: &str| -> Result<u64, String> {
        let i = events.iter().position(|e| e == name).ok_or_else(|| format!("callgrind did not count `{name}`"))?;
        collected[i].parse::<u64>().map_err(|_| format!("callgrind's count for `{name}` is not a number: `{}`", collected[i]))
    };
    let steps = text
        .lines()
        .find_map(|l| {
            let (_, rest) = l.split_once(" walkers, ")?;
            rest.split_once(" steps")?.0.trim().parse::<u64>().ok()
        })
        .ok_or("the walk printed no summary with its steps")?;
    Ok(StepCounts {
        steps,
        instructions: get("Ir")?,
        d1_misses: get("D1mr")? + get("D1mw")?,
        ll_misses: get("DLmr")? + get("DLmw")?,
        mispredicts: get("Bcm")? + get("Bim")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_output_and_the_summary_parse_into_counts() {
        let text = "deepwalk: 20000 walkers, 1068960 steps in 6.758 s (0.16 M steps/s), backend cpu (1 threads)\n\
                    ==1== Events    : Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n\
                    ==1== Collected : 549037773 117571706 49745015 79 4272313 80604 73 3785 46 50960368 424083 1089160 5\n";
        let c = parse(text).unwrap();
        assert_eq!(c, StepCounts { steps: 1068960, instructions: 549037773, d1_misses: 4352917, ll_misses: 3831, mispredicts: 424088 });
        assert!((c.per_step(c.instructions) - 513.62).abs() < 0.01);
    }

    #[test]
    fn missing_counts_are_errors_that_say_what_is_missing() {
        assert!(parse("no valgrind here").unwrap_err().contains("Events"));
        let no_branches = "x: 1 walkers, 5 steps in 0 s\n==1== Events    : Ir\n==1== Collected : 10\n";
        assert!(parse(no_branches).unwrap_err().contains("D1mr"));
        let no_summary = "==1== Events    : Ir\n==1== Collected : 10\n";
        assert!(parse(no_summary).unwrap_err().contains("summary"));
    }
}
