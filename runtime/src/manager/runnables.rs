//! What the manager runs, as controller-runtime's manager runs its runnable groups: every part of
//! the process is a [`Task`] (a name, a [`Group`] and a lazy main loop), and [`Runnables`]
//! starts each when its group may start, then supervises them all until shutdown.
//!
//! The groups say what a runnable needs before it starts: nothing (the servers, the webhook
//! server and its certificates, leader election itself, ring membership) or leadership (the
//! project's controllers and storage migrations, on the elected replica only; at once without
//! `--leader-elect`). What must be ready before the replica is ready (the controllers' caches)
//! registers with the manager's [`Readiness`](super::health::Readiness) when it is set up.

use std::time::Duration;

use anyhow::anyhow;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::leader::LeaderElectionError;
use super::{GRACEFUL_SHUTDOWN_TIMEOUT, Runnable, RunnableFuture, Shared};

/// The group of a runnable: when it starts, like controller-runtime's runnable groups (servers,
/// webhooks, others) and `LeaderElectionRunnable::NeedLeaderElection`. Started in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// The health probes and the metrics server, on every replica, at once.
    Servers,
    /// The webhook server and what keeps it serving (its certificates, the registrations of
    /// `--webhook-url`), on every replica, at once: the API server calls any replica.
    Webhooks,
    /// What every replica runs at once besides: leader election, ring membership and the
    /// controllers of a sharded manager (which wait for the replica to join the ring).
    Replica,
    /// What runs on the elected replica only, once it leads: the project's controllers and
    /// storage migrations.
    Leader,
}

/// One runnable of the manager, set up: its main loop does nothing before it is polled.
pub struct Task {
    /// Its name, in the manager's logs and errors.
    pub name: String,
    pub group: Group,
    /// One of the project's runnables (controllers, migrations, its own): the leader's Lease (and
    /// a member's) is released only once all of them have stopped, so that no other replica runs
    /// them while they finish.
    pub project: bool,
    pub run: RunnableFuture,
}

impl Task {
    /// A runnable of the manager's own.
    pub fn new(name: impl Into<String>, group: Group, run: RunnableFuture) -> Self {
        Task {
            name: name.into(),
            group,
            project: false,
            run,
        }
    }

    /// A runnable the project gave the manager, set up with `shared`: on the leader, unless it
    /// says it needs no leader election.
    pub fn of_project(runnable: &dyn Runnable, shared: &Shared) -> Self {
        let group = if runnable.needs_leader_election() {
            Group::Leader
        } else {
            Group::Replica
        };
        Task {
            name: runnable.name().to_owned(),
            group,
            project: true,
            run: runnable.start(shared),
        }
    }
}

/// The tokens that order the runnables: leadership, the end of the project's runnables, and
/// shutdown.
#[derive(Clone, Debug)]
pub struct Gates {
    /// Cancelled once this replica leads, at once without leader election: the [`Group::Leader`]
    /// runnables start then.
    pub leading: CancellationToken,
    /// Cancelled once every runnable of the project has stopped: the Leases may go then.
    pub project_stopped: CancellationToken,
    /// Cancelled when the manager shuts down: on a signal, or when a runnable fails.
    pub shutdown: CancellationToken,
}

impl Gates {
    pub fn new(shutdown: CancellationToken) -> Self {
        Gates {
            leading: CancellationToken::new(),
            project_stopped: CancellationToken::new(),
            shutdown,
        }
    }
}

/// What each runnable returns: its name for messages, and how it ended.
pub type TaskResult = (String, anyhow::Result<()>);

/// The runnables of a manager, started together by [`Runnables::run`].
pub struct Runnables {
    tasks: Vec<Task>,
    gates: Gates,
}

impl Runnables {
    pub fn new(gates: Gates) -> Self {
        Runnables {
            tasks: Vec::new(),
            gates,
        }
    }

    pub fn add(&mut self, task: Task) {
        self.tasks.push(task);
    }

    pub fn extend(&mut self, tasks: impl IntoIterator<Item = Task>) {
        self.tasks.extend(tasks);
    }

