//! Running engine work from Python: off the GIL, on a worker thread, while the calling thread
//! wakes every 50 ms to deliver Ctrl-C (and the optional progress callback). An interrupt
//! stops the run at its next batch of output and raises `KeyboardInterrupt`.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// What a worker sees: whether to stop, and a counter of finished work for progress.
pub struct Control {
    /// Set when the caller was interrupted: stop at the next chance.
    pub cancel: AtomicBool,
    /// Work finished so far (walkers on the CPU).
    pub done: AtomicU64,
}

impl Control {
    /// Whether the run should stop.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Runs `work` on a worker thread with the GIL released. `progress(done, total)` is called
/// (with the GIL) about every 50 ms when given. A Python exception there, or a pending signal
/// (Ctrl-C), cancels the work; its exception is raised once the worker has stopped.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    total: u64,
    progress: Option<&Py<PyAny>>,
    work: impl FnOnce(&Control) -> PyResult<T> + Send,
) -> PyResult<T> {
    let control = Control { cancel: AtomicBool::new(false), done: AtomicU64::new(0) };
    let mut raised: Option<PyErr> = None;
    let finished = AtomicBool::new(false);
    let result = py.detach(|| {
        std::thread::scope(|s| {
            // The worker wakes this thread when it is done: a short call returns at once, not
            // at the next 50 ms tick.
            let waiting = std::thread::current();
            let control = &control;
            let finished = &finished;
            let worker = s.spawn(move || {
                // Set even when the work panics: the join below then reports it.
                struct Done<'a>(&'a AtomicBool, std::thread::Thread);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::Release);
                        self.1.unpark();
                    }
                }
                let _done = Done(finished, waiting);
                work(control)
            });
            let mut last = u64::MAX;
            while !finished.load(Ordering::Acquire) {
                std::thread::park_timeout(Duration::from_millis(50));
                if raised.is_some() || finished.load(Ordering::Acquire) {
                    continue;
                }
                let checked = Python::attach(|py| -> PyResult<()> {
                    py.check_signals()?;
                    if let Some(cb) = progress {
                        let done = control.done.load(Ordering::Relaxed);
                        if done != last {
                            last = done;
                            cb.call1(py, (done, total))?;
                        }
                    }
                    Ok(())
                });
                if let Err(e) = checked {
                    control.cancel.store(true, Ordering::Relaxed);
                    raised = Some(e);
                }
            }
            worker.join()
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    match result {
        Ok(r) => {
            if let (Ok(_), Some(cb)) = (&r, progress) {
                cb.call1(py, (total, total))?;
            }
            r
        }
        Err(_) => Err(pyo3::exceptions::PyRuntimeError::new_err("the worker thread panicked (a bug in wayfarer: please report it)")),
    }
}
