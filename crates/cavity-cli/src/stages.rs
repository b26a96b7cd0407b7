//! The stage clock: every command's last line of timings (issue 55 item 8),
//! each stage's seconds in the order they ran, the stages on the device
//! named with it, the whole command, and the device memory the command
//! held at most.
//!
//! ```text
//! stages    read 0.041 s, start 0.212 s, normals 0.004 s on NVIDIA H200, write 0.030 s; whole command 0.291 s; peak device memory 23.5 MiB
//! ```

use std::time::Instant;

use cavity::backend::Backend;
use cavity::units::bytes;

use crate::device::GivenBack;

/// A stage: its name, seconds, and the device it ran on (`None`: the
/// host).
struct Stage {
    name: String,
    seconds: f64,
    on: Option<String>,
}

/// The clock of one command: started with it, a stage ended at each mark.
pub(crate) struct Clock {
    whole: Instant,
    last: Instant,
    stages: Vec<Stage>,
    /// Whether a GPU ran the command, and what it held at most
    /// ([`Clock::read_peak`]); `None` before a device is read.
    peak: Option<(bool, Option<u64>)>,
}

impl Clock {
    /// The clock of a command starting now.
    pub(crate) fn start() -> Clock {
        let now = Instant::now();
        Clock {
            whole: now,
            last: now,
            stages: Vec::new(),
            peak: None,
        }
    }

    /// Ends the stage `name` that ran on the host since the last mark;
    /// its seconds.
    pub(crate) fn host(&mut self, name: &str) -> f64 {
        self.end(name, None)
    }

    /// Ends the stage `name` that ran on `backend` since the last mark
    /// (its uploads, downloads and any host part in between included);
    /// its seconds.
    pub(crate) fn device(&mut self, name: &str, backend: &Backend) -> f64 {
        self.end(name, Some(backend.name()))
    }

    /// Ends two stages that ran at once since the last mark: `first`,
    /// which took `seconds` by its own measure, and `second`, counted as
    /// what it added after `first` ended (the rest since the mark, at
    /// least 0).
    pub(crate) fn beside(&mut self, first: &str, seconds: f64, second: &str) {
        let now = Instant::now();
        let rest = (now - self.last).as_secs_f64() - seconds;
        self.last = now;
        for (name, seconds) in [(first, seconds), (second, rest.max(0.0))] {
            self.stages.push(Stage {
                name: name.to_string(),
                seconds,
                on: None,
            });
        }
    }

    /// A part of `seconds` of the stage just ended that a library
    /// measured inside it (the kernels of a device stage): listed after
    /// the stage, not counted again in the whole.
    pub(crate) fn part(&mut self, name: &str, seconds: f64) {
        self.stages.push(Stage {
            name: name.to_string(),
            seconds,
            on: None,
        });
    }

    /// Reads what `backend` held at most and gives it back on another
    /// thread ([`GivenBack`]), so that the output is written meanwhile.
    pub(crate) fn release(&mut self, backend: Backend) -> GivenBack {
        self.read_peak(&backend);
        GivenBack::new(backend)
    }

    /// Reads what `backend` held at most (for a backend the command keeps
    /// to its end).
    pub(crate) fn read_peak(&mut self, backend: &Backend) {
        let on_gpu = !matches!(backend, Backend::Cpu(_));
        self.peak = Some((on_gpu, backend.peak_device_memory().ok().flatten()));
    }

    fn end(&mut self, name: &str, on: Option<String>) -> f64 {
        let now = Instant::now();
        let seconds = (now - self.last).as_secs_f64();
        self.last = now;
        self.stages.push(Stage {
            name: name.to_string(),
            seconds,
            on,
        });
        seconds
    }

    /// The line of the stages, the whole command and the peak device
    /// memory (see the [module](self)).
    pub(crate) fn line(&self) -> String {
        let stages: Vec<String> = self
            .stages
            .iter()
            .map(|s| match &s.on {
                Some(device) => format!("{} {:.3} s on {device}", s.name, s.seconds),
                None => format!("{} {:.3} s", s.name, s.seconds),
            })
            .collect();
        format!(
            "stages    {}; whole command {:.3} s; {}",
            stages.join(", "),
            self.whole.elapsed().as_secs_f64(),
            device_memory(self.peak)
        )
    }
}

/// The words for the device memory of a command: `peak` is whether a GPU
/// ran it and the bytes it held at once at most (`None` when no device
/// was opened).
pub(crate) fn device_memory(peak: Option<(bool, Option<u64>)>) -> String {
    match peak {
        None => "no device opened".to_string(),
        Some((false, _)) => "no device memory (CPU backend)".to_string(),
        Some((true, None)) => "peak device memory not known (no memory pools)".to_string(),
        Some((true, Some(b))) => format!("peak device memory {}", bytes(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_lists_stages_in_order_with_the_whole() {
        let mut c = Clock::start();
        c.host("read");
        c.part("kernels", 0.25);
        c.host("write");
        let line = c.line();
        assert!(line.starts_with("stages    read "), "{line}");
        let (read, kernels, write) = (
            line.find("read").unwrap(),
            line.find("kernels 0.250 s").unwrap(),
            line.find("write").unwrap(),
        );
        assert!(read < kernels && kernels < write, "{line}");
        assert!(line.contains("; whole command "), "{line}");
        assert!(line.ends_with("no device opened"), "{line}");
        assert_eq!(
            device_memory(Some((true, Some(3 << 20)))),
            "peak device memory 3.0 MiB"
        );
        assert_eq!(
            device_memory(Some((false, None))),
            "no device memory (CPU backend)"
        );
    }
}