    /// Starts every runnable when its group may start, by group, and supervises them until they
    /// have all stopped after shutdown, which starts on a signal or as soon as one fails or stops
    /// on its own; returns the first failure.
    pub async fn run(self) -> anyhow::Result<()> {
        let Self { mut tasks, gates } = self;
        tasks.sort_by_key(|task| task.group);
        // Every project runnable holds a sender; the receiver sees the channel close once all
        // of them have ended, which is when the Leases may be released.
        let (running, mut all_stopped) = mpsc::channel::<()>(1);
        let project_stopped = gates.project_stopped.clone();
        tokio::spawn(async move {
            all_stopped.recv().await;
            project_stopped.cancel();
        });
        let mut set = JoinSet::new();
        for task in tasks {
            set.spawn(gated(task, &gates, &running));
        }
        drop(running);
        supervise(set, &gates.shutdown).await
    }
}

/// `task`, started when its group may start, holding `running` while it runs if it is the
/// project's.
fn gated(
    task: Task,
    gates: &Gates,
    running: &mpsc::Sender<()>,
) -> impl Future<Output = TaskResult> + Send + 'static {
    let Task {
        name,
        group,
        project,
        run,
    } = task;
    let running = project.then(|| running.clone());
    let (leading, shutdown) = (gates.leading.clone(), gates.shutdown.clone());
    async move {
        let _running = running;
        // The main loop is lazy: nothing watches or writes before it is polled.
        let result = match group {
            Group::Leader => tokio::select! {
                () = shutdown.cancelled() => Ok(()),
                () = leading.cancelled() => run.await,
            },
            _ => run.await,
        };
        (name, result)
    }
}

/// Waits for all tasks to finish after shutdown, which starts on a signal or as soon as a task
/// fails or stops on its own (tasks are meant to run until shutdown). Returns the first failure.
async fn supervise(
    mut tasks: JoinSet<TaskResult>,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    // Once shutdown starts, the remaining tasks get a deadline.
    let deadline = shutdown_deadline(shutdown, GRACEFUL_SHUTDOWN_TIMEOUT);
    tokio::pin!(deadline);
    let mut first_error = None;
    loop {
        let next = tokio::select! {
            next = tasks.join_next() => next,
            () = &mut deadline => {
                tasks.abort_all();
                return Err(first_error.unwrap_or_else(|| {
                    anyhow!("graceful shutdown took longer than {GRACEFUL_SHUTDOWN_TIMEOUT:?}")
                }));
            }
        };
        let Some(joined) = next else {
            if shutdown.is_cancelled() {
                break;
            }
            // Nothing to run (no controllers, probes disabled): idle until asked to stop.
            shutdown.cancelled().await;
            continue;
        };
        let (task, result) = match joined {
            Ok(finished) => finished,
            // The task panicked (the panic message is already logged) or was aborted.
            Err(join_error) => ("a task".to_owned(), Err(anyhow!(join_error))),
        };
        if let Err(error) = &result
            && error
                .downcast_ref::<LeaderElectionError>()
                .is_some_and(LeaderElectionError::is_lost)
        {
            // Another replica may be reconciling already: stop at once, like controller-runtime
            // (which skips the graceful shutdown when leadership is lost), and exit with an error
            // so that Kubernetes restarts this pod as a standby.
            tracing::error!("{error:#}; stopping at once");
            shutdown.cancel();
            tasks.abort_all();
            return result.map_err(|error| error.context(format!("{task} failed")));
        }
        if let Some(error) = failure(&task, result, shutdown) {
            tracing::error!("{error:#}; shutting down");
            shutdown.cancel();
            first_error.get_or_insert(error);
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => {
            tracing::info!("shutdown complete");
            Ok(())
        }
    }
}

/// Why the end of `task` with `result` fails the manager: an error, or an end before shutdown.
fn failure(
    task: &str,
    result: anyhow::Result<()>,
    shutdown: &CancellationToken,
) -> Option<anyhow::Error> {
    match result {
        Err(error) => Some(error.context(format!("{task} failed"))),
        Ok(()) if !shutdown.is_cancelled() => Some(anyhow!("{task} stopped unexpectedly")),
        Ok(()) => None,
    }
}

/// Completes `timeout` after shutdown has started.
async fn shutdown_deadline(shutdown: &CancellationToken, timeout: Duration) {
    shutdown.cancelled().await;
    tokio::time::sleep(timeout).await;
}
