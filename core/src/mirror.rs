//! The attribution's side of the builder: what it knows of the records, told in messages.
//!
//! The attributor reads a few fields of the records (interval stamps, workers, the worker
//! → GPU map) and writes the C++ durations. The builder tells it of every change of what it
//! reads, in file order ([`Msg`]), and it keeps its own copy ([`Mirror`]): the two sides
//! share no memory, so a big feed runs the attribution on a third thread ([`Link`]) while
//! the builder applies the next lines, and it sees every record exactly as it would have on
//! the builder's thread. Its columns go back to the builder's when a run is finished.

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::attribution::{Attributor, Records};
use crate::columns::{self as col, Columns};
use crate::timing::Values;

/// A change the attribution is told of, in file order.
#[derive(Clone, Copy)]
pub enum Msg {
    /// Record `i` names worker `w`.
    Worker { i: u32, w: i32 },
    /// Record `i`'s interval started (GPU_START) at `at`.
    Started { i: u32, at: f64, picked_up: f64 },
    /// Record `i`'s interval ended (GPU_END) at `at`.
    Ended { i: u32, at: f64 },
    /// Worker `w` runs on GPU `g` (`first`: unless the map already has `w`).
    Map { w: i64, g: i64, first: bool },
    /// The next C++ timing line, with the stamps around it.
    Line {
        stage: i8,
        vals: Values,
        lo: f64,
        hi: f64,
    },
    /// A test's way to make the attribution fail.
    #[cfg(test)]
    Panic,
}

/// The GPU of `worker` by a worker → GPU map, else by `workers_per_gpu`, else 0.
pub fn gpu_of(map: &BTreeMap<i64, i64>, workers_per_gpu: Option<i64>, worker: i64) -> i64 {
    if worker < 0 {
        return 0;
    }
    if let Some(&g) = map.get(&worker) {
        return g;
    }
    match workers_per_gpu {
        Some(n) if n > 0 => worker / n,
        _ => 0,
    }
}

/// The records as the attribution knows them: the stamps and workers of the records it was
/// told of, the attributed columns it writes, and the worker → GPU map.
pub struct Mirror {
    pub cols: Columns,
    worker_gpu: BTreeMap<i64, i64>,
    workers_per_gpu: Option<i64>,
}

impl Records for Mirror {
    fn cols(&self) -> &Columns {
        &self.cols
    }
    fn record_count(&self) -> usize {
        self.cols.worker.len()
    }
    fn cols_mut(&mut self) -> &mut Columns {
        &mut self.cols
    }
    fn gpu_of(&self, worker: i64) -> i64 {
        gpu_of(&self.worker_gpu, self.workers_per_gpu, worker)
    }
    fn ordinals_known(&self) -> bool {
        !self.worker_gpu.is_empty()
    }
}

/// The attributor and what it knows of the records.
pub struct Attribution {
    pub attributor: Attributor,
    pub mirror: Mirror,
}

impl Attribution {
    pub fn new(workers_per_gpu: Option<i64>) -> Self {
        Attribution {
            attributor: Attributor::default(),
            mirror: Mirror {
                cols: Columns::default(),
                worker_gpu: BTreeMap::new(),
                workers_per_gpu,
            },
        }
    }

    /// Take the next change.
    pub fn take(&mut self, msg: Msg) {
        let m = &mut self.mirror;
        match msg {
            Msg::Worker { i, w } => {
                m.cols.grow_attributed(i as usize + 1);
                m.cols.worker[i as usize] = w;
            }
            Msg::Started { i, at, picked_up } => {
                let i = i as usize;
                m.cols.grow_attributed(i + 1);
                m.cols.f[col::GPU_START][i] = at;
                self.attributor.started(m, i, picked_up);
            }
            Msg::Ended { i, at } => {
                let i = i as usize;
                m.cols.grow_attributed(i + 1);
                m.cols.f[col::GPU_END][i] = at;
                self.attributor.ended(m, i);
            }
            Msg::Map { w, g, first } => {
                if first {
                    m.worker_gpu.entry(w).or_insert(g);
                } else {
                    m.worker_gpu.insert(w, g);
                }
            }
            Msg::Line {
                stage,
                vals,
                lo,
                hi,
            } => self.attributor.push(m, stage, vals, lo, hi),
            #[cfg(test)]
            Msg::Panic => panic!("the attribution failed (a test)"),
        }
    }
}

/// Messages a link holds before the builder waits (batches of them).
const BATCHES_AHEAD: usize = 8;

/// An attribution running on its own thread, fed batches of messages.
pub struct Link {
    full: mpsc::SyncSender<Vec<Msg>>,
    empty: Mutex<mpsc::Receiver<Vec<Msg>>>, // a Mutex: the builder is shared (Sync)
    thread: JoinHandle<Box<Attribution>>,
}

impl Link {
    /// Run `attribution` on a new thread. Err gives it back when no thread can be started.
    pub fn start(attribution: Box<Attribution>) -> Result<Link, Box<Attribution>> {
        // the thread takes it from here: a thread that cannot be started leaves it
        let slot = Arc::new(Mutex::new(Some(attribution)));
        let (full, batches) = mpsc::sync_channel::<Vec<Msg>>(BATCHES_AHEAD);
        let (spent, empty) = mpsc::channel::<Vec<Msg>>();
        let theirs = Arc::clone(&slot);
        let started = std::thread::Builder::new()
            .name("cuzk-tui-attribute".into())
            .spawn(move || {
                let taken = theirs.lock().unwrap_or_else(PoisonError::into_inner).take();
                let mut attribution = taken.expect("the attribution");
                for mut batch in batches {
                    for msg in batch.drain(..) {
                        attribution.take(msg);
                    }
                    let _ = spent.send(batch); // the builder may have stopped: fine
                }
                attribution
            });
        match started {
            Ok(thread) => Ok(Link {
                full,
                empty: Mutex::new(empty),
                thread,
            }),
            Err(_) => {
                let back = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
                Err(back.expect("the attribution, never taken"))
            }
        }
    }

    /// Hand the messages over (`msgs` is left empty, to be filled again). False when the
    /// thread has stopped (it panicked: `stop` says so).
    pub fn send(&self, msgs: &mut Vec<Msg>) -> bool {
        let empty = self.empty.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = empty.try_recv().unwrap_or_default();
        next.clear();
        let batch = std::mem::replace(msgs, next);
        self.full.send(batch).is_ok()
    }

    /// Wait for the messages sent to be taken; the attribution comes back, or what its
    /// thread panicked with.
    pub fn stop(self) -> std::thread::Result<Box<Attribution>> {
        drop(self.full);
        self.thread.join()
    }
}
